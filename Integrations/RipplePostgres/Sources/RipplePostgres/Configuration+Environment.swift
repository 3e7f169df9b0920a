import Foundation
import PostgresNIO

extension PostgresConnection.Configuration {
    /// A configuration from libpq's environment variables.
    ///
    /// `PGHOST` (a host name, or a directory holding the server's socket; default `localhost` —
    /// unlike libpq, which tries its socket directory first),
    /// `PGPORT` (default 5432), `PGUSER` (default the login name), `PGPASSWORD`, `PGDATABASE`
    /// (default the user name). `PGSSLMODE` may be unset, `disable`, `allow` or `prefer`: TLS is
    /// not used; modes that demand it are refused — build a configuration with TLS yourself.
    ///
    ///     let config = try PostgresConnection.Configuration.environment()
    ///
    /// - Throws: `EnvironmentError` naming the variable that is wrong.
    public static func environment(_ variables: [String: String] = ProcessInfo.processInfo.environment) throws -> Self {
        let portText = variables["PGPORT"].flatMap { $0.isEmpty ? nil : $0 } ?? "5432"
        guard let port = Int(portText), (1...65_535).contains(port) else {
            throw EnvironmentError(variable: "PGPORT", problem: "'\(portText)' is not a port number")
        }
        if let mode = variables["PGSSLMODE"], !["", "disable", "allow", "prefer"].contains(mode) {
            throw EnvironmentError(variable: "PGSSLMODE", problem: "'\(mode)' needs TLS, which the environment configuration does not set up")
        }
        let user = variables["PGUSER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? variables["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? NSUserName()
        let password = variables["PGPASSWORD"]
        let database = variables["PGDATABASE"].flatMap { $0.isEmpty ? nil : $0 } ?? user
        let host = variables["PGHOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        if host.hasPrefix("/") {
            return Self(unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return Self(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }
}

/// A libpq environment variable with a value that cannot be used.
public struct EnvironmentError: Error, CustomStringConvertible, Sendable {
    /// The variable, for example `PGPORT`.
    public var variable: String
    /// What is wrong with it.
    public var problem: String
    /// For example `PGPORT: 'abc' is not a port number`.
    public var description: String { "\(variable): \(problem)" }
}
