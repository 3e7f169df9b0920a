extension SignalProtocol {
    /// Transforms each value (RAC's `map:`).
    ///
    ///     source: -1-2-3-|
    ///     map:    -2-4-6-|    ({ $0 * 2 })
    ///
    /// Errors and completion pass through; disposing disposes the upstream subscription.
    @inlinable
    public func map<U>(_ transform: @escaping (Value) -> U) -> Signal<U> {
        fuse { downstream in { downstream.sendNext(transform($0)) } }
    }

    /// Forwards only the values that satisfy `isIncluded` (RAC's `filter:`).
    ///
    ///     source: -1-2-3-4-|
    ///     filter: ---2---4-|  ({ $0 % 2 == 0 })
    @inlinable
    public func filter(_ isIncluded: @escaping (Value) -> Bool) -> Signal<Value> {
        fuse { downstream in { if isIncluded($0) { downstream.sendNext($0) } } }
    }

    /// Transforms each value and drops the nils (RAC's `ignore:` + `map:`).
    ///
    ///     Signal.from(["1", "x", "3"]).compactMap { Int($0) }   // 1, 3
    @inlinable
    public func compactMap<U>(_ transform: @escaping (Value) -> U?) -> Signal<U> {
        fuse { downstream in { if let mapped = transform($0) { downstream.sendNext(mapped) } } }
    }

    /// Sends each running accumulation; the seed itself is not sent (RAC's `scanWithStart:reduce:`).
    ///
    ///     source: -1-2-3-|
    ///     scan:   -1-3-6-|    (0, +)
    @inlinable
    public func scan<A>(_ initial: A, _ accumulate: @escaping (A, Value) -> A) -> Signal<A> {
        fuse { downstream in
            let accumulator = StageState(initial)
            return { value in
                accumulator.value = accumulate(accumulator.value, value)
                downstream.sendNext(accumulator.value)
            }
        }
    }

    /// Sends each running accumulation, updating the accumulator in place (ReactiveSwift's
    /// `scan(into:_:)`, as Swift's `reduce(into:_:)`); the seed itself is not sent.
    ///
    ///     source: -a-b-a-|
    ///     scan:   -x-y-z-|    ([:], counting: x = [a:1], y = [a:1,b:1], z = [a:2,b:1])
    ///
    /// Mutating the accumulator avoids copying it for each value (an array or a dictionary
    /// that grows); each value sent is a copy of the accumulator at that point. Errors and
    /// completion pass through.
    ///
    ///     words.scan(into: [String: Int]()) { counts, word in counts[word, default: 0] += 1 }
    ///
    /// - Parameters:
    ///   - initial: The accumulator before the first value.
    ///   - accumulate: Updates the accumulator with one value.
    /// - Returns: A signal of the accumulator after each value.
    @inlinable
    public func scan<A>(into initial: A, _ accumulate: @escaping (inout A, Value) -> Void) -> Signal<A> {
        fuse { downstream in
            let accumulator = StageState(initial)
            return { value in
                accumulate(&accumulator.value, value)
                downstream.sendNext(accumulator.value)
            }
        }
    }

    /// Sends the final accumulation once upstream completes (the seed for an empty source).
    ///
    ///     source: -1-2-3-|
    ///     reduce: -------(6|)  (0, +)
    ///
    /// An error is forwarded and nothing is sent.
    public func reduce<A>(_ initial: A, _ accumulate: @escaping (A, Value) -> A) -> Signal<A> {
        lift { downstream in
            var accumulator = initial
            return .relay(
                to: downstream,
                next: { accumulator = accumulate(accumulator, $0) },
                completed: {
                    downstream.sendNext(accumulator)
                    downstream.sendCompleted()
                })
        }
    }

    /// Sends every value as one array when upstream completes (`[]` for an empty source).
    ///
    ///     source:  -1-2-3-|
    ///     collect: -------([1,2,3]|)
    public func collect() -> Signal<[Value]> {
        reduce([Value]()) { array, value in
            var array = array
            array.append(value)
            return array
        }
    }

    /// Drops every value; forwards only the terminal event (RAC's `ignoreValues`).
    ///
    ///     source: -1-2-|
    ///     ignore: -----|
    public func ignoreValues() -> Signal<Value> {
        lift { downstream in .relay(to: downstream, next: { _ in }) }
    }

    /// Sends each event as a value, then completes (RAC's `materialize`).
    ///
    ///     source:      -1-#
    ///     materialize: -n-(e|)   (`.next(1)`, `.error(e)`, then completed)
    public func materialize() -> Signal<Event<Value>> {
        lift { downstream in
            .relay(
                to: downstream,
                next: { downstream.sendNext(.next($0)) },
                error: { error in
                    downstream.sendNext(.error(error))
                    downstream.sendCompleted()
                },
                completed: {
                    downstream.sendNext(.completed)
                    downstream.sendCompleted()
                })
        }
    }

    /// Sends values equal to the previous one only once (RAC's `distinctUntilChanged`).
    ///
    ///     source:   -1-1-2-2-1-|
    ///     distinct: -1---2---1-|
    public func distinctUntilChanged() -> Signal<Value> where Value: Equatable {
        distinctUntilChanged(by: ==)
    }

    /// Drops a value when `isSame(previous, value)` says it repeats the previous one sent.
    ///
    ///     s.distinctUntilChanged(by: { old, new in old.id == new.id })
    public func distinctUntilChanged(by isSame: @escaping (Value, Value) -> Bool) -> Signal<Value> {
        lift { downstream in
            var previous: Value?
            return .relay(to: downstream, next: { value in
                if let previous, isSame(previous, value) { return }
                previous = value
                downstream.sendNext(value)
            })
        }
    }

    /// Sends `values` first, before subscribing upstream (RAC's `startWith:`).
    ///
    ///     source:    ---1-|
    ///     startWith: 0--1-|   (0)
    public func startWith(_ values: Value...) -> Signal<Value> {
        Signal { downstream in
            for value in values {
                if downstream.isDisposed { return nil }
                downstream.sendNext(value)
            }
            // Linked before the upstream's producer runs (`subscribe(_:linking:)`): ending this
            // subscription while a synchronous upstream sends stops it at once.
            self.subscribe(downstream, linkingInto: downstream.disposable)
            return nil
        }
    }
}

extension SignalProtocol {
    /// Turns `Event` values back into events (RAC's `dematerialize`): `.next(v)` sends v,
    /// `.error` and `.completed` end the stream.
    public func dematerialize<U>() -> Signal<U> where Value == Event<U> {
        lift { downstream in .relay(to: downstream, next: { downstream.send($0) }) }
    }
}

extension SignalProtocol {
    /// Transforms each value with a throwing closure; a thrown error ends the stream with
    /// that error and disposes upstream (Combine's `tryMap`).
    ///
    ///     Signal.from(["1", "x"]).tryMap { try parse($0) }   // 1, then the parse error
    public func tryMap<U>(_ transform: @escaping (Value) throws -> U) -> Signal<U> {
        lift { downstream in
            .relay(to: downstream, next: { value in
                do { downstream.sendNext(try transform(value)) } catch { downstream.sendError(error) }
            })
        }
    }

    /// Forwards the values `isIncluded` accepts; a thrown error ends the stream (Combine's `tryFilter`).
    public func tryFilter(_ isIncluded: @escaping (Value) throws -> Bool) -> Signal<Value> {
        lift { downstream in
            .relay(to: downstream, next: { value in
                do { if try isIncluded(value) { downstream.sendNext(value) } } catch { downstream.sendError(error) }
            })
        }
    }

    /// `scan` with a throwing accumulator; a thrown error ends the stream (Combine's `tryScan`).
    public func tryScan<A>(_ initial: A, _ accumulate: @escaping (A, Value) throws -> A) -> Signal<A> {
        lift { downstream in
            let accumulator = StageState(initial)
            return .relay(to: downstream, next: { value in
                do {
                    accumulator.value = try accumulate(accumulator.value, value)
                    downstream.sendNext(accumulator.value)
                } catch {
                    downstream.sendError(error)
                }
            })
        }
    }
}
