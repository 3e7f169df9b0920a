import Ripple

/// The marble notation RippleTesting reads and writes: the grammar of the playground and of
/// Ripple's documentation, with RxJS's subscription marks.
///
/// One character is one **frame** of ``Marble/frame`` (10 ms) of virtual time:
///
/// | character | meaning |
/// |---|---|
/// | `-` | nothing happens in this frame |
/// | a letter or digit | a value: the character itself, or what the `values` dictionary maps it to |
/// | `\|` | completion |
/// | `#` | an error: the `error` argument, ``MarbleError`` unless given |
/// | `(ab)` | several events in one frame, in order; the group takes one frame |
/// | `^` | a hot signal's subscription point (time zero), or a subscription log's subscribe |
/// | `!` | a subscription log's dispose |
/// | space | ignored, to line marbles up |
///
/// `"-a-b-|"` is `a` at 10 ms, `b` at 30 ms, completion at 50 ms. Times are `Duration`s
/// everywhere in Ripple; where RippleTesting takes plain integers (`Recorded.next(210, value)`),
/// they are **ticks of one millisecond**, so one frame is 10 ticks, as in RxJS.
///
///     let parsed = try Marble.parse("-a-(b|)")
///     parsed.events.map(\.frame)    // [1, 3, 3]
public enum Marble {
    /// The virtual time one marble character stands for: 10 ms, as in the playground and the docs.
    public static let frame: Duration = .milliseconds(10)

    /// One event of a marble string, before its character is mapped to a value.
    public enum Symbol: Equatable, Sendable {
        /// A value, named by its character.
        case value(Character)
        /// `#`.
        case error
        /// `|`.
        case completed
    }

    /// A marble string, read: its events by frame, and where `^` and `!` stand.
    ///
    ///     let parsed = try Marble.parse("--^-a--!")
    ///     parsed.subscriptionFrame     // 2
    ///     parsed.disposalFrame         // 7
    ///     parsed.events                // [(frame: 4, symbol: .value("a"), column: 5)]
    public struct Parsed: Sendable {
        /// The events in order, each with its frame (counted from the first character) and the
        /// 1-based column of its character, for messages.
        public var events: [(frame: Int, symbol: Symbol, column: Int)]
        /// The frame of `^`, if the string has one.
        public var subscriptionFrame: Int?
        /// The frame of `!`, if the string has one.
        public var disposalFrame: Int?
        /// How many frames the string spans.
        public var frameCount: Int
    }

    /// Reads a marble string.
    ///
    /// Checks the grammar: known characters only, no `-` inside or nesting of `(…)`, nothing
    /// after a terminal event, at most one `^` and one `!`, and `!` after `^`.
    ///
    ///     try Marble.parse("-a-$")   // throws: column 4: bad marble character "$" …
    ///
    /// - Parameter marbles: The marble string.
    /// - Returns: Its events by frame and its subscription marks.
    /// - Throws: ``MarbleSyntaxError`` naming the column of the first mistake.
    public static func parse(_ marbles: String) throws(MarbleSyntaxError) -> Parsed {
        var parsed = Parsed(events: [], subscriptionFrame: nil, disposalFrame: nil, frameCount: 0)
        var frame = 0
        var groupStart: Int?
        var ended = false
        var column = 0
        func fail(_ message: String) -> MarbleSyntaxError {
            MarbleSyntaxError(marbles: marbles, column: column, message: message)
        }
        for character in marbles {
            column += 1
            let symbol: Symbol?
            switch character {
            case " ": continue
            case "(":
                if groupStart != nil { throw fail("nested '(' in marbles") }
                groupStart = column
                continue
            case ")":
                if groupStart == nil { throw fail("')' without '(' in marbles") }
                groupStart = nil
                frame += 1
                continue
            case "-":
                if groupStart != nil { throw fail("'-' inside '(…)' in marbles") }
                symbol = nil
            case "^":
                if parsed.subscriptionFrame != nil { throw fail("a second '^' in marbles") }
                parsed.subscriptionFrame = frame
                symbol = nil
            case "!":
                if parsed.disposalFrame != nil { throw fail("a second '!' in marbles") }
                if parsed.subscriptionFrame == nil { throw fail("'!' before '^' in marbles") }
                parsed.disposalFrame = frame
                symbol = nil
            case "|": symbol = .completed
            case "#": symbol = .error
            default:
                guard character.isLetter || character.isNumber else {
                    throw fail("bad marble character \"\(character)\"; use - | # ( ) ^ ! letters, digits and spaces")
                }
                symbol = .value(character)
            }
            if let symbol {
                if ended { throw fail("marble event after the stream ended") }
                if symbol == .completed || symbol == .error { ended = true }
                parsed.events.append((frame, symbol, column))
            }
            if groupStart == nil { frame += 1 }
        }
        if let groupStart {
            column = groupStart
            throw fail("unclosed '(' in marbles")
        }
        parsed.frameCount = frame
        return parsed
    }

    /// Reads a marble string, stopping the test with a precondition failure that names the
    /// column when it is not valid marbles: a typo in a test is the test's bug.
    static func parseOrFail(_ marbles: String, file: StaticString, line: UInt) -> Parsed {
        do {
            return try parse(marbles)
        } catch {
            preconditionFailure(error.description, file: file, line: line)
        }
    }

    /// Maps parsed marbles to events at times: `origin` plus the frame.
    /// A character missing from `values` (when given) is a precondition failure naming its column.
    static func events<Value>(
        _ parsed: Parsed, marbles: String, values: [Character: Value]?, error: any Error, origin: Duration,
        file: StaticString, line: UInt
    ) -> [Recorded<Value>] {
        parsed.events.map { entry in
            let time = origin + frame * entry.frame
            switch entry.symbol {
            case .completed: return Recorded(time: time, event: .completed)
            case .error: return Recorded(time: time, event: .error(error))
            case .value(let character):
                if let values {
                    guard let value = values[character] else {
                        let message = MarbleSyntaxError(
                            marbles: marbles, column: entry.column,
                            message: "\"\(character)\" is not in the values dictionary (\(values.keys.sorted().map(String.init).joined(separator: ", ")))")
                        preconditionFailure(message.description, file: file, line: line)
                    }
                    return Recorded(time: time, event: .next(value))
                }
                guard let value = String(character) as? Value else {
                    preconditionFailure("marbles \"\(marbles)\": values of type \(Value.self) need a values dictionary", file: file, line: line)
                }
                return Recorded(time: time, event: .next(value))
            }
        }
    }
}

/// A marble string that is not valid marbles: where, and why.
///
/// ``Marble/parse(_:)`` throws it; the test signals and the string-literal forms stop the test
/// with its ``description`` as the precondition message.
///
///     do { _ = try Marble.parse("-a-$") } catch { print(error) }
///     // marbles "-a-$", column 4: bad marble character "$"; use - | # ( ) ^ ! letters, digits and spaces
public struct MarbleSyntaxError: Error, Equatable, CustomStringConvertible {
    /// The marble string.
    public let marbles: String
    /// The 1-based column of the character at fault.
    public let column: Int
    /// What is wrong there.
    public let message: String

    /// A syntax error at `column` of `marbles`.
    ///
    ///     MarbleSyntaxError(marbles: "-a-$", column: 4, message: "bad marble character")
    public init(marbles: String, column: Int, message: String) {
        self.marbles = marbles
        self.column = column
        self.message = message
    }

    /// `marbles "…", column N: message`.
    public var description: String { "marbles \"\(marbles)\", column \(column): \(message)" }
}

/// The error a `#` in a marble string stands for when no other error is given.
///
/// All `MarbleError`s with the same message are equal, so an expected marble line with `#`
/// matches a test signal's `#`.
///
///     let failing = scheduler.cold("-a-#")                  // fails with MarbleError()
///     let expected: RecordedEvents<String> = "-a-#"        // expects MarbleError()
public struct MarbleError: Error, Equatable, CustomStringConvertible {
    /// What the error says; `"error"` unless given.
    public let message: String

    /// An error saying `message`.
    ///
    ///     MarbleError("disk full").description   // "disk full"
    public init(_ message: String = "error") { self.message = message }

    /// The message.
    public var description: String { message }
}
