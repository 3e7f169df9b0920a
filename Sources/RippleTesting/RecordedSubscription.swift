import Ripple

/// When a test signal was subscribed to and when that subscription was disposed (RxTest's
/// `Subscription`); written as a marble subscription line, `"^---!"`.
///
/// `^` marks the subscribe and `!` the dispose, one character per 10 ms frame from time zero;
/// a line without `!` is a subscription still live. A subscription that a terminal event ended
/// is disposed at that event's time.
///
///     let clock = TestScheduler()
///     let source = clock.cold("---a--|")
///     let recorder = clock.record(source.take(1))
///     clock.run()
///     #expect(source.subscriptions == ["^--!"])         // take(1) disposes it at 30 ms
///     #expect(source.subscriptions == [RecordedSubscription(0, 30)])
public struct RecordedSubscription: Equatable, Hashable, Sendable {
    /// When the subscription began.
    public var subscribed: Duration
    /// When it was disposed, or nil while it lives.
    public var disposed: Duration?

    /// A subscription from `subscribed` until `disposed` (nil: still live).
    ///
    ///     RecordedSubscription(subscribed: .milliseconds(200), disposed: .seconds(1))
    public init(subscribed: Duration, disposed: Duration? = nil) {
        self.subscribed = subscribed
        self.disposed = disposed
    }

    /// A subscription in ticks (milliseconds), as RxTest writes it.
    ///
    ///     RecordedSubscription(200, 1000)   // subscribed at 200 ms, disposed at 1000 ms
    ///     RecordedSubscription(200)         // subscribed at 200 ms, still live
    public init(_ subscribed: Int, _ disposed: Int? = nil) {
        self.init(subscribed: .milliseconds(subscribed), disposed: disposed.map { .milliseconds($0) })
    }

    /// A subscription from a marble subscription line: `^` the subscribe, `!` the dispose,
    /// `(^!)` both in one frame; `-` and spaces only besides.
    ///
    ///     RecordedSubscription(marbles: "--^--!")   // 20 ms to 50 ms
    ///
    /// A line that is not one, such as one without `^` or with events, stops the test with a
    /// message naming the column.
    public init(marbles: String, file: StaticString = #fileID, line: UInt = #line) {
        let parsed = Marble.parseOrFail(marbles, file: file, line: line)
        if let event = parsed.events.first {
            preconditionFailure(MarbleSyntaxError(marbles: marbles, column: event.column,
                                                  message: "a subscription line has only - ^ ! ( )").description,
                                file: file, line: line)
        }
        guard let start = parsed.subscriptionFrame else {
            preconditionFailure(MarbleSyntaxError(marbles: marbles, column: 1, message: "a subscription line needs '^'").description,
                                file: file, line: line)
        }
        self.init(subscribed: Marble.frame * start, disposed: parsed.disposalFrame.map { Marble.frame * $0 })
    }
}

extension RecordedSubscription: ExpressibleByStringLiteral {
    /// A subscription from a marble literal: `"^---!"`.
    ///
    ///     #expect(source.subscriptions == ["^---!", "----^-!"])
    public init(stringLiteral marbles: String) { self.init(marbles: marbles) }
}

extension RecordedSubscription: CustomStringConvertible {
    /// The subscription as a marble line, such as `--^--!`; as times (`200ms–1000ms`) when one
    /// is off the 10 ms grid.
    public var description: String {
        let times = [subscribed] + (disposed.map { [$0] } ?? [])
        guard times.allSatisfy({ $0 >= .zero && ($0 / Marble.frame).rounded() == $0 / Marble.frame }) else {
            return "\(Marble.format(subscribed))–\(disposed.map(Marble.format) ?? "")"
        }
        let start = Int(subscribed / Marble.frame)
        let lead = String(repeating: "-", count: start)
        guard let disposed else { return lead + "^" }
        let end = Int(disposed / Marble.frame)
        if end <= start { return lead + "(^!)" }
        return lead + "^" + String(repeating: "-", count: end - start - 1) + "!"
    }
}
