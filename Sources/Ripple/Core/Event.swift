/// One event of a signal: a value, an error, or completion.
///
/// Every subscription sees the grammar `next* (error | completed)?`: any number of
/// values, then at most one terminal event, then nothing.
///
///     let events: [Event<Int>] = [.next(1), .next(2), .completed]
public enum Event<Value> {
    /// A value.
    case next(Value)
    /// The signal failed; nothing follows.
    case error(any Error)
    /// The signal finished; nothing follows.
    case completed

    /// Whether this event ends the stream (`error` or `completed`).
    @inlinable
    public var isTerminal: Bool {
        if case .next = self { return false }
        return true
    }

    /// The value of a `next` event, or nil.
    @inlinable
    public var value: Value? {
        if case .next(let value) = self { return value }
        return nil
    }

    /// The error of an `error` event, or nil.
    @inlinable
    public var error: (any Error)? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// Transforms the value of a `next` event; terminal events pass through.
    ///
    ///     Event.next(2).map { $0 * 10 }   // .next(20)
    @inlinable
    public func map<U>(_ transform: (Value) throws -> U) rethrows -> Event<U> {
        switch self {
        case .next(let value): return .next(try transform(value))
        case .error(let error): return .error(error)
        case .completed: return .completed
        }
    }
}

extension Event: Sendable where Value: Sendable {}

extension Event: CustomStringConvertible {
    /// `next(1)`, `error(…)` or `completed`.
    public var description: String {
        switch self {
        case .next(let value): return "next(\(value))"
        case .error(let error): return "error(\(error))"
        case .completed: return "completed"
        }
    }
}

extension Event: Equatable where Value: Equatable {
    /// Values compare with `==`; errors compare by their `String(reflecting:)`
    /// description, since `any Error` is not `Equatable`. Meant for tests.
    public static func == (lhs: Event<Value>, rhs: Event<Value>) -> Bool {
        switch (lhs, rhs) {
        case (.next(let a), .next(let b)): return a == b
        case (.error(let a), .error(let b)): return String(reflecting: a) == String(reflecting: b)
        case (.completed, .completed): return true
        default: return false
        }
    }
}
