/// What a subject keeps to replay to each new subscriber: nothing, the latest value, or a ring.
///
/// Lives inside the subject's locked state, so implementations never lock or call user code:
/// the clock's time is read by the caller before locking and passed in, and every value a
/// history lets go of (replaced, evicted, expired) is handed back as `Evicted`, for the caller
/// to release after unlocking — a value's `deinit` is user code.
@usableFromInline
protocol SubjectHistory<Value>: Sendable {
    associatedtype Value
    /// The scheduler whose clock `record` and `replay` need (`ReplaySubject` with a `maxAge`),
    /// or nil: then the time passed in is ignored and the clock is never read.
    var clock: (any Scheduler)? { get }
    /// Records a value sent on the subject at `now`; returns what it let go of.
    mutating func record(_ value: Value, at now: Duration) -> Evicted<Value>
    /// The values a new subscriber receives first (`afterError`: the subject failed), after
    /// dropping what expired by `now`, and what was dropped.
    mutating func replay(afterError: Bool, at now: Duration) -> (values: [Value], expired: Evicted<Value>)
    /// True when `record` does nothing, so a value can be sent without the lock.
    static var recordsNothing: Bool { get }
    /// How many values `replay(afterError:at:)` would hand out at `now`, after dropping (into
    /// `expired`) what expired; `copyReplay` then copies exactly those. The pair lets a joining
    /// subscriber that takes the free delivery turn copy its replay into the subject's reusable
    /// buffer instead of a new array (`SubjectStorage.subscribe(entry:)`).
    mutating func replayCount(afterError: Bool, at now: Duration, expired: inout Evicted<Value>) -> Int
    /// Initializes `buffer[0..<count]` with the values `replayCount` counted, in order.
    func copyReplay(_ count: Int, into buffer: UnsafeMutablePointer<Value>)
}

extension SubjectHistory {
    @inlinable static var recordsNothing: Bool { false }
    @inlinable var clock: (any Scheduler)? { nil }
}

/// The values a history let go of under the subject's lock, to be released after unlocking.
///
/// A send replaces or evicts at most one value in the common case, so that case needs no
/// array (a send allocates nothing); several at once (a burst of expired values) are collected.
@usableFromInline
enum Evicted<Value> {
    case none
    case one(Value)
    case many([Value])

    /// Adds `value` to what was let go of. A value with no reference in it (`_isPOD`: an
    /// `Int`, a struct of numbers) runs no code when it dies, so it is dropped right here: the
    /// common sends of plain values pay nothing for the hand-off.
    @inlinable
    mutating func add(_ value: Value) {
        if _isPOD(Value.self) { return }
        switch consume self {
        case .none: self = .one(value)
        case .one(let first): self = .many([first, value])
        case .many(var values):
            values.append(value)
            self = .many(values)
        }
    }
}

/// `Subject`: no history.
@usableFromInline
struct NoHistory<Value>: SubjectHistory, Sendable {
    @inlinable static var recordsNothing: Bool { true }
    @inlinable init() {}
    @inlinable func replayCount(afterError: Bool, at now: Duration, expired: inout Evicted<Value>) -> Int { 0 }
    @inlinable func copyReplay(_ count: Int, into buffer: UnsafeMutablePointer<Value>) {}
    @inlinable func record(_ value: Value, at now: Duration) -> Evicted<Value> { .none }
    @inlinable func replay(afterError: Bool, at now: Duration) -> (values: [Value], expired: Evicted<Value>) { ([], .none) }
}

/// `BehaviorSubject`: the latest value (the default before any send). After an error,
/// nothing is replayed: a late subscriber gets the error only.
@usableFromInline
struct LatestValue<Value>: SubjectHistory, @unchecked Sendable {  // only inside the subject's lock; the value leaves it only as copies handed out
    @usableFromInline var value: Value
    /// Counts records, so a caller that compared a copy of `value` outside the lock can tell
    /// whether it is still current (`ValuePromise`'s `ignoreRepeated`).
    @usableFromInline var version: UInt64 = 0
    @inlinable init(value: Value) { self.value = value }
    @inlinable
    mutating func record(_ value: Value, at now: Duration) -> Evicted<Value> {
        version &+= 1
        var replaced = Evicted<Value>.none
        replaced.add(self.value)
        self.value = value
        return replaced
    }
    @inlinable
    func replay(afterError: Bool, at now: Duration) -> (values: [Value], expired: Evicted<Value>) {
        (afterError ? [] : [value], .none)
    }
    @inlinable
    func replayCount(afterError: Bool, at now: Duration, expired: inout Evicted<Value>) -> Int { afterError ? 0 : 1 }
    @inlinable
    func copyReplay(_ count: Int, into buffer: UnsafeMutablePointer<Value>) {
        if count == 1 { buffer.initialize(to: value) }
    }
}

/// `ReplaySubject`: up to `capacity` values, each stamped with the scheduler's clock when
/// a `maxAge` is set; entries older than `maxAge` are dropped before every record and replay.
@usableFromInline
struct ReplayHistory<Value>: SubjectHistory, @unchecked Sendable {  // only inside the subject's lock; values leave it only as replays and evictions handed out
    @usableFromInline var ring: RingBuffer<(value: Value, time: Duration)>
    @usableFromInline let maxAge: Duration?
    @usableFromInline let ageClock: (any Scheduler)?
    /// The latest time recorded: senders read the clock before locking, so one preempted in
    /// between may come in with an older time; stamps never go backwards, so expiry (which
    /// looks at the oldest entry only) stays in order.
    @usableFromInline var latest: Duration = .zero

    @inlinable
    init(capacity: Int, maxAge: Duration?, clock: (any Scheduler)?) {
        ring = RingBuffer(capacity: capacity)
        self.maxAge = maxAge
        self.ageClock = clock
    }

    @inlinable var clock: (any Scheduler)? { maxAge == nil ? nil : ageClock }

    @usableFromInline var allocatedSlots: Int { ring.allocatedSlots }

    /// How many values are retained at `now`, after dropping expired ones (returned too).
    @usableFromInline
    mutating func liveCount(at now: Duration) -> (count: Int, expired: Evicted<Value>) {
        var expired = Evicted<Value>.none
        pruneExpired(at: now, into: &expired)
        return (ring.count, expired)
    }

    @inlinable
    mutating func record(_ value: Value, at now: Duration) -> Evicted<Value> {
        var evicted = Evicted<Value>.none
        pruneExpired(at: now, into: &evicted)
        let stamp = Swift.max(now, latest)
        latest = stamp
        if let dropped = ring.append((value, stamp)) { evicted.add(dropped.value) }
        return evicted
    }

    @inlinable
    mutating func replay(afterError: Bool, at now: Duration) -> (values: [Value], expired: Evicted<Value>) {
        var expired = Evicted<Value>.none
        pruneExpired(at: now, into: &expired)
        return (ring.elements.map(\.value), expired)
    }

    @inlinable
    mutating func replayCount(afterError: Bool, at now: Duration, expired: inout Evicted<Value>) -> Int {
        pruneExpired(at: now, into: &expired)
        return ring.count
    }

    @inlinable
    func copyReplay(_ count: Int, into buffer: UnsafeMutablePointer<Value>) {
        ring.withRuns { first, second in
            var next = buffer
            for slot in first {
                next.initialize(to: slot.unsafelyUnwrapped.value)
                next += 1
            }
            for slot in second {
                next.initialize(to: slot.unsafelyUnwrapped.value)
                next += 1
            }
        }
    }

    /// Drops entries older than `maxAge` at `now` into `expired` (nothing without a maxAge).
    @inlinable
    mutating func pruneExpired(at now: Duration, into expired: inout Evicted<Value>) {
        guard let maxAge else { return }
        while let oldest = ring.first, now - oldest.time > maxAge {
            if let dropped = ring.removeFirst() { expired.add(dropped.value) }
        }
    }
}
