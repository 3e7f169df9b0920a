/// The drain of a `deliver(on:)` relay (`DeliveryRelay`), as a pure state machine: whether a
/// drain exists, whether it has started, and on which thread.
///
/// The relay keeps one in its locked state, and every transition happens under that lock; the
/// relay then publishes `word` to an atomic that the wait-for graph reads without the lock.
///
///     idle ──request()──▶ scheduled ──start(by:)──▶ draining(by: thread) ──finish()──▶ idle
///        ▲                    │                                                  
///        └──────finish()──────┘   (disposed before the drain ran)
///
/// Invariants:
/// 1. At most one drain exists: `request()` asks for one only from `idle`.
/// 2. `generation` counts the drains asked for; a scheduled drain's disposable is kept only
///    while that very drain exists (`keeps(_:)`), so a late `schedule` return never stores an
///    older drain's disposable over a newer one's.
/// 3. `word` is 0 exactly when `idle`: the graph sees a holder (or the queue's occupant, for
///    `scheduled`) for as long as the drain exists.
@usableFromInline
struct RelayDrain: Equatable, Sendable {
    @usableFromInline
    enum Phase: Equatable, Sendable {
        /// No drain exists: the next queued event asks for one.
        case idle
        /// A drain was asked for and has not started: it waits for the scheduler.
        case scheduled
        /// A drain runs on this thread (its `TurnIdentity`).
        case draining(by: UInt)
    }

    @usableFromInline private(set) var phase = Phase.idle
    /// How many drains were asked for.
    @usableFromInline private(set) var generation = 0

    @inlinable init() {}

    /// An event was queued: returns the generation of the drain to schedule, or nil if one
    /// already exists (it will find the event).
    @inlinable
    mutating func request() -> Int? {
        guard phase == .idle else { return nil }
        generation += 1
        phase = .scheduled
        return generation
    }

    /// The scheduled drain starts on `thread`; false if no drain is scheduled (the relay was
    /// disposed and the drain ran anyway: it must stop).
    @inlinable
    mutating func start(by thread: UInt) -> Bool {
        guard phase == .scheduled else { return false }
        phase = .draining(by: thread)
        return true
    }

    /// The drain found the queue dry, or the relay was disposed: no drain exists any more.
    @inlinable
    mutating func finish() { phase = .idle }

    /// Whether the disposable that scheduling drain `generation` returned is to be kept (for
    /// `dispose()` to cancel): only while that drain exists.
    @inlinable
    func keeps(_ generation: Int) -> Bool { phase != .idle && self.generation == generation }

    /// Whether a drain exists.
    @inlinable
    var exists: Bool { phase != .idle }

    /// What the wait-for graph reads: 0 when idle, `RelayDrain.scheduledWord` while scheduled
    /// (the relay then names the queue's occupant), else the draining thread.
    @inlinable
    var word: UInt {
        switch phase {
        case .idle: return 0
        case .scheduled: return Self.scheduledWord
        case .draining(let thread): return thread
        }
    }

    /// `word` while a drain is scheduled but not started: not a thread identity (those are
    /// aligned addresses), and `DeliveryRelay.turnWord` never passes it on.
    @inlinable static var scheduledWord: UInt { 2 }
}
