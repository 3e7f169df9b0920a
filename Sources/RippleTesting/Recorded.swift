import Ripple

/// One event at the virtual time it happened (RxTest's `Recorded<Event<T>>`).
///
/// Integer times are ticks of one millisecond (see ``Marble``); `Duration`s are exact.
///
///     let expected: RecordedEvents<Int> = [.next(210, 1), .next(220, 2), .completed(300)]
///     expected[0].time    // 210 ms
public struct Recorded<Value> {
    /// When it happened, on the test scheduler's clock.
    public var time: Duration
    /// What happened.
    public var event: Event<Value>

    /// `event` at `time`.
    ///
    ///     Recorded(time: .milliseconds(210), event: .next(1))
    public init(time: Duration, event: Event<Value>) {
        self.time = time
        self.event = event
    }

    /// A value at `time` ticks (milliseconds).
    ///
    ///     Recorded.next(210, "a")   // "a" at 210 ms
    public static func next(_ time: Int, _ value: Value) -> Self { Self(time: .milliseconds(time), event: .next(value)) }
    /// A value at `time`.
    ///
    ///     Recorded.next(.seconds(1), "a")
    public static func next(_ time: Duration, _ value: Value) -> Self { Self(time: time, event: .next(value)) }
    /// An error at `time` ticks (milliseconds).
    ///
    ///     Recorded<Int>.error(250, TimeoutError(interval: .milliseconds(50)))
    public static func error(_ time: Int, _ error: any Error) -> Self { Self(time: .milliseconds(time), event: .error(error)) }
    /// An error at `time`.
    ///
    ///     Recorded<Int>.error(.milliseconds(250), MarbleError())
    public static func error(_ time: Duration, _ error: any Error) -> Self { Self(time: time, event: .error(error)) }
    /// Completion at `time` ticks (milliseconds).
    ///
    ///     Recorded<Int>.completed(300)
    public static func completed(_ time: Int) -> Self { Self(time: .milliseconds(time), event: .completed) }
    /// Completion at `time`.
    ///
    ///     Recorded<Int>.completed(.milliseconds(300))
    public static func completed(_ time: Duration) -> Self { Self(time: time, event: .completed) }
}

extension Recorded: Equatable where Value: Equatable {}
extension Recorded: Sendable where Value: Sendable {}

extension Recorded: CustomStringConvertible {
    /// The event and its time, such as `next(1) @ 210ms`.
    public var description: String { "\(event) @ \(Marble.format(time))" }
}

/// Events with their virtual times, in order: what a ``TestSubscriber`` received, or what a
/// test expects. Prints as a marble line, so a failing comparison shows two marble lines.
///
/// Equal when the same events happen at the same times (values by `==`, errors by
/// `String(reflecting:)`, as `Event`'s `==`). Write the expected side as a marble string, a
/// list of ``Recorded`` events, or both:
///
///     let clock = TestScheduler()
///     let recorder = clock.record(clock.cold("-a-b-|", values: ["a": 1, "b": 2]).map { $0 * 10 })
///     clock.run()
///     #expect(recorder.events == RecordedEvents("-a-b-|", values: ["a": 10, "b": 20]))
///     #expect(recorder.events == [.next(10, 10), .next(30, 20), .completed(50)])
///     print(recorder.events)   // -a-b-|   a = 10, b = 20
///
/// The line starts at time zero, one character per 10 ms frame; several events in one frame
/// print as a group `(b|)`. A value whose description is not one letter or digit prints as a
/// letter, with a legend after the line (`a = 10`); an error prints as `#` with its
/// description in the legend. Events off the 10 ms grid print as a list of times instead.
public struct RecordedEvents<Value>: RandomAccessCollection {
    /// The events, in the order they happened.
    public var elements: [Recorded<Value>]

    /// Events from a list.
    ///
    ///     RecordedEvents<Int>([.next(10, 1), .completed(20)])
    public init(_ elements: [Recorded<Value>]) { self.elements = elements }

    /// The events a marble string stands for, from time zero (or from `^`, when it has one):
    /// each character mapped through `values`, each `#` to `error`.
    ///
    ///     RecordedEvents("-a-#", values: ["a": 1], error: TimeoutError(interval: .seconds(1)))
    ///
    /// A string that is not valid marbles, or a character missing from `values`, stops the test
    /// with a message naming the column.
    ///
    /// - Parameters:
    ///   - marbles: The marble line (see ``Marble``).
    ///   - values: The value of each value character.
    ///   - error: The error `#` stands for; ``MarbleError`` unless given.
    ///   - origin: The time of the line's first character (or of its `^`); zero unless given.
    public init(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError(), origin: Duration = .zero,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        let parsed = Marble.parseOrFail(marbles, file: file, line: line)
        let start = origin - Marble.frame * (parsed.subscriptionFrame ?? 0)
        elements = Marble.events(parsed, marbles: marbles, values: values, error: error, origin: start, file: file, line: line)
    }

    /// The position of the first event.
    public var startIndex: Int { elements.startIndex }
    /// The position after the last event.
    public var endIndex: Int { elements.endIndex }
    /// The event at `position`.
    public subscript(position: Int) -> Recorded<Value> { elements[position] }

    /// Just the values, in order.
    ///
    ///     RecordedEvents("-a-b|", values: ["a": 1, "b": 2]).values   // [1, 2]
    public var values: [Value] { elements.compactMap(\.event.value) }
}

extension RecordedEvents where Value == String {
    /// The events a marble string stands for, each value its own character as a `String`.
    ///
    ///     RecordedEvents("-a-#", error: TimeoutError(interval: .milliseconds(30)))
    ///
    /// - Parameters:
    ///   - marbles: The marble line (see ``Marble``).
    ///   - error: The error `#` stands for; ``MarbleError`` unless given.
    ///   - origin: The time of the line's first character (or of its `^`); zero unless given.
    public init(
        _ marbles: String, error: any Error = MarbleError(), origin: Duration = .zero,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        let parsed = Marble.parseOrFail(marbles, file: file, line: line)
        let start = origin - Marble.frame * (parsed.subscriptionFrame ?? 0)
        elements = Marble.events(parsed, marbles: marbles, values: nil, error: error, origin: start, file: file, line: line)
    }
}

extension RecordedEvents: ExpressibleByArrayLiteral {
    /// Events from a list literal: `[.next(10, 1), .completed(20)]`.
    public init(arrayLiteral elements: Recorded<Value>...) { self.elements = elements }
}

extension RecordedEvents: ExpressibleByStringLiteral, ExpressibleByUnicodeScalarLiteral,
    ExpressibleByExtendedGraphemeClusterLiteral where Value == String {
    /// Events from a marble literal, each value its character: `"-a-b-|"`; `#` is ``MarbleError``.
    ///
    ///     let expected: RecordedEvents<String> = "-a-(b|)"
    public init(stringLiteral marbles: String) { self.init(marbles) }
}

extension RecordedEvents: Equatable where Value: Equatable {}
extension RecordedEvents: Sendable where Value: Sendable {}

extension RecordedEvents: CustomStringConvertible {
    /// The events as a marble line from time zero, with a legend for values that are not one
    /// letter or digit and for errors; a list of timed events when some are off the 10 ms grid;
    /// `(no events)` when there are none.
    ///
    ///     print(RecordedEvents<Int>([.next(10, 1), .next(30, 22), .completed(40)]))   // -a-b|   a = 1, b = 22
    public var description: String {
        Marble.line(elements.map { ($0.time, $0.event) })
    }
}

extension Marble {
    /// A time as `210ms`, or as `Duration` prints it when it is not a whole number of milliseconds.
    static func format(_ time: Duration) -> String {
        let (quotient, remainder) = time.components.attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000_000_000)
        guard remainder == 0 else { return "\(time)" }
        return "\(time.components.seconds * 1_000 + quotient)ms"
    }

    /// Events at times drawn as one marble line (see ``RecordedEvents``'s description).
    static func line<Value>(_ entries: [(time: Duration, event: Event<Value>)]) -> String {
        let onGrid = entries.allSatisfy { $0.time >= .zero && ($0.time / frame).rounded() == $0.time / frame }
        if !onGrid {
            return "[" + entries.map { "\(format($0.time)): \($0.event)" }.joined(separator: ", ") + "]"
        }
        // Values print as themselves when every one is a single letter or digit; else as letters with a legend.
        let descriptions = entries.compactMap { $0.event.value.map { String(describing: $0) } }
        let inline = descriptions.allSatisfy { $0.count == 1 && ($0.first!.isLetter || $0.first!.isNumber) }
        var letters: [String: Character] = [:]
        var legend: [String] = []
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        if !inline {
            for description in descriptions where letters[description] == nil {
                guard letters.count < alphabet.count else {
                    return "[" + entries.map { "\(format($0.time)): \($0.event)" }.joined(separator: ", ") + "]"
                }
                letters[description] = alphabet[letters.count]
                legend.append("\(alphabet[letters.count - 1]) = \(description)")
            }
        }
        var frames: [Int: [String]] = [:]
        var lastFrame = -1
        for (time, event) in entries {
            let index = Int(time / frame)
            let symbol: String
            switch event {
            case .next(let value):
                let description = String(describing: value)
                symbol = inline ? description : String(letters[description]!)
            case .error(let error):
                symbol = "#"
                legend.append("# = \(String(reflecting: error))")
            case .completed:
                symbol = "|"
            }
            frames[index, default: []].append(symbol)
            lastFrame = max(lastFrame, index)
        }
        if lastFrame < 0 { return "(no events)" }
        let line = (0...lastFrame).map { index in
            guard let symbols = frames[index] else { return "-" }
            return symbols.count == 1 ? symbols[0] : "(" + symbols.joined() + ")"
        }.joined()
        return legend.isEmpty ? line : line + "   " + legend.joined(separator: ", ")
    }
}
