import Dispatch
import Synchronization

/// Which thread is running a serial `DispatchQueue`'s Ripple actions: one per queue, shared
/// by every `SerialQueueScheduler` on that queue, attached to the queue as a queue-specific value.
///
/// `deliver(on:)`'s relay reads it to tell the wait-for graph who holds up a drain that is
/// scheduled but has not started: the thread occupying the queue. A sender that waits for such
/// a relay while that thread (directly or along a chain) waits for the sender then sees the
/// cycle and does not wait (see the `DeliveryTurn` article).
@usableFromInline
final class QueueOccupancy: Sendable {
    /// The `TurnIdentity` of the thread running an action on the queue, or 0.
    @usableFromInline let occupant = Atomic<UInt>(0)

    private init() {}

    /// Runs `body` with the calling thread recorded as the occupant.
    func run(_ body: () -> Void) {
        let previous = occupant.exchange(TurnIdentity.current, ordering: .acquiringAndReleasing)
        defer { occupant.store(previous, ordering: .releasing) }
        body()
    }

    /// Whether the calling code runs on the queue (or a queue targeting it), inside a Ripple
    /// action or not.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.key) === self
    }

    /// The occupancy of `queue`, attached on first use.
    static func of(_ queue: DispatchQueue) -> QueueOccupancy {
        attaching.withLock { _ in
            if let existing = queue.getSpecific(key: key) { return existing }
            let occupancy = QueueOccupancy()
            queue.setSpecific(key: key, value: occupancy)
            return occupancy
        }
    }

    private static let key = DispatchSpecificKey<QueueOccupancy>()
    /// Serializes attaching, so two schedulers made at once on one queue share one occupancy.
    private static let attaching = Lock(())
}
