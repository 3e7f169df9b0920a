import Dispatch
import Synchronization

/// Which thread is running a serial `DispatchQueue`'s Ripple actions: one per queue, shared
/// by every `SerialQueueScheduler` on that queue, attached to the queue as a queue-specific value.
///
/// `deliver(on:)`'s relay reads it to tell the wait-for graph who holds up a drain that is
/// scheduled but has not started: the thread running one of the queue's Ripple actions. A
/// sender that waits for such a relay while that thread (directly or along a chain) waits for
/// the sender then sees the cycle and does not wait (see the `DeliveryTurn` article).
///
/// Not recorded: a plain block on the queue, an action of a scheduler on a queue that targets
/// this one, a block on the queue this one targets. `isCurrent` sees the first two, so a sender
/// inside them never waits; but another sender waiting for the relay cannot see them hold its
/// drain up, and only `DeliveryOverflow.waitLimit` ends that wait.
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

    /// Whether the calling code runs on the queue or on a queue targeting it (whose blocks
    /// hold this queue up too), inside a Ripple action or not.
    ///
    /// Each occupancy marks its queue with a key of its own: dispatch looks a key up along the
    /// current queue's target chain, so a nearer queue's marker cannot hide this one's.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: marker) != nil
    }

    /// This occupancy's own mark on its queue.
    private let marker = DispatchSpecificKey<Bool>()

    /// The occupancy of `queue`, attached on first use.
    static func of(_ queue: DispatchQueue) -> QueueOccupancy {
        attaching.withLock { _ in
            if let existing = queue.getSpecific(key: key) { return existing }
            let occupancy = QueueOccupancy()
            queue.setSpecific(key: key, value: occupancy)
            queue.setSpecific(key: occupancy.marker, value: true)
            return occupancy
        }
    }

    /// Finds a queue's occupancy (read on that queue itself, not along its target chain).
    private static let key = DispatchSpecificKey<QueueOccupancy>()
    /// Serializes attaching, so two schedulers made at once on one queue share one occupancy.
    private static let attaching = Lock(())
}
