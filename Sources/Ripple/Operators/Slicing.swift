/// The error `element(at:)` fails with when the source completes before sending the value
/// at its index.
public struct IndexOutOfRangeError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The index that was asked for.
    public let index: Int
    /// How many values the source sent before completing (fewer than `index + 1`).
    public let count: Int

    /// The error of an `element(at: index)` whose source completed after `count` values:
    /// what a test expects.
    ///
    ///     let expected = IndexOutOfRangeError(index: 5, count: 2)
    ///     print(expected)   // no value at index 5: the signal completed after 2 values
    ///
    /// - Parameters:
    ///   - index: The index that was asked for.
    ///   - count: How many values the source sent before completing.
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// A readable account, such as "no value at index 5: the signal completed after 2 values".
    ///
    ///     Signal.from([1, 2]).element(at: 5).subscribe(error: { print($0) })
    ///     // no value at index 5: the signal completed after 2 values
    public var description: String {
        "no value at index \(index): the signal completed after \(count) value\(count == 1 ? "" : "s")"
    }
}

extension SignalProtocol {
    /// Drops values until `trigger` sends its first value, then forwards everything (RxSwift's
    /// `skipUntil`, ReactiveSwift's `skip(until:)`).
    ///
    ///     source:  -1-2-3-4-|
    ///     trigger: ----x
    ///     result:  -----3-4-|
    ///
    /// `trigger` is subscribed first, so one that sends during its subscription (a
    /// `BehaviorSubject`, `Signal.just`) lets every value through; its subscription ends with its
    /// first value. A trigger that completes without sending lets nothing through, as in
    /// RxSwift (ReactiveSwift opens on completion too): the result then sends only the
    /// source's terminal event. The source's completion and errors from either signal are
    /// forwarded whenever they come (RxSwift drops a completion that comes before the
    /// trigger, leaving its subscriber waiting for ever); an error the trigger sends after its
    /// first value is not, since the trigger has done its part by then.
    ///
    ///     updates.skip(until: ready).subscribeNext { apply($0) }
    ///
    /// - Parameter trigger: The signal whose first value opens the gate.
    /// - Returns: The values of `self` from the trigger's first value on.
    public func skip<Trigger: SignalProtocol>(until trigger: Trigger) -> Signal<Value> {
        Signal { downstream in
            let forwarder = SerialForwarder(downstream)
            let gate = Lock(SkipUntilGate.waiting)
            // The trigger's subscription takes its slot, then the source's joins this one, each
            // before its producer runs (`subscribe(linking:)`): ending this subscription while
            // either sends synchronously stops it at once.
            let triggerSubscription = SerialDisposable()
            downstream.disposable.add(triggerSubscription)
            trigger.subscribe(
                linking: { triggerSubscription.disposable = $0 },
                next: { _ in
                    gate.withLock { $0.triggered() }
                    triggerSubscription.dispose()  // only its first value counts
                },
                // An error that comes after the first value (from another thread, or from a
                // source this subscription could not link before it ran) belongs to a trigger
                // whose work is done: it is dropped.
                error: { error in
                    if gate.withLock({ $0.triggerFailed() }) { forwarder.send(.error(error)) }
                },
                completed: { gate.withLock { $0.triggerCompleted() } })
            if downstream.isDisposed { return nil }
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { value in
                    if gate.withLock({ $0 == .open }) { forwarder.send(.next(value)) }
                },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            return nil
        }
    }

    /// The last `count` values, sent when the source completes, then completion (RxSwift's
    /// `takeLast`).
    ///
    ///     source: -1-2-3-4-|
    ///     result: ---------(34|)    (2)
    ///
    /// Holds at most `count` values (a ring: the oldest is dropped when a new one comes). An
    /// error drops them and is forwarded. `take(last: 0)` sends only the completion, and a
    /// source of fewer than `count` values sends all of them.
    ///
    ///     log.take(last: 10).collect()   // the final 10 lines, once the log completes
    ///
    /// - Parameter count: How many of the last values to send; zero or more.
    /// - Returns: A signal of the source's last `count` values.
    public func take(last count: Int) -> Signal<Value> {
        precondition(count >= 0, "take(last:) needs a count of zero or more, got \(count)")
        if count == 0 { return ignoreValues() }
        return lift { downstream in
            let kept = StageState(RingBuffer<Value>(capacity: count))
            return .relay(
                to: downstream,
                next: { kept.value.append($0) },
                completed: {
                    while !downstream.isDisposed, let value = kept.value.removeFirst() {
                        downstream.sendNext(value)
                    }
                    downstream.sendCompleted()
                })
        }
    }

    /// Forwards values while `predicate` holds; with `inclusive`, the first value that fails it
    /// is sent too, before completion (RxSwift's `take(while:behavior: .inclusive)`, RxJS's
    /// `takeWhile(_, true)`).
    ///
    ///     source: -1-2-5-1-|
    ///     result: -1-2-(5|)     ({ $0 < 3 }, inclusive: true)
    ///
    /// With `inclusive: false` it is `take(while:)`. A flag on the familiar name rather than a
    /// new one (`take(through:)`, `take(until:)` with a predicate), because `take(until:)`
    /// already takes a trigger signal, and the predicate keeps the meaning it has in
    /// `take(while:)`. Completing disposes upstream.
    ///
    ///     progress.take(while: { $0 < 100 }, inclusive: true)   // …, 98, 99, 100, completed
    ///
    /// - Parameters:
    ///   - predicate: Whether to keep going after a value.
    ///   - inclusive: Whether the value that fails `predicate` is sent before completing.
    /// - Returns: The values up to (and, with `inclusive`, including) the first that fails.
    public func take(while predicate: @escaping (Value) -> Bool, inclusive: Bool) -> Signal<Value> {
        lift { downstream in
            .relay(to: downstream, next: { value in
                if predicate(value) {
                    downstream.sendNext(value)
                } else {
                    if inclusive { downstream.sendNext(value) }
                    downstream.sendCompleted()
                }
            })
        }
    }

    /// The value at `index` (counting from 0), then completion (RxSwift's `elementAt`).
    ///
    ///     source:  -a-b-c-d-|
    ///     result:  -----(c|)        (2)
    ///     source:  -a-|
    ///     result:  ---#             (2: IndexOutOfRangeError)
    ///
    /// A source that completes before sending that value fails with ``IndexOutOfRangeError``,
    /// as RxSwift's `argumentOutOfRange` (Combine's `output(at:)` completes empty instead):
    /// asking for the n-th value says the caller expects one. Errors before it are forwarded;
    /// completing disposes upstream.
    ///
    ///     clicks.element(at: 2).subscribeNext { _ in print("third click") }
    ///
    /// - Parameter index: The position of the value to send; zero or more.
    /// - Returns: A signal of at most one value.
    public func element(at index: Int) -> Signal<Value> {
        precondition(index >= 0, "element(at:) needs an index of zero or more, got \(index)")
        return lift { downstream in
            var seen = 0
            return .relay(
                to: downstream,
                next: { value in
                    if seen == index {
                        downstream.sendNext(value)
                        downstream.sendCompleted()
                    }
                    seen += 1
                },
                completed: { downstream.sendError(IndexOutOfRangeError(index: index, count: seen)) })
        }
    }
}

/// Whether `skip(until:)` lets values through: a pure state machine behind the operator's lock.
///
///     waiting ── triggered() ─────────▶ open   (for good)
///     waiting ── triggerCompleted() ──▶ shut   (for good: the trigger can no longer send)
///     waiting ── triggerFailed() ─────▶ shut   (the error is forwarded: the result ends)
///     open    ── triggerFailed() ─────▶ open   (the error is dropped)
///
/// Invariant: `open` and `shut` are final; only `waiting` changes. A trigger error is
/// forwarded only while `waiting`.
enum SkipUntilGate: Sendable, Equatable {
    case waiting, open, shut

    /// The trigger sent a value.
    mutating func triggered() {
        if self == .waiting { self = .open }
    }

    /// The trigger completed (after a value, this changes nothing).
    mutating func triggerCompleted() {
        if self == .waiting { self = .shut }
    }

    /// The trigger failed: returns whether the error is forwarded (only before its first
    /// value; once open, the trigger's later events do not count).
    mutating func triggerFailed() -> Bool {
        guard self == .waiting else { return false }
        self = .shut
        return true
    }
}
