import Logging
import PostgresNIO
import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Text from users or the wire, made safe before it reaches a log line or a connection's startup
/// parameters.
enum Untrusted {
    /// `text` escaped to printable ASCII, at most `limit` characters of it (then `…`): a newline
    /// becomes `\n`, a NUL `\0`, anything else outside printable ASCII `\u{…}`, so no log line can
    /// be forged and no length is unbounded.
    static func escaped(_ text: some StringProtocol, limit: Int = 64) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            count += 1
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            case " "..."~": result.unicodeScalars.append(scalar)
            default: result += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return result
    }

    /// `name` as an `application_name`: printable ASCII only (anything else becomes `?`, as
    /// PostgreSQL itself shows it), at most 63 bytes (the server's limit). A NUL would otherwise end
    /// the parameter on the wire and start another one (`search_path`, …).
    static func applicationName(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars.prefix(63) {
            result.unicodeScalars.append((" "..."~").contains(scalar) ? scalar : "?")
        }
        return result
    }

    /// The error to end `run()` with when `error` will not go away by reconnecting (privileges,
    /// a missing table that is not to be created, authentication); nil for errors worth a retry.
    static func permanent(_ error: any Error) -> PostgresReplayError? {
        if let error = error as? PostgresReplayError, case .refused = error { return error }
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return nil }
        let permanent = state == "42501"  // insufficient_privilege
            || state == "42P01"  // undefined_table
            || state == "3D000"  // invalid_catalog_name: the database does not exist
            || state.hasPrefix("28")  // invalid authorization, password
        guard permanent else { return nil }
        return .refused(sqlState: state, message: error.serverInfo?[.message] ?? "")
    }

    /// One line for an error: the server's message and SQLSTATE for a `PSQLError` (whose own
    /// description hides them), its underlying error, or the error's description.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return escaped(message, limit: 500) + state
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// Logs rejected input at most once per `interval`, with how many were rejected since the last
/// line: a flood of forged notifications cannot flood the log.
final class RateLimitedLog: Sendable {
    private struct State {
        var last: ContinuousClock.Instant?
        var suppressed = 0
    }
    private let state = NIOLockedValueBox(State())
    private let interval: Duration

    init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Returns how many were suppressed since the last line when a line is due now, else nil.
    func due() -> Int? {
        let now = ContinuousClock.now
        return state.withLockedValue { state in
            if let last = state.last, now - last < interval {
                state.suppressed += 1
                return nil
            }
            let suppressed = state.suppressed
            state.last = now
            state.suppressed = 0
            return suppressed
        }
    }
}
