import Ripple

/// Parses and checks a whole script before anything runs: every statement's shape, every
/// name (defined once, before use, of the right kind), every number and duration. All
/// problems are reported, each at its line and column.
///
/// The checker also makes sure a valid script ends: a `set` that would feed a promise its own
/// values (a feedback cycle, see `DataFlow`) is refused, and so is a `let` or a `set` that
/// would make more than `maximumFanOut` copies of one source event. Names can be used only
/// after the line defining them, so nothing else can loop.
public struct Script {
    let statements: [Statement]

    /// The most operators one `let` may chain (deeper pipelines are refused, not crashed on).
    static let maximumPipelineLength = 1_000

    /// The most copies of one source event a `let` may make: combining a signal with itself
    /// (`merge`, `concat`, `zip`, `combineLatest`, `takeUntil`) adds up the paths from the
    /// sources, so a few doubling lines would otherwise ask for billions of subscriptions.
    static let maximumFanOut = 1_024

    /// Parses `bytes` (the raw file, any encoding problems included).
    public static func parse(_ bytes: [UInt8]) -> Result<Script, ScriptErrors> {
        let (lines, lexical) = Lexer.lines(of: bytes)
        var parser = Parser()
        var diagnostics = lexical
        var statements: [Statement] = []
        for line in lines {
            switch parser.statement(line) {
            case .success(let statement): statements.append(statement)
            case .failure(let diagnostic): diagnostics.append(diagnostic)
            }
        }
        if diagnostics.isEmpty { return .success(Script(statements: statements)) }
        return .failure(ScriptErrors(diagnostics: diagnostics.sorted { ($0.line, $0.column) < ($1.line, $1.column) }))
    }

    /// Parses script text.
    public static func parse(_ text: String) -> Result<Script, ScriptErrors> {
        parse(Array(text.utf8))
    }
}

/// The statement parser: keeps the names defined so far, in order.
struct Parser {
    private var names: [String: (kind: NameKind, line: Int)] = [:]
    /// The data flow checked for feedback cycles and fan-out (see `DataFlow`).
    private var flow = DataFlow()

    private struct Failure: Error {
        let diagnostic: Diagnostic
    }

    mutating func statement(_ line: Line) -> Result<Statement, Diagnostic> {
        var cursor = Cursor(line: line)
        do {
            let action = try parseAction(&cursor)
            try cursor.expectEnd()
            let text = line.tokens.map { $0.quoted ? "\"\($0.text)\"" : $0.text }.joined(separator: " ")
            return .success(Statement(line: line.number, action: action, text: text))
        } catch let failure as Failure {
            return .failure(failure.diagnostic)
        } catch {
            return .failure(Diagnostic(line: line.number, column: 1, message: "\(error)"))
        }
    }

    // MARK: Statements

    private mutating func parseAction(_ cursor: inout Cursor) throws -> Action {
        let keyword = try cursor.next("a statement")
        switch keyword.text {
        case "subject":
            return .subject(try define(&cursor, as: .subject))
        case "behavior":
            let name = try define(&cursor, as: .behavior)
            return .behavior(name, value: try cursor.next("a default value").text)
        case "replay":
            return try parseReplay(&cursor)
        case "cold":
            let name = try define(&cursor, as: .cold)
            let marbles = try cursor.next("a marble string such as \"-a-b-|\"")
            return .cold(name, marbles: marbles.text, frames: try parseMarbles(marbles, cursor.line))
        case "interval":
            let name = try define(&cursor, as: .cold)
            let column = cursor.peek()?.column ?? cursor.endColumn
            let period = try duration(&cursor)
            guard period > .zero else { throw cursor.failure(at: column, "'interval' takes a period above 0ms") }
            return .interval(name, period: period)
        case "timer":
            let name = try define(&cursor, as: .cold)
            return .timer(name, due: try duration(&cursor))
        case "let":
            return try parseLet(&cursor)
        case "subscribe":
            let sub = try newName(&cursor)
            try cursor.expectWord("to")
            let source = try use(&cursor, where: \.isSignal, expected: "a signal")
            names[sub] = (.subscriber, cursor.line)
            return .subscribe(sub, source: source)
        case "observe":
            let sub = try newName(&cursor)
            try cursor.expectWord("to")
            let source = try use(&cursor, where: \.isSignal, expected: "a signal")
            try cursor.expectWord("owner")
            let owner = try use(&cursor, where: { $0 == .owner }, expected: "an owner")
            names[sub] = (.subscriber, cursor.line)
            return .observe(sub, source: source, owner: owner)
        case "dispose":
            return .dispose(try use(&cursor, where: { $0 == .subscriber }, expected: "a subscriber"))
        case "send":
            let name = try useSendable(&cursor, verb: "send to")
            var values: [String] = []
            while let value = cursor.peek() {
                values.append(value.text)
                cursor.advance()
            }
            if values.isEmpty { throw cursor.failure(at: cursor.endColumn, "expected a value to send") }
            return .send(name, values: values)
        case "complete":
            return .complete(try useSendable(&cursor, verb: "complete"))
        case "fail":
            let name = try useSendable(&cursor, verb: "fail")
            return .fail(name, message: cursor.rest() ?? "error")
        case "wait":
            return .wait(try duration(&cursor))
        case "marbles":
            return .marbles
        case "print":
            return .print(cursor.rest() ?? "")
        case "promise":
            let name = try define(&cursor, as: .promise)
            flow.definePromise(name)
            return .promise(name)
        case "valuepromise":
            let name = try define(&cursor, as: .valuePromise)
            let value = try cursor.next("an initial value").text
            var ignoreRepeated = false
            if let flag = cursor.peek() {
                guard flag.text == "ignoreRepeated" else {
                    throw cursor.failure(at: flag.column, "expected 'ignoreRepeated' or the end of the line, found \(quoted(flag.text))")
                }
                ignoreRepeated = true
                cursor.advance()
            }
            return .valuePromise(name, value: value, ignoreRepeated: ignoreRepeated)
        case "set":
            let name = try use(&cursor, where: { $0 == .promise || $0 == .valuePromise }, expected: "a promise or value promise")
            if names[name]?.kind == .promise {
                let column = cursor.peek()?.column ?? cursor.endColumn
                let source = try use(&cursor, where: \.isSignal, expected: "a signal")
                if let cycle = flow.cycle(setting: name, from: source) {
                    throw cursor.failure(at: column, DataFlow.feedbackMessage(promise: name, source: source, cycle: cycle))
                }
                if let (wide, copies) = flow.fanOut(setting: name, from: source) {
                    throw cursor.failure(at: column, "setting \(quoted(name)) from \(quoted(source)) would make \(quoted(wide)) "
                                         + "copy each event of its sources \(copies) times (at most \(Script.maximumFanOut))")
                }
                try cursor.expectEnd()
                flow.setSource(of: name, to: source)
                return .setPromise(name, source: source)
            }
            return .setValue(name, value: try cursor.next("a value").text)
        case "connect":
            return .connect(try use(&cursor, where: { $0 == .derived(published: true) },
                                    expected: "a signal made with 'let … |> publish' or '|> multicast …'"))
        case "owner":
            return .owner(try define(&cursor, as: .owner))
        case "release":
            return .release(try use(&cursor, where: { $0 == .owner }, expected: "an owner"))
        default:
            throw cursor.failure(at: keyword.column, "unknown statement \(quoted(keyword.text))")
        }
    }

    private mutating func parseReplay(_ cursor: inout Cursor) throws -> Action {
        let name = try define(&cursor, as: .replay)
        var capacity: Int?
        var maxAge: Duration?
        if let token = cursor.peek(), token.text != "maxage" {
            cursor.advance()
            guard let value = Int(token.text), value >= 1 else {
                throw cursor.failure(at: token.column, "bad capacity \(quoted(token.text)); expected a whole number of at least 1")
            }
            capacity = value
        }
        if let token = cursor.peek() {
            guard token.text == "maxage" else {
                throw cursor.failure(at: token.column, "expected 'maxage' or the end of the line, found \(quoted(token.text))")
            }
            cursor.advance()
            maxAge = try duration(&cursor)
        }
        return .replay(name, capacity: capacity, maxAge: maxAge)
    }

    private mutating func parseLet(_ cursor: inout Cursor) throws -> Action {
        let nameToken = try cursor.next("a name")
        try checkNew(nameToken, cursor)
        try cursor.expectWord("=")
        let source: DerivedSource
        if let first = cursor.peek(), !first.quoted, let combination = Combination.allCases.first(where: { $0.keyword == first.text }) {
            // `Signal.zip A B …`: the array form, over any number of signals (none: completes at once).
            cursor.advance()
            var names: [String] = []
            while let token = cursor.peek(), token.text != "|>" || token.quoted {
                names.append(try use(&cursor, where: \.isSignal, expected: "a signal"))
            }
            source = .combined(combination, names)
        } else {
            source = .signal(try use(&cursor, where: \.isSignal, expected: "a signal"))
        }
        var operators: [Operator] = []
        var published = false
        while cursor.peek() != nil {
            try cursor.expectWord("|>")
            let column = cursor.peek()?.column ?? cursor.endColumn
            let op = try parseOperator(&cursor)
            var isAutoconnect = false
            if case .autoconnect = op { isAutoconnect = true }
            if published, !isAutoconnect {
                // `connect NAME` connects the let's one connection: a second one, or an operator
                // after an unconnected one, would leave a connection nobody can connect.
                throw cursor.failure(at: column, "'publish' and 'multicast …' end their 'let' unless 'autoconnect' follows: connect NAME, then build on NAME in another 'let'")
            }
            if case .autoconnect = op {
                guard operators.last?.isConnectable == true else {
                    throw cursor.failure(at: column, "'autoconnect' follows 'publish' or 'multicast …'")
                }
                published = false
            }
            if op.isConnectable { published = true }
            operators.append(op)
            if operators.count > Script.maximumPipelineLength {
                throw cursor.failure(at: 1, "too many operators in one 'let' (at most \(Script.maximumPipelineLength))")
            }
        }
        if operators.isEmpty, case .signal = source {
            throw cursor.failure(at: cursor.endColumn, "expected '|>' and an operator after the source")
        }
        let name = nameToken.text
        // Defined even when refused for its fan-out, so the lines building on it are not
        // reported again as unknown names.
        names[name] = (.derived(published: published), cursor.line)
        let repeats = operators.reduce(1) { min($0 * $1.repeats, Script.maximumFanOut + 1) }
        let crossesLimit = flow.define(name, reading: source.names + operators.flatMap(\.arguments), repeats: repeats)
        if crossesLimit, let copies = flow.copies[name] {
            throw cursor.failure(at: nameToken.column,
                                 "\(quoted(name)) would copy each event of its sources \(copies) times (at most \(Script.maximumFanOut))")
        }
        return .derive(nameToken.text, source: source, operators: operators)
    }

    private mutating func parseOperator(_ cursor: inout Cursor) throws -> Operator {
        let name = try cursor.next("an operator")
        switch name.text {
        case "map":
            let argument = try cursor.next("+N or *N after 'map'")
            if let n = signed(argument.text, prefix: "+") { return .mapAdd(n) }
            if let n = signed(argument.text, prefix: "*") { return .mapMultiply(n) }
            throw cursor.failure(at: argument.column, "'map' takes +N or *N, found \(quoted(argument.text))")
        case "filter": return .filter(try predicate(&cursor, for: "filter"))
        case "takeWhile":
            let test = try predicate(&cursor, for: "takeWhile")
            guard let flag = cursor.peek(), flag.text == "inclusive", !flag.quoted else { return .takeWhile(test) }
            cursor.advance()
            return .takeWhileInclusive(test)
        case "skipWhile": return .skipWhile(try predicate(&cursor, for: "skipWhile"))
        case "compactMap":
            let argument = try cursor.next("'int' after 'compactMap'")
            guard argument.text == "int" else { throw cursor.failure(at: argument.column, "'compactMap' takes 'int', found \(quoted(argument.text))") }
            return .compactMapInteger
        case "take": return .take(try count(&cursor, for: "take"))
        case "skip": return .skip(try count(&cursor, for: "skip"))
        case "first": return .first
        case "last": return .last
        case "distinct":
            guard let flag = cursor.peek(), flag.text == "ignoringCase", !flag.quoted else { return .distinct }
            cursor.advance()
            return .distinctIgnoringCase
        case "scan", "reduce":
            let argument = try cursor.next("'+' after '\(name.text)'")
            guard argument.text == "+" else { throw cursor.failure(at: argument.column, "'\(name.text)' takes '+', found \(quoted(argument.text))") }
            return name.text == "scan" ? .scanAdd : .reduceAdd
        case "collect": return .collect
        case "ignoreValues": return .ignoreValues
        case "materialize": return .materialize
        case "dematerialize": return .dematerialize
        case "startWith": return .startWith(try cursor.next("a value after 'startWith'").text)
        case "delay": return .delay(try duration(&cursor))
        case "throttle":
            let window = try duration(&cursor)
            guard let flag = cursor.peek(), flag.text == "first", !flag.quoted else { return .throttle(window) }
            cursor.advance()
            return .throttleFirst(window)
        case "debounce": return .debounce(try duration(&cursor))
        case "timeout":
            let interval = try duration(&cursor)
            guard let next = cursor.peek(), next.text != "|>" || next.quoted else { return .timeout(interval) }
            return .timeoutSwitching(interval, fallback: try use(&cursor, where: \.isSignal, expected: "a signal or '|>'"))
        case "buffer":
            guard let argument = cursor.peek() else { throw cursor.failure(at: cursor.endColumn, "expected a count or a duration after 'buffer'") }
            if argument.text.last == "s" {
                let span = try duration(&cursor)
                guard span > .zero else { throw cursor.failure(at: argument.column, "'buffer' takes a duration above 0ms") }
                return .bufferTime(span)
            }
            let n = try count(&cursor, for: "buffer")
            guard n >= 1 else { throw cursor.failure(at: argument.column, "'buffer' takes a count of at least 1 or a duration, found '0'") }
            guard let spanToken = cursor.peek(), spanToken.text != "|>" || spanToken.quoted else { return .bufferCount(n) }
            let span = try duration(&cursor)
            guard span > .zero else { throw cursor.failure(at: spanToken.column, "'buffer' takes a duration above 0ms") }
            return .bufferTimeCount(n, span)
        case "retry": return .retry(try count(&cursor, for: "retry"))
        case "retryBackoff":
            let n = try count(&cursor, for: "retryBackoff")
            return .retryBackoff(n, try duration(&cursor))
        case "merge": return .merge(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "concat": return .concat(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "zip", "combineLatest":
            let b = try use(&cursor, where: \.isSignal, expected: "a signal")
            guard let next = cursor.peek(), next.text != "|>" || next.quoted else {
                return name.text == "zip" ? .zip(b) : .combineLatest(b)
            }
            let c = try use(&cursor, where: \.isSignal, expected: "a signal or '|>'")
            guard let fourth = cursor.peek(), fourth.text != "|>" || fourth.quoted else {
                return name.text == "zip" ? .zip3(b, c) : .combineLatest3(b, c)
            }
            let d = try use(&cursor, where: \.isSignal, expected: "a signal or '|>'")
            return name.text == "zip" ? .zip4(b, c, d) : .combineLatest4(b, c, d)
        case "takeUntil": return .takeUntil(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "then": return .then(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "catch": return .catchTo(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "sample":
            let sampler = try use(&cursor, where: \.isSignal, expected: "a signal")
            guard let value = label(&cursor) else { return .sample(sampler) }
            return .sampleDefault(sampler, value: value)
        case "flatMap": return .flatMap(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "concatMap": return .concatMap(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "flatMapLatest": return .flatMapLatest(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "flatMapMax":
            let limit = cursor.peek()
            let n = try count(&cursor, for: "flatMapMax")
            guard n >= 1 else { throw cursor.failure(at: limit!.column, "'flatMapMax' takes a limit of at least 1, found '0'") }
            return .flatMapMax(n, try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "flatMapFirst": return .flatMapFirst(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "flatten": return .flatten
        case "switchToLatest": return .switchToLatest
        case "log": return .log(label(&cursor))
        case "onNext", "onError", "onCompleted", "onSubscribe", "onDispose":
            return .sideEffect(SideEffect(rawValue: name.text)!, label: label(&cursor))
        case "takeDuring": return .takeDuring(owner: try use(&cursor, where: { $0 == .owner }, expected: "an owner"))
        case "subscribeOn": return .subscribeOn
        case "deliverOn":
            guard let argument = cursor.peek(), argument.text != "|>" || argument.quoted else { return .deliverOn(bufferSize: nil, overflow: nil) }
            let size = try count(&cursor, for: "deliverOn")
            guard size >= 1 else { throw cursor.failure(at: argument.column, "'deliverOn' takes a buffer size of at least 1, found '0'") }
            let policies: [String: DeliveryOverflow] = ["dropOldest": .dropOldest, "dropNewest": .dropNewest, "fail": .fail]
            let policyToken = try cursor.next("dropOldest, dropNewest or fail after the buffer size")
            guard let policy = policies[policyToken.text], !policyToken.quoted else {
                throw cursor.failure(at: policyToken.column, "'deliverOn' takes dropOldest, dropNewest or fail after the buffer size, found \(quoted(policyToken.text))")
            }
            return .deliverOn(bufferSize: size, overflow: policy)
        case "replayLazily":
            guard let argument = cursor.peek(), argument.text != "|>" || argument.quoted else { return .replayLazily(nil) }
            let capacity = try count(&cursor, for: "replayLazily")
            guard capacity >= 1 else { throw cursor.failure(at: argument.column, "'replayLazily' takes a capacity of at least 1, found '0'") }
            return .replayLazily(capacity)
        case "multicast":
            let kind = try cursor.next("subject, behavior VALUE or replay [N] after 'multicast'")
            switch kind.quoted ? "" : kind.text {
            case "subject": return .multicast(.subject)
            case "behavior": return .multicast(.behavior(try cursor.next("a default value after 'behavior'").text))
            case "replay":
                guard let argument = cursor.peek(), argument.text != "|>" || argument.quoted else { return .multicast(.replay(nil)) }
                let capacity = try count(&cursor, for: "replay")
                guard capacity >= 1 else { throw cursor.failure(at: argument.column, "'replay' takes a capacity of at least 1, found '0'") }
                return .multicast(.replay(capacity))
            default:
                throw cursor.failure(at: kind.column, "'multicast' takes subject, behavior VALUE or replay [N], found \(quoted(kind.text))")
            }
        case "withLatest": return .withLatest(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "skipUntil": return .skipUntil(try use(&cursor, where: \.isSignal, expected: "a signal"))
        case "combinePrevious": return .combinePrevious(label(&cursor))
        case "takeLast": return .takeLast(try count(&cursor, for: "takeLast"))
        case "elementAt": return .elementAt(try count(&cursor, for: "elementAt"))
        case "takeFor": return .takeFor(try duration(&cursor))
        case "skipFor": return .skipFor(try duration(&cursor))
        case "autoconnect": return .autoconnect
        case "replay": return .replay
        case "replayLast": return .replayLast
        case "publish": return .publish
        case "share": return .share
        case "shareReplay":
            let argument = cursor.peek()
            let n = try count(&cursor, for: "shareReplay")
            guard n >= 1 else { throw cursor.failure(at: argument!.column, "'shareReplay' takes a count of at least 1, found '0'") }
            return .shareReplay(n)
        default:
            throw cursor.failure(at: name.column, "unknown operator \(quoted(name.text))")
        }
    }

    /// An optional label (`log`, `onNext` …): the next token unless it is `|>`.
    private func label(_ cursor: inout Cursor) -> String? {
        guard let label = cursor.peek(), label.text != "|>" || label.quoted else { return nil }
        cursor.advance()
        return label.text
    }

    // MARK: Names

    private mutating func define(_ cursor: inout Cursor, as kind: NameKind) throws -> String {
        let name = try newName(&cursor)
        names[name] = (kind, cursor.line)
        return name
    }

    private func newName(_ cursor: inout Cursor) throws -> String {
        let token = try cursor.next("a name")
        try checkNew(token, cursor)
        return token.text
    }

    private func checkNew(_ token: Token, _ cursor: Cursor) throws {
        guard Self.isName(token.text), !token.quoted else {
            throw cursor.failure(at: token.column, "bad name \(quoted(token.text)); names are letters, digits and '_', not starting with a digit")
        }
        if let existing = names[token.text] {
            throw cursor.failure(at: token.column, "\(quoted(token.text)) is already defined on line \(existing.line)")
        }
    }

    private func use(_ cursor: inout Cursor, where accepts: (NameKind) -> Bool, expected: String) throws -> String {
        let token = try cursor.next(expected)
        guard let entry = names[token.text] else {
            throw cursor.failure(at: token.column, "unknown name \(quoted(token.text))")
        }
        guard accepts(entry.kind) else {
            throw cursor.failure(at: token.column, "\(quoted(token.text)) is a \(entry.kind.description), expected \(expected)")
        }
        return token.text
    }

    private func useSendable(_ cursor: inout Cursor, verb: String) throws -> String {
        let token = try cursor.next("a subject")
        guard let entry = names[token.text] else {
            throw cursor.failure(at: token.column, "unknown name \(quoted(token.text))")
        }
        guard entry.kind.isSendable else {
            throw cursor.failure(at: token.column, "cannot \(verb) \(quoted(token.text)): it is a \(entry.kind.description); only subjects take events")
        }
        return token.text
    }

    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCIILetter || first == "_" else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }

    // MARK: Values

    private func duration(_ cursor: inout Cursor) throws -> Duration {
        let token = try cursor.next("a duration such as 100ms or 2s")
        if let duration = Self.duration(token.text) { return duration }
        throw cursor.failure(at: token.column, "bad duration \(quoted(token.text)); expected NNms or NNs")
    }

    static func duration(_ text: String) -> Duration? {
        let (digits, unit): (Substring, Duration) =
            text.hasSuffix("ms") ? (text.dropLast(2), .milliseconds(1)) :
            text.hasSuffix("s") ? (text.dropLast(1), .seconds(1)) : ("", .zero)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), digits.count <= 9, let n = Int(digits) else { return nil }
        return unit * n
    }

    private func count(_ cursor: inout Cursor, for op: String) throws -> Int {
        let token = try cursor.next("a count after '\(op)'")
        guard token.text.count <= 9, token.text.allSatisfy(\.isASCIIDigit), let n = Int(token.text) else {
            throw cursor.failure(at: token.column, "'\(op)' takes a whole number, found \(quoted(token.text))")
        }
        return n
    }

    /// `>N`, `<N`, `even`, `odd`, `=VALUE` or `!=VALUE`.
    private func predicate(_ cursor: inout Cursor, for op: String) throws -> Predicate {
        let expected = ">N, <N, even, odd, =VALUE or !=VALUE"
        let argument = try cursor.next("\(expected) after '\(op)'")
        let text = argument.text
        if text == "even" { return .even }
        if text == "odd" { return .odd }
        if let n = signed(text, prefix: ">") { return .greater(n) }
        if let n = signed(text, prefix: "<") { return .less(n) }
        if text.hasPrefix("!="), text.count > 2 { return .notEqual(String(text.dropFirst(2))) }
        if text.hasPrefix("="), text.count > 1 { return .equal(String(text.dropFirst())) }
        throw cursor.failure(at: argument.column, "'\(op)' takes \(expected), found \(quoted(text))")
    }

    private func signed(_ text: String, prefix: Character) -> Int? {
        guard text.first == prefix else { return nil }
        let digits = text.dropFirst()
        let body = digits.first == "-" ? digits.dropFirst() : digits
        guard !body.isEmpty, body.count <= 9, body.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(digits)
    }

    private func parseMarbles(_ token: Token, _ line: Int) throws -> [[MarbleEvent]] {
        var frames: [[MarbleEvent]] = []
        var group: [MarbleEvent]?
        var ended = false
        var column = token.column + (token.quoted ? 1 : 0)
        func fail(_ message: String) -> Failure {
            Failure(diagnostic: Diagnostic(line: line, column: column, message: message))
        }
        for character in token.text {
            defer { column += 1 }
            let event: MarbleEvent?
            switch character {
            case "(":
                if group != nil { throw fail("nested '(' in marbles") }
                group = []
                continue
            case ")":
                guard let events = group else { throw fail("')' without '(' in marbles") }
                frames.append(events)
                group = nil
                continue
            case "-": event = nil
            case "|": event = .completed
            case "#": event = .error
            default:
                guard character.isLetter || character.isNumber else {
                    throw fail("bad marble character \(quoted(String(character))); use -, |, #, (…), letters and digits")
                }
                event = .value(String(character))
            }
            if ended, event != nil { throw fail("marble event after the stream ended") }
            if event == .completed || event == .error { ended = true }
            if group != nil {
                if let event { group!.append(event) } else { throw fail("'-' inside '(…)' in marbles") }
            } else {
                frames.append(event.map { [$0] } ?? [])
            }
        }
        if group != nil { throw Failure(diagnostic: Diagnostic(line: line, column: token.column, message: "unclosed '(' in marbles")) }
        return frames
    }

    // MARK: Cursor

    /// Walks the tokens of one line.
    private struct Cursor {
        let tokens: [Token]
        let line: Int
        private var index = 0

        init(line: Line) {
            tokens = line.tokens
            self.line = line.number
        }

        func peek() -> Token? { index < tokens.count ? tokens[index] : nil }
        mutating func advance() { index += 1 }

        /// Column just past the last token, for "expected … at end of line".
        var endColumn: Int {
            guard let last = tokens.last else { return 1 }
            return last.column + last.text.count + (last.quoted ? 2 : 0)
        }

        mutating func next(_ expected: String) throws -> Token {
            guard let token = peek() else { throw failure(at: endColumn, "expected \(expected)") }
            index += 1
            return token
        }

        mutating func expectWord(_ word: String) throws {
            let token = try next("'\(word)'")
            guard token.text == word, !token.quoted else {
                throw failure(at: token.column, "expected '\(word)', found \(quoted(token.text))")
            }
        }

        func expectEnd() throws {
            if let extra = peek() { throw failure(at: extra.column, "unexpected \(quoted(extra.text)) at the end of the statement") }
        }

        /// The remaining tokens joined by spaces (quotes removed), or nil if none.
        mutating func rest() -> String? {
            guard index < tokens.count else { return nil }
            defer { index = tokens.count }
            return tokens[index...].map(\.text).joined(separator: " ")
        }

        func failure(at column: Int, _ message: String) -> Failure {
            Failure(diagnostic: Diagnostic(line: line, column: column, message: message))
        }
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
