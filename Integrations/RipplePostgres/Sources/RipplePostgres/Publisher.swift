import Logging
import PostgresNIO

/// The connection `send` writes through: opened on the first send, kept, and replaced after it
/// fails. One connection keeps each instance's sends in the order they are called; PostgreSQL
/// orders them with every other instance's at commit.
actor Publisher {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let topic: String
    private var connection: PostgresConnection?
    private var opening: Task<PostgresConnection, any Error>?
    /// Set by `close()`: no connection is opened after it.
    private var closed = false

    init(topic: String, configuration: PostgresConnection.Configuration, logger: Logger) {
        self.topic = topic
        self.configuration = configuration
        self.logger = logger
    }

    /// The open connection, or a new one (creating the tables if missing).
    /// - Throws: `PostgresReplayError.stopped` after `close()`.
    func current() async throws -> PostgresConnection {
        if closed { throw PostgresReplayError.stopped(topic: topic) }
        if let connection, !connection.isClosed { return connection }
        if let opening { return try await opening.value }
        let task = Task { [configuration, logger] in
            let connection = try await Connections.open(configuration, logger: logger)
            do {
                try await Schema.ensure(on: connection, logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            return connection
        }
        opening = task
        defer { opening = nil }
        let connection = try await task.value
        if closed {  // closed while opening: this one is not kept
            try? await connection.close()
            throw PostgresReplayError.stopped(topic: topic)
        }
        self.connection = connection
        return connection
    }

    /// Drops `failed` if it is still the current connection: the next send opens a new one.
    func discard(_ failed: PostgresConnection) async {
        guard connection === failed else { return }
        connection = nil
        try? await failed.close()
    }

    /// A subject let go without `run()` ending still closes its connection; the close handler
    /// keeps the connection alive until the channel is closed (postgres-nio checks that).
    deinit {
        if let connection {
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }
    }

    /// Closes the connection for good (one being opened is closed once open); later sends throw.
    func close() async {
        closed = true
        let closing = connection
        connection = nil
        try? await closing?.close()
    }
}

/// Opening connections.
enum Connections {
    private static let ids = Atomic<Int>(0)

    /// Opens a connection on the shared event loop group.
    static func open(_ configuration: PostgresConnection.Configuration, logger: Logger) async throws -> PostgresConnection {
        let id = ids.wrappingAdd(1, ordering: .relaxed).newValue
        return try await PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(),
            configuration: configuration, id: id, logger: logger)
    }

    /// `configuration` with `application_name` set, so `pg_stat_activity` names the connection.
    static func named(_ configuration: PostgresConnection.Configuration, _ name: String) -> PostgresConnection.Configuration {
        var named = configuration
        named.options.additionalStartupParameters.removeAll { $0.0 == "application_name" }
        named.options.additionalStartupParameters.append(("application_name", String(name.prefix(63))))
        return named
    }
}

import Synchronization
