extension SignalProtocol {
    /// Pairs each value with the one before it, starting with `initial` as the first one's
    /// predecessor (ReactiveSwift's `combinePrevious(_:)`).
    ///
    ///     source:  -1-2-3-|
    ///     result:  -a-b-c-|    (0: a = (0,1), b = (1,2), c = (2,3))
    ///
    /// Sends one pair per value, at once; errors and completion pass through.
    ///
    ///     Signal.from([1, 5, 2]).combinePrevious(0).map { $1 - $0 }   // 1, 4, -3
    ///
    /// - Parameter initial: The predecessor of the first value.
    /// - Returns: A signal of `(previous, current)` pairs.
    public func combinePrevious(_ initial: Value) -> Signal<(Value, Value)> {
        fuse { downstream in
            let previous = StageState(initial)
            return { value in
                let pair = (previous.value, value)
                previous.value = value
                downstream.sendNext(pair)
            }
        }
    }

    /// Pairs each value with the one before it; the first value only starts the pairing
    /// (ReactiveSwift's `combinePrevious()`).
    ///
    ///     source:  -1-2-3-|
    ///     result:  ---a-b-|    (a = (1,2), b = (2,3))
    ///
    /// A source of fewer than two values sends no pair; errors and completion pass through.
    ///
    ///     readings.combinePrevious().filter { old, new in new < old }   // every drop
    ///
    /// - Returns: A signal of `(previous, current)` pairs.
    public func combinePrevious() -> Signal<(Value, Value)> {
        fuse { downstream in
            let previous = StageState<Value?>(nil)
            return { value in
                let before = previous.value
                previous.value = value
                if let before { downstream.sendNext((before, value)) }
            }
        }
    }
}
