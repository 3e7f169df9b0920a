import Foundation
import Ripple

/// Carries test values into the scheduler's `@Sendable` actions.
struct Unchecked<Wrapped>: @unchecked Sendable {  // only test signals' own values and subscribers, which reach no thread their signal (Sendable only when its values are) could not
    let value: Wrapped
}

/// The subscribe and dispose times of one test signal, under a lock.
///
/// The lock is an `NSLock` (a pthread mutex), not Synchronization's `Mutex`: on Linux a `Mutex`
/// found held is acquired through its slow path (a spin, then a futex) in the uninstrumented
/// standard library, which ThreadSanitizer cannot see, so a user's `swift test
/// --sanitize=thread` could report the log as raced when two threads used one test signal at once.
final class SubscriptionLog: @unchecked Sendable {  // `entries` is read and written only under `lock`
    private let lock = NSLock()
    private var entries: [RecordedSubscription] = []

    var all: [RecordedSubscription] { withLock { $0 } }

    /// Records a subscribe at `time`; returns its index, for `disposed(_:at:)`.
    func subscribed(at time: Duration) -> Int {
        withLock { entries in
            entries.append(RecordedSubscription(subscribed: time))
            return entries.count - 1
        }
    }

    func disposed(_ index: Int, at time: Duration) {
        withLock { entries in
            if entries[index].disposed == nil { entries[index].disposed = time }
        }
    }

    private func withLock<Result>(_ body: (inout [RecordedSubscription]) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&entries)
    }
}

/// A cold test signal: each subscription plays the same events, at the same times after its
/// own subscribe (RxTest's `ColdObservable`). Made with the test
/// scheduler's `cold(_:values:)`, `cold(_:)` (marbles of strings) or `cold(_:)` (recorded events).
///
/// Events at time zero (the marbles' first frame) are sent during the subscribe itself, as the
/// playground's cold signals do: `cold("(1|)")` behaves like `Signal.just(1)`. Later ones are
/// scheduled on the test scheduler and cancelled by dispose. ``subscriptions`` logs every
/// subscribe and dispose; a terminal event disposes its subscription at that time.
///
///     let clock = TestScheduler()
///     let source = clock.cold("-a-b-|", values: ["a": 1, "b": 2])
///     let recorder = clock.start { source.map { $0 + 1 } }
///     #expect(recorder.events == [.next(210, 2), .next(230, 3), .completed(250)])
///     #expect(source.subscriptions == [RecordedSubscription(200, 250)])
public final class ColdTestSignal<Value>: SignalProtocol {
    /// The events each subscription plays, at times relative to its subscribe.
    public let messages: RecordedEvents<Value>
    private let log = SubscriptionLog()
    private let signal: Signal<Value>

    init(messages: [Recorded<Value>], scheduler: TestScheduler) {
        self.messages = RecordedEvents(messages)
        let log = self.log
        signal = Signal { subscriber in
            let index = log.subscribed(at: scheduler.now)
            let timers = CompoundDisposable()
            // Holds the subscriber until the subscription ends, as a live source does: without a
            // terminal event, the subscription lasts until it is disposed (RxTest's cold
            // observable), not until its last scheduled event has run.
            let end = ActionDisposable { [log, scheduler] in
                withExtendedLifetime(subscriber) {}
                log.disposed(index, at: scheduler.now)
            }
            timers.add(end)
            for message in messages {
                if message.time <= .zero {
                    subscriber.send(message.event)
                } else {
                    let carried = Unchecked(value: (subscriber, message.event))
                    timers.add(scheduler.schedule(after: message.time) { carried.value.0.send(carried.value.1) })
                }
            }
            return timers
        }
    }

    /// Every subscription so far: when it began and when it was disposed.
    ///
    ///     #expect(source.subscriptions == ["--^--!"])
    public var subscriptions: [RecordedSubscription] { log.all }

    /// Subscribes `subscriber`: plays the messages for it from now, and logs the subscription.
    @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        signal.subscribe(subscriber)
    }
}

/// A hot test signal: its events happen at fixed virtual times whoever listens, and a
/// subscriber sees only those after its subscribe (RxTest's `HotObservable`). Made with
/// the test scheduler's `hot(_:values:)`, `hot(_:)` (marbles of strings) or `hot(_:)` (recorded events).
///
/// It is a `Subject` fed by the test scheduler. ``subscriptions`` logs every subscribe and
/// dispose; a terminal event disposes its subscriptions at that time.
///
///     let clock = TestScheduler()
///     let source = clock.hot("-a-^-b-c-|")      // ^ is now; "a" happened before, nobody sees it
///     let recorder = clock.record(source)
///     clock.run()
///     #expect(recorder.events == "--b-c-|")
public final class HotTestSignal<Value>: SignalProtocol {
    /// The events it sends, at their absolute virtual times.
    public let messages: RecordedEvents<Value>
    private let log = SubscriptionLog()
    private let signal: Signal<Value>

    init(messages: [Recorded<Value>], scheduler: TestScheduler) {
        let kept = messages.filter { $0.time >= scheduler.now }
        self.messages = RecordedEvents(kept)
        let subject = Subject<Value>()
        for message in kept {
            let carried = Unchecked(value: (subject, message.event))
            scheduler.schedule(at: message.time) { carried.value.0.send(carried.value.1) }
        }
        let log = self.log
        signal = Signal { subscriber in
            let index = log.subscribed(at: scheduler.now)
            let end = ActionDisposable { [log, scheduler] in log.disposed(index, at: scheduler.now) }
            let subscription = subject.subscribe(subscriber)
            return CompoundDisposable([end, subscription])
        }
    }

    /// Every subscription so far: when it began and when it was disposed.
    ///
    ///     #expect(source.subscriptions == ["--------------------^-------!"])   // 200 ms to 280 ms
    public var subscriptions: [RecordedSubscription] { log.all }

    /// Subscribes `subscriber` to the events still to come, and logs the subscription.
    @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        signal.subscribe(subscriber)
    }
}

extension ColdTestSignal: @unchecked Sendable where Value: Sendable {}  // immutable but for `log`, which locks; Sendable only when its values are, like `Signal`
extension HotTestSignal: @unchecked Sendable where Value: Sendable {}  // immutable but for `log`, which locks; Sendable only when its values are, like `Subject`

extension TestScheduler {
    /// A cold test signal from marbles: each subscription plays them from its own subscribe.
    ///
    /// One character is 10 ms (see ``Marble``); each value character is mapped through
    /// `values`, each `#` is `error`. Frame 0 is sent during the subscribe.
    ///
    ///     let numbers = clock.cold("-a-b-|", values: ["a": 1, "b": 2])
    ///
    /// A string that is not valid cold marbles (`^` and `!` belong to hot and subscription
    /// lines), or a character missing from `values`, stops the test with a message naming the column.
    ///
    /// - Parameters:
    ///   - marbles: The events, relative to each subscription.
    ///   - values: The value of each value character.
    ///   - error: The error `#` stands for; ``MarbleError`` unless given.
    /// - Returns: A signal that also logs its subscriptions.
    public func cold<Value>(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError(),
        file: StaticString = #fileID, line: UInt = #line
    ) -> ColdTestSignal<Value> {
        ColdTestSignal(messages: Self.checked(marbles, hot: false, values: values, error: error, origin: .zero, file: file, line: line),
                       scheduler: self)
    }

    /// A cold test signal of `String`s from marbles: each value is its character.
    ///
    ///     let letters = clock.cold("-a-b-#")   // fails with MarbleError()
    ///
    /// - Parameters:
    ///   - marbles: The events, relative to each subscription.
    ///   - error: The error `#` stands for; ``MarbleError`` unless given.
    /// - Returns: A signal that also logs its subscriptions.
    public func cold(
        _ marbles: String, error: any Error = MarbleError(), file: StaticString = #fileID, line: UInt = #line
    ) -> ColdTestSignal<String> {
        ColdTestSignal(messages: Self.checked(marbles, hot: false, values: nil, error: error, origin: .zero, file: file, line: line),
                       scheduler: self)
    }

    /// A cold test signal from events at times relative to each subscription.
    ///
    ///     let source = clock.cold([.next(10, 1), .next(30, 2), .completed(40)])
    ///
    /// - Parameter messages: The events, in order; times are after each subscribe.
    /// - Returns: A signal that also logs its subscriptions.
    public func cold<Value>(_ messages: [Recorded<Value>]) -> ColdTestSignal<Value> {
        ColdTestSignal(messages: messages, scheduler: self)
    }

    /// A cold test signal from events at times relative to each subscription.
    ///
    ///     let source = clock.cold(.next(10, 1), .next(30, 2), .completed(40))
    ///
    /// - Parameter messages: The events, in order; times are after each subscribe.
    /// - Returns: A signal that also logs its subscriptions.
    public func cold<Value>(_ messages: Recorded<Value>...) -> ColdTestSignal<Value> {
        ColdTestSignal(messages: messages, scheduler: self)
    }

    /// A hot test signal from marbles: `^` is now (the first character, without one); each event
    /// happens at its frame's time whoever listens, and events before `^` are left out.
    ///
    /// One character is 10 ms (see ``Marble``); each value character is mapped through
    /// `values`, each `#` is `error`.
    ///
    ///     let clicks = clock.hot("-x-^-a--b-|", values: ["x": 0, "a": 1, "b": 2])   // a at 20 ms
    ///
    /// A string that is not valid hot marbles (`!` belongs to subscription lines), or a
    /// character missing from `values`, stops the test with a message naming the column.
    ///
    /// - Parameters:
    ///   - marbles: The events; `^` marks the current time.
    ///   - values: The value of each value character.
    ///   - error: The error `#` stands for; ``MarbleError`` unless given.
    /// - Returns: A signal that also logs its subscriptions.
    public func hot<Value>(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError(),
        file: StaticString = #fileID, line: UInt = #line
    ) -> HotTestSignal<Value> {
        HotTestSignal(messages: Self.checked(marbles, hot: true, values: values, error: error, origin: now, file: file, line: line),
                      scheduler: self)
    }

    /// A hot test signal of `String`s from marbles: each value is its character.
    ///
    ///     let letters = clock.hot("--^-a--#")   // a at 20 ms, MarbleError() at 50 ms
    ///
    /// - Parameters:
    ///   - marbles: The events; `^` marks the current time.
    ///   - error: The error `#` stands for; ``MarbleError`` unless given.
    /// - Returns: A signal that also logs its subscriptions.
    public func hot(
        _ marbles: String, error: any Error = MarbleError(), file: StaticString = #fileID, line: UInt = #line
    ) -> HotTestSignal<String> {
        HotTestSignal(messages: Self.checked(marbles, hot: true, values: nil, error: error, origin: now, file: file, line: line),
                      scheduler: self)
    }

    /// A hot test signal from events at absolute virtual times; those before now are left out.
    ///
    ///     let source = clock.hot([.next(150, 1), .next(210, 2), .completed(300)])
    ///
    /// - Parameter messages: The events, in order, at times since the scheduler was created.
    /// - Returns: A signal that also logs its subscriptions.
    public func hot<Value>(_ messages: [Recorded<Value>]) -> HotTestSignal<Value> {
        HotTestSignal(messages: messages, scheduler: self)
    }

    /// A hot test signal from events at absolute virtual times; those before now are left out.
    ///
    ///     let source = clock.hot(.next(150, 1), .next(210, 2), .completed(300))
    ///
    /// - Parameter messages: The events, in order, at times since the scheduler was created.
    /// - Returns: A signal that also logs its subscriptions.
    public func hot<Value>(_ messages: Recorded<Value>...) -> HotTestSignal<Value> {
        HotTestSignal(messages: messages, scheduler: self)
    }

    /// Parses marbles for a test signal, with `^` at `origin`, and checks the marks it may have.
    private static func checked<Value>(
        _ marbles: String, hot: Bool, values: [Character: Value]?, error: any Error, origin: Duration,
        file: StaticString, line: UInt
    ) -> [Recorded<Value>] {
        let parsed = Marble.parseOrFail(marbles, file: file, line: line)
        func mark(_ character: Character, _ message: String) -> Never {
            let column = (Array(marbles).firstIndex(of: character) ?? 0) + 1
            preconditionFailure(MarbleSyntaxError(marbles: marbles, column: column, message: message).description,
                                file: file, line: line)
        }
        if parsed.disposalFrame != nil { mark("!", "'!' belongs in subscription lines, not in \(hot ? "hot" : "cold") marbles") }
        if !hot, parsed.subscriptionFrame != nil { mark("^", "'^' belongs in hot marbles: a cold signal starts at each subscribe") }
        let start = origin - Marble.frame * (parsed.subscriptionFrame ?? 0)
        return Marble.events(parsed, marbles: marbles, values: values, error: error, origin: start, file: file, line: line)
    }
}
