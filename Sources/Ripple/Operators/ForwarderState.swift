/// What a `SerialForwarder` decides under its lock, as a pure state machine: its turn's queue,
/// whether its stream has ended, and whether the holder's look loop is delivering.
///
/// The forwarder keeps one in its locked state and calls each transition under that lock; the
/// delivery itself (the downstream's callbacks) runs outside it.
///
///     accept(event) ── the event is queued (`machine`), or dropped after a terminal one
///     looked(look)  ── the holder's loop took `look` from the machine: delivering or not
///     drainStep(…)  ── what a `drain()` that owes no wake does next: `.look` or `.done`
///
/// Invariants:
/// 1. Nothing is accepted after a terminal event: `isTerminated` is set by the first terminal
///    event and never cleared.
/// 2. `isLooking` is true exactly while the turn's holder is inside its look loop delivering an
///    event it took from the machine (`.deliver`, `.deliverFor`); every other look (tidy, hand
///    off, release) ends the loop and clears it.
/// 3. A `drain()` looks only when its thread holds the turn and no look loop runs: events
///    enqueued from inside a downstream callback (the loop's thread, up the stack) are left to
///    that loop, which delivers them after the callback returns, in order — a nested look would
///    deliver them inside the callback, re-entering the downstream.
/// 4. A `drain()` whose thread owns an entry in the machine first waits for the one wake that
///    entry brings (`TurnWaiter.expectsWake`, checked outside the lock): this type only decides
///    for a thread that owes no wake.
@usableFromInline
struct ForwarderState<Value>: @unchecked Sendable {  // holds events, which leave it only through `TurnMachine.look` to the holder
    /// The turn's queue.
    @usableFromInline var machine = TurnMachine<Event<Value>>()
    /// A terminal event was accepted (invariant 1).
    @usableFromInline private(set) var isTerminated = false
    /// The holder's look loop is delivering (invariant 2).
    @usableFromInline private(set) var isLooking = false

    @inlinable init() {}

    /// `drain()`'s next step for a thread that owes no wake.
    @usableFromInline
    enum DrainStep: Equatable, Sendable {
        /// Its events are delivered, or left to the holder (another thread, or the running loop).
        case done
        /// It holds the turn and no loop runs: run the look loop.
        case look
    }

    /// Whether `event` is to be queued: false once a terminal event was accepted (invariant 1).
    @inlinable
    mutating func accept(_ event: Event<Value>) -> Bool {
        if isTerminated { return false }
        if event.isTerminal { isTerminated = true }
        return true
    }

    /// Records what the holder's loop took from the machine (invariant 2).
    @inlinable
    mutating func looked(_ look: TurnMachine<Event<Value>>.Look) {
        switch look {
        case .deliver, .deliverFor: isLooking = true
        case .tidy, .handOff, .released: isLooking = false
        }
    }

    /// What `drain()` does next on thread `me`, with `holder` holding the turn (invariant 3).
    @inlinable
    func drainStep(by me: UInt, holder: UInt) -> DrainStep {
        holder == me && !isLooking ? .look : .done
    }
}
