import Logging
import PostgresNIO
import Synchronization

/// The listener's connection, whose queries end when it closes.
///
/// postgres-nio writes a query to the channel without a write promise: a query written just as
/// the channel closes (the server killed the backend, the heartbeat closed it) is dropped without
/// its result ever being failed, and awaiting it would hang for ever — and with it the listener,
/// which then never reconnects. So each query runs in a task of its own, and the caller waits for
/// it or for the connection's close, whichever comes first. One close callback per connection
/// (not one per query), so a long-lived connection accumulates nothing.
final class GuardedConnection: Sendable {
    let connection: PostgresConnection

    private struct State {
        var closed = false
        var waiters: [Int: CheckedContinuation<PostgresRowSequence, any Error>] = [:]
        var next = 0
    }
    private let state = Mutex(State())

    /// The connection closed while a query waited for its answer.
    struct Closed: Error, CustomStringConvertible {
        var description: String { "the listener's connection closed" }
    }

    init(_ connection: PostgresConnection) {
        self.connection = connection
        connection.closeFuture.whenComplete { [self] _ in closed() }
    }

    /// Runs `query`; throws `Closed` when the connection closes first.
    func query(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        return try await withCheckedThrowingContinuation { continuation in
            let open = state.withLock { state in
                if state.closed { return false }
                state.waiters[id] = continuation
                return true
            }
            guard open else { return continuation.resume(throwing: Closed()) }
            Task { [connection] in
                let result: Result<PostgresRowSequence, any Error>
                do {
                    result = .success(try await connection.query(query, logger: logger))
                } catch {
                    result = .failure(error)
                }
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(with: result)
            }
        }
    }

    /// Fails every waiting query; later ones fail at once.
    private func closed() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(throwing: Closed()) }
    }
}
