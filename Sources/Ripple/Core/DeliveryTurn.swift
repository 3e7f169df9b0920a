import Synchronization

/// Who may deliver right now: the atomic at the heart of `Subscriber` and the subjects.
///
/// One thread at a time holds the turn and runs user callbacks; others queue their events
/// (under their owner's lock) and ask the holder to look at the queue before it gives the
/// turn up. States: 0 free, 1 held, 2 held and the holder must look. Taking the turn and
/// giving it back when nobody asked are single compare-and-swaps, so the uncontended path
/// takes no lock.
@usableFromInline
struct DeliveryTurn: ~Copyable, Sendable {
    @usableFromInline let state = Atomic<Int>(0)

    @inlinable init() {}

    /// Takes the turn if it is free.
    @inlinable
    func take() -> Bool {
        state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
    }

    /// Gives the turn up if nobody asked the holder to look; false means: look first.
    @inlinable
    func releaseIfUnasked() -> Bool {
        state.compareExchange(expected: 1, desired: 0, ordering: .acquiringAndReleasing).exchanged
    }

    /// Asks the holder to look at the queue; returns false when there is no holder, in which
    /// case the caller has just taken the turn.
    @inlinable
    func requestLook() -> Bool {
        while true {
            switch state.load(ordering: .acquiring) {
            case 0:
                if take() { return false }
            case 1:
                if state.compareExchange(expected: 1, desired: 2, ordering: .acquiringAndReleasing).exchanged { return true }
            default:
                return true
            }
        }
    }

    /// The holder keeps the turn; `mustLook` makes its next release go through the queue.
    @inlinable
    func keep(mustLook: Bool) { state.store(mustLook ? 2 : 1, ordering: .releasing) }

    /// The holder gives the turn up unconditionally (it has looked, under the owner's lock).
    @inlinable
    func release() { state.store(0, ordering: .releasing) }

    /// Whether some thread holds the turn.
    @inlinable
    var isHeld: Bool { state.load(ordering: .acquiring) != 0 }
}

/// The closures of a closure subscription, immutable so a delivery calls them without
/// retaining anything (held `Unmanaged` by `Subscriber` and subject subscriptions).
@usableFromInline
final class EventCallbacks<Value> {
    @usableFromInline let next: ((Value) -> Void)?
    @usableFromInline let error: ((any Error) -> Void)?
    @usableFromInline let completed: (() -> Void)?

    @inlinable
    init(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?) {
        self.next = next
        self.error = error
        self.completed = completed
    }
}
