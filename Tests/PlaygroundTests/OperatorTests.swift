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
        let run = try launchBounded(["run", "-"], stdin: script, limit: 60)
        #expect(run.status == 0)
        #expect(run.err.isEmpty)
        let limited = Run(script: script)
        #expect(limited.stdout.last == "a: error more than \(InnerBudget.limit) inner values in one run")
        #expect(limited.stdout.count <= InnerBudget.limit + 1)
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
    ]

    @Test(arguments: errors)
    func badOperatorArgumentsAreReportedWhereTheyAre(bad: BadScript) {
        let run = Run(script: bad.script)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == bad.errors)
    }
}
