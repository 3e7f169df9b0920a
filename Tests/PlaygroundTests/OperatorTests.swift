import Foundation
import Testing
@testable import RipplePlayground
import RippleTestSupport

/// The repository's root, found from this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The operator scripts in `Docs/marbles`, one per operator (`NAME.ripple`).
let operatorScripts: [String] = {
    let folder = repositoryRoot.appendingPathComponent("Docs/marbles")
    let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return files.filter { $0.hasSuffix(".ripple") }.map { String($0.dropLast(".ripple".count)) }.sorted()
}()

func operatorScriptPath(_ name: String) -> String {
    repositoryRoot.appendingPathComponent("Docs/marbles/\(name).ripple").path
}

/// One script per operator, run with `--times`: its events, at their times, are exactly the
/// checked-in ones (worked out from each operator's documented semantics).
@Suite(.leakChecked, .offThePool) struct OperatorGoldenTests {
    @Test(arguments: operatorScripts)
    func operatorScriptPrintsItsCheckedInEvents(name: String) throws {
        let run = Run(["run", operatorScriptPath(name), "--times"])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.stdout == (try golden("operators/\(name)")))
    }

    @Test func everyOperatorHasAGoldenScript() {
        for keyword in Set(Language.operators.map(\.keyword)) {
            #expect(operatorScripts.contains(keyword), "no Docs/marbles/\(keyword).ripple")
        }
        for name in operatorScripts {
            #expect(FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent(
                "Tests/PlaygroundTests/Golden/operators/\(name).txt").path), "no golden output for \(name)")
        }
    }

    @Test func theLanguageDocumentListsEveryStatementAndOperator() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("Docs/Playground.md"), encoding: .utf8)
        for entry in Language.statements + Language.operators {
            let syntax = entry.syntax.replacingOccurrences(of: "|", with: "\\|")
            let meaning = entry.meaning.replacingOccurrences(of: "|", with: "\\|")
            #expect(text.contains("| `\(syntax)` | \(meaning) |"), "\(entry.syntax)")
        }
    }

    @Test(arguments: Language.operators.map(\.example))
    func everyOperatorExampleInTheReferenceParses(example: String) {
        let script = "subject s\nowner o\nlet d = s |> \(example)\nsubscribe a to d\nsend s 1"
        guard case .success = Script.parse(script) else {
            Issue.record("'\(example)' does not parse")
            return
        }
        #expect(Run(script: script).status == 0)
    }

    @Test func helpPrintsEveryStatementAndEveryOperator() {
        let run = Run(["help"])
        #expect(run.status == 0)
        for entry in Language.statements + Language.operators {
            #expect(run.stdout.contains { $0.hasPrefix("  \(entry.syntax)  ") && $0.hasSuffix(entry.meaning) }, "\(entry.syntax)")
        }
    }

    @Test func wordsFailArithmeticPredicatesButNotEqualityOnes() {
        let run = Run(script: "subject s\nlet w = s |> takeWhile !=stop\nlet n = s |> skipWhile <3\nsubscribe a to w\nsubscribe b to n\nsend s 1 go 5 x stop")
        #expect(run.stdout == ["a: next 1", "a: next go", "b: error not an integer: go", "a: next 5", "a: next x", "a: completed"])
    }

    @Test func skipWhileAsksItsTestOnlyWhileSkipping() {
        let run = Run(script: "subject s\nlet n = s |> skipWhile <3\nsubscribe b to n\nsend s 1 5 word")
        #expect(run.stdout == ["b: next 5", "b: next word"])
    }

    @Test func reduceOfNothingIsTheSeedAndOfAWordIsAnError() {
        let run = Run(script: "subject s\nsubject t\nlet a = s |> reduce +\nlet b = t |> reduce +\nsubscribe x to a\nsubscribe y to b\ncomplete s\nsend t 1 two")
        #expect(run.stdout == ["x: next 0", "x: completed", "y: error not an integer: two"])
    }

    @Test func dematerializeFailsOnAValueThatIsNotAnEvent() {
        let run = Run(script: "subject s\nlet d = s |> dematerialize\nsubscribe a to d\nsend s next(1) nope next(2)")
        #expect(run.stdout == ["a: next 1", "a: error not an event: nope"])
    }

    @Test func logUsesItsLabelAndTheTimes() {
        let run = Run(script: "subject s\nlet d = s |> log clicks |> take 1\nsubscribe a to d\nwait 20ms\nsend s 1", ["--times"])
        #expect(run.stdout == ["[  20ms] [clicks] next(1)", "[  20ms] a: next 1", "[  20ms] a: completed"])
    }

    @Test func nestedFlatMapsStopAtTheRunsBudgetInsteadOfRunningForever() throws {
        // Ten values per run, five levels deep: 10^6 inner values, ten times the budget.
        var script = "cold c \"(0123456789)\"\nlet x1 = c |> flatMap c\n"
        for level in 2...5 { script += "let x\(level) = x\(level - 1) |> flatMap c\n" }
        script += "subscribe a to x5\n"
        let run = try launchBounded(["run", "-"], stdin: script)
        #expect(run.status == 0)
        #expect(run.err.isEmpty)
        let limited = Run(script: script)
        #expect(limited.stdout.last == "a: error more than \(InnerBudget.limit) inner values in one run")
        #expect(limited.stdout.count <= InnerBudget.limit + 1)
    }

    @Test func anIntervalStopsAtTheRunsTickBudgetInsteadOfTickingForever() throws {
        let script = "interval i 1ms\nlet r = i |> retry 3\nsubscribe a to r\nwait 999999999s\n"
        let run = try launchBounded(["run", "-"], stdin: script)
        #expect(run.status == 0)
        let limited = Run(script: script)
        #expect(limited.stdout.count == InnerBudget.tickLimit + 1)
        #expect(limited.stdout.last == "a: error more than \(InnerBudget.tickLimit) interval ticks in one run")
        #expect(liveSubscriptionsInThisTest == 0)
    }

    @Test func flattenFollowsTheSignalsItsValuesNameAndFailsOnAnyOtherValue() {
        let run = Run(script: "subject s\ncold c \"(12|)\"\nsubject t\nlet d = s |> flatten\nsubscribe a to d\nsend s c t\nsend t x\nsend s nope")
        #expect(run.stdout == ["a: next 1", "a: next 2", "a: next x", "a: error not a cold signal or subject: nope"])
    }

    @Test func switchToLatestLeavesThePreviousSignal() {
        let run = Run(script: "subject s\nsubject t\nsubject u\nlet d = s |> switchToLatest\nsubscribe a to d\nsend s t\nsend t 1\nsend s u\nsend t 2\nsend u 3")
        #expect(run.stdout == ["a: next 1", "a: next 3"])
    }

    @Test func aMulticastIntoABehaviorSubjectSendsItsDefaultBeforeConnecting() {
        let run = Run(script: "subject s\nlet d = s |> multicast behavior 0\nsubscribe a to d\nsend s 1\nconnect d\nsend s 2")
        #expect(run.stdout == ["a: next 0", "a: next 2"])
    }

    @Test func takeDuringAnOwnerReleasedBeforeTheSubscriptionCompletesAtOnce() {
        let run = Run(script: "owner o\nsubject s\nlet d = s |> takeDuring o\nrelease o\nsubscribe a to d\nsend s 1")
        #expect(run.stdout == ["a: completed"])
    }

    @Test func replayLazilyConnectsAtTheFirstSubscriberAndItsConnectionEndsWithTheRun() {
        let script = "cold c \"-1-2\"\nlet d = c |> onSubscribe |> replayLazily 1\nwait 20ms\nsubscribe a to d\ndispose a\nwait 50ms\nsubscribe b to d"
        let run = Run(script: script)
        #expect(run.stdout == ["[d] onSubscribe", "b: next 2"])
        // Counted while the interpreter lives: once it is gone, so is all it owned, ended or not.
        let left = RunEndTests.leftovers(of: script)
        #expect(left.subscriptions == 0 && left.timers == 0)
    }

    @Test func sideEffectsPrintWithTheirLabelsInTheDocumentedOrder() {
        let run = Run(script: "subject s\nlet d = s |> onSubscribe in |> onNext n |> onCompleted c |> onDispose end\nsubscribe a to d\nsend s 1\ncomplete s")
        #expect(run.stdout == ["[in] onSubscribe", "[n] onNext 1", "a: next 1", "[c] onCompleted", "a: completed", "[end] onDispose"])
    }

    static let errors: [BadScript] = [
        .init(name: "bad predicate", script: "subject s\nlet d = s |> takeWhile 3",
              errors: ["<stdin>:2:24: error: 'takeWhile' takes >N, <N, even, odd, =VALUE or !=VALUE, found '3'"]),
        .init(name: "buffer of zero", script: "subject s\nlet d = s |> buffer 0",
              errors: ["<stdin>:2:21: error: 'buffer' takes a count of at least 1 or a duration, found '0'"]),
        .init(name: "buffer of no time", script: "subject s\nlet d = s |> buffer 0ms",
              errors: ["<stdin>:2:21: error: 'buffer' takes a duration above 0ms"]),
        .init(name: "buffer without argument", script: "subject s\nlet d = s |> buffer",
              errors: ["<stdin>:2:20: error: expected a count or a duration after 'buffer'"]),
        .init(name: "compactMap of something else", script: "subject s\nlet d = s |> compactMap x",
              errors: ["<stdin>:2:25: error: 'compactMap' takes 'int', found 'x'"]),
        .init(name: "reduce of something else", script: "subject s\nlet d = s |> reduce *",
              errors: ["<stdin>:2:21: error: 'reduce' takes '+', found '*'"]),
        .init(name: "flatMap of an unknown name", script: "subject s\nlet d = s |> flatMap nothing",
              errors: ["<stdin>:2:22: error: unknown name 'nothing'"]),
        .init(name: "catch of a subscriber", script: "subject s\nsubscribe a to s\nlet d = s |> catch a",
              errors: ["<stdin>:3:20: error: 'a' is a subscriber, expected a signal"]),
        .init(name: "retries that would copy too much",
              script: "cold c \"#\"\nlet r = c |> retry 40 |> retry 40",
              errors: ["<stdin>:2:5: error: 'r' would copy each event of its sources 1025 times (at most 1024)"]),
        .init(name: "interval of no time", script: "interval i 0ms", errors: ["<stdin>:1:12: error: 'interval' takes a period above 0ms"]),
        .init(name: "interval without a period", script: "interval i", errors: ["<stdin>:1:11: error: expected a duration such as 100ms or 2s"]),
        .init(name: "timer with a bad duration", script: "timer t 5x", errors: ["<stdin>:1:9: error: bad duration '5x'; expected NNms or NNs"]),
        .init(name: "send to an interval", script: "interval i 10ms\nsend i 1",
              errors: ["<stdin>:2:6: error: cannot send to 'i': it is a cold signal; only subjects take events"]),
        .init(name: "autoconnect without publish", script: "subject s\nlet d = s |> autoconnect",
              errors: ["<stdin>:2:14: error: 'autoconnect' follows 'publish' or 'multicast …'"]),
        .init(name: "autoconnect not right after publish", script: "subject s\nlet d = s |> publish |> map +1 |> autoconnect",
              errors: ["<stdin>:2:25: error: 'publish' and 'multicast …' end their 'let' unless 'autoconnect' follows: connect NAME, then build on NAME in another 'let'"]),
        // A second connection in one let, or an operator after an unconnected one, would leave a
        // connection that `connect d` cannot reach: d would stay silent for ever.
        .init(name: "two publishes in one let", script: "subject s\nlet d = s |> publish |> map +1 |> publish",
              errors: ["<stdin>:2:25: error: 'publish' and 'multicast …' end their 'let' unless 'autoconnect' follows: connect NAME, then build on NAME in another 'let'"]),
        .init(name: "an operator after multicast", script: "subject s\nlet d = s |> multicast subject |> take 1",
              errors: ["<stdin>:2:35: error: 'publish' and 'multicast …' end their 'let' unless 'autoconnect' follows: connect NAME, then build on NAME in another 'let'"]),
        .init(name: "connect after autoconnect", script: "subject s\nlet d = s |> publish |> autoconnect\nconnect d",
              errors: ["<stdin>:3:9: error: 'd' is a derived signal, expected a signal made with 'let … |> publish' or '|> multicast …'"]),
        .init(name: "multicast without a subject", script: "subject s\nlet d = s |> multicast",
              errors: ["<stdin>:2:23: error: expected subject, behavior VALUE or replay [N] after 'multicast'"]),
        .init(name: "multicast into something else", script: "subject s\nlet d = s |> multicast foo",
              errors: ["<stdin>:2:24: error: 'multicast' takes subject, behavior VALUE or replay [N], found 'foo'"]),
        .init(name: "multicast replay of zero", script: "subject s\nlet d = s |> multicast replay 0",
              errors: ["<stdin>:2:31: error: 'replay' takes a capacity of at least 1, found '0'"]),
        .init(name: "replayLazily of zero", script: "subject s\nlet d = s |> replayLazily 0",
              errors: ["<stdin>:2:27: error: 'replayLazily' takes a capacity of at least 1, found '0'"]),
        .init(name: "replayLazily of a word", script: "subject s\nlet d = s |> replayLazily x",
              errors: ["<stdin>:2:27: error: 'replayLazily' takes a whole number, found 'x'"]),
        .init(name: "deliverOn without a policy", script: "subject s\nlet d = s |> deliverOn 2",
              errors: ["<stdin>:2:25: error: expected dropOldest, dropNewest or fail after the buffer size"]),
        .init(name: "deliverOn waiting on the virtual clock", script: "subject s\nlet d = s |> deliverOn 2 wait",
              errors: ["<stdin>:2:26: error: 'deliverOn' takes dropOldest, dropNewest or fail after the buffer size, found 'wait'"]),
        .init(name: "deliverOn of zero", script: "subject s\nlet d = s |> deliverOn 0 fail",
              errors: ["<stdin>:2:24: error: 'deliverOn' takes a buffer size of at least 1, found '0'"]),
        .init(name: "takeDuring a subject", script: "subject s\nlet d = s |> takeDuring s",
              errors: ["<stdin>:2:25: error: 's' is a subject, expected an owner"]),
        .init(name: "zip of an unknown third", script: "subject s\nlet d = s |> zip s nobody",
              errors: ["<stdin>:2:20: error: unknown name 'nobody'"]),
        .init(name: "Signal.zip of an unknown name", script: "subject s\nlet d = Signal.zip s nobody",
              errors: ["<stdin>:2:22: error: unknown name 'nobody'"]),
        .init(name: "an unknown Signal form", script: "subject s\nlet d = Signal.zap s",
              errors: ["<stdin>:2:9: error: unknown name 'Signal.zap'"]),
        .init(name: "distinct by something else", script: "subject s\nlet d = s |> distinct nocase",
              errors: ["<stdin>:2:23: error: expected '|>', found 'nocase'"]),
        .init(name: "a Signal.merge of one signal too many times",
              script: "subject s\nlet d = Signal.merge " + Array(repeating: "s", count: 1025).joined(separator: " "),
              errors: ["<stdin>:2:5: error: 'd' would copy each event of its sources 1025 times (at most 1024)"]),
    ]

    @Test(arguments: errors)
    func badOperatorArgumentsAreReportedWhereTheyAre(bad: BadScript) {
        let run = Run(script: bad.script)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == bad.errors)
    }
}
