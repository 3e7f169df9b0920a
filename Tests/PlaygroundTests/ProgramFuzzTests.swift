import Foundation
import Testing
import Ripple
@testable import RipplePlayground
import RippleTestSupport

/// Runs the command in-process on its own thread, counted in the calling test's leak scope;
/// nil when it has not returned within `Workload.hangLimit` (or `limit` seconds, if longer): the
/// thread is then left behind, but the test fails instead of blocking the suite. The limit is a
/// guard only: on a busy machine the thread can wait seconds for a core.
func runWatched(_ arguments: [String], stdin: [UInt8], limit: TimeInterval? = nil) -> Run? {
    let limit = max(Workload.hangLimit, limit ?? 0)
    final class Result: @unchecked Sendable {
        var run: Run?
        let done = DispatchSemaphore(value: 0)
    }
    let result = Result()
    let scope = RippleDebug.currentScope
    let thread = Thread {
        if let scope {
            result.run = RippleDebug.counting(in: scope) { Run(arguments, stdin: stdin) }
        } else {
            result.run = Run(arguments, stdin: stdin)
        }
        result.done.signal()
    }
    thread.stackSize = 8 << 20
    thread.start()
    guard result.done.wait(timeout: .now() + limit) == .success else { return nil }
    return result.run
}

/// A random well-formed script from a seed: every statement and every operator of the
/// language, deep pipelines, promises set from signals (some of them closing a feedback
/// cycle: from the promise itself, from a `let` built on it, through other promises), and
/// attempts to feed a name into itself (`subscribe s to s`, `let x = x …`). It knows which
/// lines the checker must refuse, and the start of each message.
struct ProgramGenerator {
    /// An error the checker must report: its exact text, or its start and end.
    struct ExpectedError {
        let prefix: String
        let suffix: String

        func matches(_ line: String) -> Bool {
            line.hasPrefix(prefix) && line.hasSuffix(suffix) && line.count >= prefix.count + suffix.count
        }
    }

    private var random: SeededGenerator
    private(set) var lines: [String] = []
    private(set) var expected: [ExpectedError] = []
    /// Whether this program contains a feedback cycle the checker must refuse.
    private(set) var hasCycle = false
    /// The most operators in one of its pipelines.
    private(set) var longestPipeline = 0

    private var counter = 0
    private var definedOn: [String: Int] = [:]
    private var sendables: [String] = []
    private var signals: [String] = []
    private var lets: [String] = []
    private var published: [String] = []
    private var promises: [String] = []
    private var valuePromises: [String] = []
    private var subscribers: [String] = []
    private var owners: [String] = []
    /// What each `let` reads, and what each promise is currently set from.
    private var reads: [String: [String]] = [:]
    /// The most copies each promise has passed on: the checker counts its widest source.
    private var widest: [String: Int] = [:]

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    /// The whole script, one statement a line.
    var script: String { lines.joined(separator: "\n") }

    /// Generates a program of about `statements` statements.
    static func program(seed: UInt64, statements: Int) -> ProgramGenerator {
        var generator = ProgramGenerator(seed: seed)
        for _ in 0..<statements { generator.statement() }
        return generator
    }

    // MARK: Statements

    private mutating func statement() {
        if signals.isEmpty || Int.random(in: 0..<10, using: &random) == 0 { return defineSource() }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18: derive()
        case 18..<30: subscribe()
        case 30..<42: send()
        case 42..<50:
            // Now and then a very long wait: timers far apart, and diagrams too big to draw.
            emit(Int.random(in: 0..<20, using: &random) == 0 ? "wait \(Int.random(in: 1...999_999_999, using: &random))s"
                 : "wait \(Int.random(in: 0...120, using: &random))ms")
        case 50..<58: setPromise()
        case 58..<62: if let v = valuePromises.randomElement(using: &random) { emit("set \(v) \(value())") } else { defineSource() }
        case 62..<66: if let s = sendables.randomElement(using: &random) { emit("complete \(s)") }
        case 66..<69: if let s = sendables.randomElement(using: &random) { emit("fail \(s) boom \(value())") }
        case 69..<73: if let sub = subscribers.randomElement(using: &random) { emit("dispose \(sub)") }
        case 73..<76: if let p = published.randomElement(using: &random) { emit("connect \(p)") }
        case 76..<80: observe()
        case 80..<83: if let o = owners.randomElement(using: &random) { emit("release \(o)") }
        case 83..<85: emit("marbles")
        case 85..<87: emit("print step \(lines.count + 1)")
        case 87..<91: feedItself()
        default: defineSource()
        }
    }

    private mutating func defineSource() {
        switch Int.random(in: 0..<9, using: &random) {
        case 0, 1: sendable("subject \(name("s", \.sendables))")
        case 2: sendable("behavior \(name("b", \.sendables)) \(value())")
        case 3:
            let name = name("r", \.sendables)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: sendable("replay \(name)")
            case 1: sendable("replay \(name) \(Int.random(in: 1...4, using: &random))")
            case 2: sendable("replay \(name) maxage \(Int.random(in: 1...100, using: &random))ms")
            default: sendable("replay \(name) \(Int.random(in: 1...4, using: &random)) maxage \(Int.random(in: 0...3, using: &random))s")
            }
        case 4: let c = name("c", \.signals); emit("cold \(c) \"\(marbles())\"")
        case 5: let p = name("p", \.promises); signals.append(p); emit("promise \(p)")
        case 6: let i = name("i", \.signals); emit("interval \(i) \(Int.random(in: 1...60, using: &random))ms")
        case 7: let t = name("t", \.signals); emit("timer \(t) \(Int.random(in: 0...80, using: &random))ms")
        default:
            let v = name("v", \.valuePromises)
            signals.append(v)
            emit("valuepromise \(v) \(value())" + (Bool.random(using: &random) ? " ignoreRepeated" : ""))
        }
    }

    private mutating func sendable(_ line: String) {
        signals.append(sendables.last!)
        emit(line)
    }

    private mutating func derive() {
        let shape = Int.random(in: 0..<12, using: &random)
        let deep = shape == 0, wide = shape == 1
        // Wide lets built on promises, to be set from wide sources: copies multiply.
        let source = wide && Bool.random(using: &random) ? promises.randomElement(using: &random) ?? signals.randomElement(using: &random)!
            : signals.randomElement(using: &random)!
        let count = deep ? Int.random(in: 20...200, using: &random)
            : wide ? Int.random(in: 10...45, using: &random) : Int.random(in: 1...4, using: &random)
        // Now and then the array form of a combining operator as the source.
        let combined = !wide && Int.random(in: 0..<8, using: &random) == 0
        var inputs = [source]
        var sourceText = source
        if combined {
            inputs = (0..<Int.random(in: 0...4, using: &random)).map { _ in signals.randomElement(using: &random)! }
            if inputs.reduce(0, { $0 + paths(to: $1) }) > Script.maximumFanOut { inputs = [source] }
            let form = ["Signal.merge", "Signal.concat", "Signal.zip", "Signal.combineLatest"].randomElement(using: &random)!
            sourceText = ([form] + inputs).joined(separator: " ")
        }
        var total = inputs.reduce(0) { $0 + paths(to: $1) }
        var ops: [String] = []
        var isPublished = false
        for _ in 0..<count {
            // A wide let merges its source with itself again and again: many copies per event.
            var op = wide ? "merge" : randomOperator()
            if let combining = Self.combining.first(where: { op == $0 }) {
                // zip and combineLatest take one to three other signals (up to four in all); the
                // other combining operators take one.
                let arity = (op == "zip" || op == "combineLatest") ? Int.random(in: 1...3, using: &random) : 1
                let others = (0..<arity).map { _ in wide ? source : signals.randomElement(using: &random)! }
                let more = others.reduce(0) { $0 + paths(to: $1) }
                if total + more > Script.maximumFanOut {
                    op = "take \(Int.random(in: 1...5, using: &random))"  // stays within the fan-out limit
                } else {
                    total += more
                    inputs += others
                    // flatMapMax takes its limit before the signal's name.
                    let limit = combining == "flatMapMax" ? ["\(Int.random(in: 1...3, using: &random))"] : []
                    op = ([combining] + limit + others).joined(separator: " ")
                    // The forms with a trailing argument: a fallback's timeout, a sample's default.
                    if combining == "timeoutFallback" { op = "timeout \(Int.random(in: 0...40, using: &random))ms \(others[0])" }
                    if combining == "sample" && Bool.random(using: &random) { op += " \(value())" }
                }
            }
            if op == "takeDuring" {
                if owners.isEmpty { emit("owner \(name("o", \.owners))") }
                op = "takeDuring \(owners.randomElement(using: &random)!)"
            }
            if op == "publish" || op.hasPrefix("multicast") {
                isPublished = true
                if Int.random(in: 0..<3, using: &random) == 0 {
                    ops.append(op)
                    op = "autoconnect"
                    isPublished = false
                }
            }
            ops.append(op)
            if isPublished { break }  // an unconnected connection ends its let
        }
        let name = name("d", \.lets)
        signals.append(name)
        if isPublished { published.append(name) }
        reads[name] = inputs
        longestPipeline = max(longestPipeline, ops.count)
        emit("let \(name) = \(sourceText) " + ops.map { "|> \($0)" }.joined(separator: " "))
    }

    /// The operators that read another signal of the script.
    static let combining = ["merge", "concat", "zip", "combineLatest", "takeUntil", "sample", "then", "catch",
                            "flatMap", "concatMap", "flatMapLatest", "withLatest", "skipUntil", "timeoutFallback",
                            "flatMapFirst", "flatMapMax"]

    private mutating func randomOperator() -> String {
        let duration = "\(Int.random(in: 0...40, using: &random))ms"
        switch Int.random(in: 0..<64, using: &random) {
        case 0: return "map +\(Int.random(in: -9...9, using: &random))"
        case 1: return "map *\(Int.random(in: -3...3, using: &random))"
        case 2: return "filter >\(Int.random(in: -5...20, using: &random))"
        case 3: return "filter <\(Int.random(in: -5...20, using: &random))"
        case 4: return Bool.random(using: &random) ? "filter even" : "filter odd"
        case 5: return "take \(Int.random(in: 0...6, using: &random))"
        case 6: return "skip \(Int.random(in: 0...3, using: &random))"
        case 7: return "distinct"
        case 8: return "scan +"
        case 9: return "startWith \(value())"
        case 10: return "delay \(duration)"
        case 11: return "throttle \(duration)"
        case 12: return "debounce \(duration)"
        case 13: return "merge"
        case 14: return "concat"
        case 15: return "zip"
        case 16: return "combineLatest"
        case 17: return "takeUntil"
        case 18: return "replayLast"
        case 19: return "publish"
        case 20: return "share"
        case 21: return "first"
        case 22: return "last"
        case 23: return "collect"
        case 24: return "reduce +"
        case 25: return "ignoreValues"
        case 26: return "materialize"
        case 27: return "takeWhile <\(Int.random(in: -5...20, using: &random))"
        case 28: return "skipWhile \(Bool.random(using: &random) ? "even" : "!=\(Int.random(in: 0...9, using: &random))")"
        case 29: return "buffer \(Int.random(in: 1...4, using: &random))"
        case 30: return "buffer \(Int.random(in: 1...40, using: &random))ms"
        case 31: return "timeout \(duration)"
        case 32: return Bool.random(using: &random) ? "compactMap int" : "replay"
        case 33: return "sample"
        case 34: return "then"
        case 35: return "catch"
        case 36: return "flatMap"
        case 37: return "concatMap"
        case 38: return "flatMapLatest"
        case 39: return "flatten"
        case 40: return "switchToLatest"
        case 41: return ["onNext", "onError", "onCompleted", "onSubscribe", "onDispose"].randomElement(using: &random)!
            + (Bool.random(using: &random) ? "" : " label")
        case 42: return "takeDuring"
        case 43: return "subscribeOn"
        case 44: return Bool.random(using: &random) ? "deliverOn"
            : "deliverOn \(Int.random(in: 1...3, using: &random)) \(["dropOldest", "dropNewest", "fail"].randomElement(using: &random)!)"
        case 45: return Bool.random(using: &random) ? "replayLazily" : "replayLazily \(Int.random(in: 1...3, using: &random))"
        case 46: return ["multicast subject", "multicast behavior \(value())", "multicast replay",
                         "multicast replay \(Int.random(in: 1...3, using: &random))"].randomElement(using: &random)!
        case 47: return "distinct ignoringCase"
        case 48: return "withLatest"
        case 49: return "skipUntil"
        case 50: return "timeoutFallback"
        case 51: return Bool.random(using: &random) ? "combinePrevious" : "combinePrevious \(value())"
        case 52: return "takeLast \(Int.random(in: 0...4, using: &random))"
        case 53: return "elementAt \(Int.random(in: 0...4, using: &random))"
        case 54: return "takeFor \(duration)"
        case 55: return "skipFor \(duration)"
        case 56: return "takeWhile <\(Int.random(in: -5...20, using: &random)) inclusive"
        case 57: return "throttle \(duration) first"
        case 58: return "buffer \(Int.random(in: 1...4, using: &random)) \(Int.random(in: 1...40, using: &random))ms"
        case 59: return "flatMapFirst"
        case 60: return "flatMapMax"
        case 61: return "shareReplay \(Int.random(in: 1...3, using: &random))"
        default: return Bool.random(using: &random) ? "dematerialize" : "log"
        }
    }

    private mutating func subscribe() {
        let source = signals.randomElement(using: &random)!
        let sub = name("a", \.subscribers)
        emit("subscribe \(sub) to \(source)")
    }

    private mutating func observe() {
        if owners.isEmpty { emit("owner \(name("o", \.owners))") }
        let source = signals.randomElement(using: &random)!
        let owner = owners.randomElement(using: &random)!
        let sub = name("a", \.subscribers)
        emit("observe \(sub) to \(source) owner \(owner)")
    }

    private mutating func send() {
        guard let subject = sendables.randomElement(using: &random) else { return defineSource() }
        let values = (0..<Int.random(in: 1...4, using: &random)).map { _ in value() }
        emit("send \(subject) " + values.joined(separator: " "))
    }

    /// `set p SOURCE`: a random signal, or on purpose one that depends on `p`.
    private mutating func setPromise() {
        guard let promise = promises.randomElement(using: &random) else { return defineSource() }
        let feedback = signals.filter { depends($0, on: promise) }
        let source: String
        let wide = lets.filter { paths(to: $0) > 8 }
        if !feedback.isEmpty, Int.random(in: 0..<3, using: &random) == 0 {
            source = feedback.randomElement(using: &random)!
        } else if !wide.isEmpty, Int.random(in: 0..<3, using: &random) == 0 {
            source = wide.randomElement(using: &random)!
        } else {
            source = signals.randomElement(using: &random)!
        }
        let line = "set \(promise) \(source)"
        if depends(source, on: promise) {
            hasCycle = true
            let at = "<stdin>:\(lines.count + 1):\(line.count - source.count + 1): error: cannot set '\(promise)' from "
            expected.append(ExpectedError(prefix: at, suffix: "a promise fed by its own values would never stop"))
        } else {
            let before = reads[promise]
            reads[promise] = [source]
            if lets.contains(where: { paths(to: $0) > Script.maximumFanOut }) {
                reads[promise] = before
                let at = "<stdin>:\(lines.count + 1):\(line.count - source.count + 1): error: setting '\(promise)' from '\(source)' would make '"
                expected.append(ExpectedError(prefix: at, suffix: " times (at most \(Script.maximumFanOut))"))
            } else {
                widest[promise] = paths(to: promise)
            }
        }
        emit(line)
    }

    /// Tries to feed a name into itself where the language has no way to: a subscriber named
    /// after the subject it would subscribe, a `let` reading its own name.
    private mutating func feedItself() {
        let line = lines.count + 1
        if Bool.random(using: &random), let subject = sendables.randomElement(using: &random) {
            emit("subscribe \(subject) to \(subject)")
            let message = "'\(subject)' is already defined on line \(definedOn[subject]!)"
            expected.append(ExpectedError(prefix: "<stdin>:\(line):11: error: \(message)", suffix: ""))
        } else {
            counter += 1
            let name = "x\(counter)"
            emit("let \(name) = \(name) |> merge \(signals.randomElement(using: &random)!)")
            expected.append(ExpectedError(prefix: "<stdin>:\(line):\(8 + name.count): error: unknown name '\(name)'", suffix: ""))
        }
    }

    /// How many copies of one source event reach `signal`: the paths to it through lets and
    /// promises' current sources.
    private func paths(to signal: String) -> Int {
        var memo: [String: Int] = [:]
        func count(_ name: String) -> Int {
            if let known = memo[name] { return known }
            let inputs = reads[name] ?? []
            let total = max(inputs.isEmpty ? 1 : inputs.reduce(0) { $0 + count($1) }, widest[name] ?? 1)
            memo[name] = total
            return total
        }
        return count(signal)
    }

    /// Whether `signal` reads `target`, through lets and promises' current sources.
    private func depends(_ signal: String, on target: String) -> Bool {
        var stack = [signal]
        var seen: Set<String> = []
        while let name = stack.popLast() {
            if name == target { return true }
            if seen.insert(name).inserted { stack += reads[name] ?? [] }
        }
        return false
    }

    // MARK: Pieces

    private mutating func name(_ prefix: String, _ list: WritableKeyPath<ProgramGenerator, [String]>) -> String {
        counter += 1
        let name = "\(prefix)\(counter)"
        self[keyPath: list].append(name)
        definedOn[name] = lines.count + 1
        return name
    }

    private mutating func value() -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return ["x", "nil", "word", "\"two words\""].randomElement(using: &random)!
        // The name of a signal, for flatten and switchToLatest (a subject or cold signal, or
        // a name they refuse: a let's or a promise's).
        case 1: return signals.randomElement(using: &random) ?? "x"
        default: return String(Int.random(in: -3...30, using: &random))
        }
    }

    private mutating func marbles() -> String {
        var text = ""
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: text += "-"
            case 1: text += "(\(Int.random(in: 0...9, using: &random))\(Int.random(in: 0...9, using: &random)))"
            default: text += String(Int.random(in: 0...9, using: &random))
            }
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return text + "|"
        case 1: return text + "#"
        default: return text
        }
    }

    private mutating func emit(_ line: String) {
        lines.append(line)
    }
}

/// Random well-formed programs from fixed seeds: each ends in exit 0, or in exactly the
/// `FILE:LINE:COL: error:` lines the generator predicts (feedback cycles, names fed into
/// themselves), within a time bound, under `run` and `check` alike. A failure names its seed
/// and prints the script.
@Suite(.leakChecked, .offThePool) struct ProgramFuzzTests {
    /// A tenth under a sanitizer (each program runs 5–15 times slower there).
    static let programs = Workload.size(1000)
    static let firstSeed: UInt64 = 0x5EED_0000

    @Test func generatedProgramsEndInSuccessOrTheirPredictedErrorsWithinTheTimeBound() {
        var cycles = 0, clean = 0, deep = 0
        for index in 0..<Self.programs {
            let seed = Self.firstSeed + UInt64(index)
            let program = ProgramGenerator.program(seed: seed, statements: Int(seed % 40) + 5)
            let script = program.script
            let context = "seed \(seed), script:\n\(script)"
            let aliveBefore = liveSubscriptionsInThisTest
            guard let run = runWatched(["run", "-"], stdin: Array(script.utf8)) else {
                Issue.record("still running after \(Int(Workload.hangLimit)) s: \(context)")
                return
            }
            let alive = liveSubscriptionsInThisTest - aliveBefore
            #expect(alive == 0, "\(alive) subscriptions left alive: \(context)")
            if program.hasCycle { cycles += 1 }
            if program.expected.isEmpty { clean += 1 }
            if program.longestPipeline >= 20 { deep += 1 }
            if program.expected.isEmpty {
                #expect(run.status == 0, "\(run.stderr.prefix(3)) \(context)")
                #expect(run.stderr.isEmpty, "\(context)")
            } else {
                #expect(run.status == 2, "\(context)")
                #expect(run.stdout.isEmpty, "\(context)")
                #expect(run.stderr.count == program.expected.count
                        && zip(program.expected, run.stderr).allSatisfy { $0.matches($1) },
                        "\(run.stderr) expected \(program.expected.map(\.prefix)) \(context)")
            }
            let check = Run(["check", "-"], stdin: Array(script.utf8))
            #expect(check.status == run.status && check.stderr == run.stderr, "check differs from run: \(context)")
        }
        // The generator explores: feedback cycles, programs that must run, and deep pipelines.
        #expect(cycles >= Self.programs / 10, "only \(cycles) programs with a feedback cycle")
        #expect(clean >= Self.programs / 4, "only \(clean) programs the checker must accept")
        #expect(deep >= 10, "only \(deep) programs with a deep pipeline")
    }
}
