import Logging
import PostgresNIO
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Synchronization

/// A connection whose queries end when it closes: the listener's, and each publishing lane's.
///
/// postgres-nio writes a query to the channel without a write promise: a query written just as
/// the channel closes (the server killed the backend, the heartbeat closed it) is dropped without
/// its result ever being failed, and awaiting it would hang for ever — and with it the listener,
/// which then never reconnects, or a publishing lane and every `send` queued on it. So each
/// query runs in a task of its own, and the caller waits for it or for the connection's close,
/// whichever comes first. One close callback per connection (not one per query), so a
/// long-lived connection accumulates nothing.
final class GuardedConnection: Sendable {
    let connection: PostgresConnection

    private struct State {
        var closed = false
        /// Fails a waiting caller with `Closed` (resumes its continuation once).
        var waiters: [Int: @Sendable () -> Void] = [:]
        var next = 0
    }
    private let state = NIOLockedValueBox(State())

    /// The connection closed while a query waited for its answer.
    struct Closed: Error, CustomStringConvertible {
        var description: String { "the connection closed while a query waited for its answer" }
    }

    init(_ connection: PostgresConnection) {
        self.connection = connection
        connection.closeFuture.whenComplete { [self] _ in closed() }
    }

    /// Whether the connection is closed.
    var isClosed: Bool { connection.isClosed }

    /// Runs `query`; throws `Closed` when the connection closes first.
    func query(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await run { connection in try await connection.query(query, logger: logger) }
    }

    /// Runs `work` on the connection — a statement and the reading of its rows — and returns its
    /// result; throws `Closed` when the connection closes first (the work's task then fails too,
    /// with the connection).
    func run<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let id = state.withLockedValue { state in
            state.next += 1
            return state.next
        }
        let taken = ResumedOnce()  // the continuation is resumed once: by the work or by the close
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let fail: @Sendable () -> Void = {
                if taken.take() { continuation.resume(throwing: Closed()) }
            }
            let open = state.withLockedValue { state in
                if state.closed { return false }
                state.waiters[id] = fail
                return true
            }
            guard open else { return fail() }
            Task { [connection] in
                let result: Result<T, any Error>
                do {
                    result = .success(try await work(connection))
                } catch {
                    result = .failure(error)
                }
                _ = self.state.withLockedValue { $0.waiters.removeValue(forKey: id) }
                if taken.take() { continuation.resume(with: result) }
            }
        }
    }

    /// Fails every waiting query; later ones fail at once.
    private func closed() {
        let waiters = state.withLockedValue { state in
            state.closed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for fail in waiters { fail() }
    }
}

/// A flag that one caller takes: whoever takes it first resumes a continuation.
private final class ResumedOnce: Sendable {
    private let taken = Atomic(false)
    /// True for the first caller only.
    func take() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}
