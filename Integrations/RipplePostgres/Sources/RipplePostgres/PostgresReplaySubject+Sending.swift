import Foundation
import Ripple
import Synchronization

extension PostgresReplaySubject {
    /// Sends `value` to every instance's subscribers; returns its sequence in the topic once it is
    /// committed and durable.
    ///
    /// - **Durable**: the publishing connections run with `synchronous_commit=on`, so when `send`
    ///   returns the value survives a crash of the server, whatever the server's own setting.
    /// - **In call order**: the value is queued before `send` first suspends, so the sends of this
    ///   instance to this topic commit in the order the calls reached `send` (sends from
    ///   several tasks at once have the order in which they got there).
    /// - **Group commit**: concurrent sends share transactions (all that is queued goes in one),
    ///   with one gap-free order and each value once. A failed transaction fails exactly the
    ///   sends in it; each throws.
    ///
    /// The subscribers of this instance, like every other's, receive it from the listener once it
    /// is committed, in the topic's order — not before `send` returns, and only while `run()` runs.
    /// `send` does not need `run()`: it opens a publishing connection on first use (and after one
    /// fails), creating the tables if missing; `run()` closes it when it returns, and later sends
    /// throw `PostgresReplayError.stopped`. If the connection fails during the commit, the error is
    /// thrown and whether the value was committed is unknown, as with any database write. A value
    /// that was handed over is not withdrawn when the calling task is cancelled.
    ///
    ///     let sequence = try await feed.send(Order(id: 1, item: "tea"))
    ///
    /// To send the values of a synchronous signal in order, subscribe `sendingSubscriber(onError:)`.
    @discardableResult
    public func send(_ value: Value) async throws -> Int64 {
        let json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        return try await publisher.publish(topic: topic, channel: channel, json: json, capacity: capacity, maxAge: maxAge)
    }

    /// A subscriber that sends every value it receives to this topic, in the order it receives
    /// them: the ordered way to feed the subject from a signal.
    ///
    /// `sendNext` queues the value synchronously, in the same first-in first-out queue as
    /// `send(_:)`, and returns at once; the values are committed in that order (in shared
    /// transactions), as if `send` had been called for each. Starting one `Task` per value instead
    /// would commit them in whatever order the tasks happen to run.
    ///
    /// A value that cannot be sent — its encoding failed, its transaction failed, or the subject
    /// stopped — is reported to `onError` with the error, once per value, and the next values are
    /// still sent: a failure reaches you without ending your signal's subscription, and without
    /// hiding which values failed (ending the subscription could not withdraw the values already
    /// queued behind a failed one). `onError` is called on the publisher's task (or within
    /// `sendNext` for an encoding failure or a stopped subject), never under a lock. Once the
    /// subject stopped, `isDisposed` is true, so a long-running producer can stop early.
    ///
    /// The source's `error` and `completed` do not end the subject. The queue is not bounded: a
    /// source faster than the database fills memory; feed such a source with `send` and `await`.
    ///
    ///     Signal.from(orders).subscribe(feed.sendingSubscriber { order, error in
    ///         logger.error("order \(order.id) was not sent: \(error)")
    ///     })
    public func sendingSubscriber(
        onError: @escaping @Sendable (_ value: Value, _ error: any Error) -> Void
    ) -> any SubscriberProtocol<Value> {
        PostgresSendingSubscriber(
            publisher: publisher, topic: topic, channel: channel, capacity: capacity, maxAge: maxAge, onError: onError)
    }
}

/// `PostgresReplaySubject.sendingSubscriber(onError:)`: queues each value it receives.
final class PostgresSendingSubscriber<Value: Codable & Sendable>: SubscriberProtocol, Sendable {
    private let publisher: Publisher
    private let topic: String
    private let channel: String
    private let capacity: Int
    private let maxAge: Duration?
    private let onError: @Sendable (Value, any Error) -> Void
    private let stopped = Atomic(false)

    init(publisher: Publisher, topic: String, channel: String, capacity: Int, maxAge: Duration?,
         onError: @escaping @Sendable (Value, any Error) -> Void) {
        self.publisher = publisher
        self.topic = topic
        self.channel = channel
        self.capacity = capacity
        self.maxAge = maxAge
        self.onError = onError
    }

    func sendNext(_ value: Value) {
        let json: String
        do {
            json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        } catch {
            return onError(value, error)
        }
        let onError = onError
        do {
            try publisher.enqueue(Publisher.Item(
                topic: topic, channel: channel, json: json, capacity: capacity, maxAge: maxAge,
                completion: { result in
                    if case .failure(let error) = result { onError(value, error) }
                }))
        } catch {
            stopped.store(true, ordering: .relaxed)
            onError(value, error)
        }
    }

    func sendError(_ error: any Error) {}

    func sendCompleted() {}

    var isDisposed: Bool { stopped.load(ordering: .relaxed) }
}
