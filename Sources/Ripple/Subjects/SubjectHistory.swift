/// What a subject keeps to replay to each new subscriber: nothing, the latest value, or a ring.
///
/// Lives inside the subject's locked state, so implementations never lock or call user code.
@usableFromInline
protocol SubjectHistory<Value>: Sendable {
    associatedtype Value
    /// Records a value sent on the subject.
    mutating func record(_ value: Value)
    /// The values a new subscriber receives first; `afterError` when the subject failed.
    mutating func replay(afterError: Bool) -> [Value]
    /// True when `record` does nothing, so a value can be sent without the lock.
    static var recordsNothing: Bool { get }
}

extension SubjectHistory {
    @inlinable static var recordsNothing: Bool { false }
}

/// `Subject`: no history.
@usableFromInline
struct NoHistory<Value>: SubjectHistory, @unchecked Sendable {
    @inlinable static var recordsNothing: Bool { true }
    @inlinable init() {}
    @inlinable func record(_ value: Value) {}
    @inlinable func replay(afterError: Bool) -> [Value] { [] }
}

/// `BehaviorSubject`: the latest value (the default before any send). After an error,
/// nothing is replayed: a late subscriber gets the error only.
@usableFromInline
struct LatestValue<Value>: SubjectHistory, @unchecked Sendable {
    @usableFromInline var value: Value
    @inlinable init(value: Value) { self.value = value }
    @inlinable mutating func record(_ value: Value) { self.value = value }
    @inlinable func replay(afterError: Bool) -> [Value] { afterError ? [] : [value] }
}

/// `ReplaySubject`: up to `capacity` values, each stamped with the scheduler's clock when
/// a `maxAge` is set; entries older than `maxAge` are dropped before every record and replay.
@usableFromInline
struct ReplayHistory<Value>: SubjectHistory, @unchecked Sendable {
    @usableFromInline var ring: RingBuffer<(value: Value, time: Duration)>
    @usableFromInline let maxAge: Duration?
    @usableFromInline let clock: (any Scheduler)?

    @inlinable
    init(capacity: Int, maxAge: Duration?, clock: (any Scheduler)?) {
        ring = RingBuffer(capacity: capacity)
        self.maxAge = maxAge
        self.clock = clock
    }

    @usableFromInline var allocatedSlots: Int { ring.allocatedSlots }

    /// How many values are retained now, after dropping expired ones.
    @usableFromInline
    mutating func liveCount() -> Int {
        pruneExpired()
        return ring.count
    }

    @inlinable
    mutating func record(_ value: Value) {
        let now = pruneExpired()
        ring.append((value, now))
    }

    @inlinable
    mutating func replay(afterError: Bool) -> [Value] {
        pruneExpired()
        return ring.elements.map(\.value)
    }

    /// Drops entries older than `maxAge` and returns the clock's time (zero without a maxAge).
    @inlinable @discardableResult
    mutating func pruneExpired() -> Duration {
        guard let maxAge, let clock else { return .zero }
        let now = clock.now
        while let oldest = ring.first, now - oldest.time > maxAge { ring.removeFirst() }
        return now
    }
}
