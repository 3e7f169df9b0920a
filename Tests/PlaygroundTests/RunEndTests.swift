import Foundation
import Testing
import Ripple
@testable import RipplePlayground
import RippleTestSupport

/// What a run leaves behind once it has ended, checked while its interpreter is still alive:
/// after the interpreter is gone everything it owned is gone too, so only this shows whether
/// the run itself ended what it started.
@Suite(.leakChecked, .offThePool) struct RunEndTests {
    /// Runs `script` to its end; returns the subscriptions it left alive and the actions
    /// still waiting to run on its virtual clock, counted before the interpreter goes.
    static func leftovers(of script: String) -> (subscriptions: Int, timers: Int, lines: [String]) {
        guard case .success(let parsed) = Script.parse(script) else {
            Issue.record("does not parse: \(script)")
            return (0, 0, [])
        }
        let scope = RippleDebug.Scope()
        var lines: [String] = []
        let interpreter = Interpreter { lines.append($0) }
        let subscriptions = RippleDebug.counting(in: scope) {
            interpreter.run(parsed)
            return scope.liveSubscriptions
        }
        return (subscriptions, interpreter.liveTimers, lines)
    }

    static let scripts: [String] = operatorScripts.map { (try? String(contentsOfFile: operatorScriptPath($0), encoding: .utf8)) ?? "" } + [
        "promise p\ninterval i 10ms\nset p i\nwait 50ms",
        "promise p\ncold c \"-1-2-3-4-5\"\nset p c\nwait 20ms",
        "interval i 10ms\nlet d = i |> replayLazily\nsubscribe a to d\nwait 30ms\ndispose a",
        "interval i 10ms\nlet d = i |> publish |> autoconnect\nsubscribe a to d\nwait 30ms",
        "interval i 10ms\nlet d = i |> multicast replay 1\nconnect d\nwait 30ms",
        "subject s\nlet d = s |> buffer 10ms\nsubscribe a to d\nwait 30ms",
        "interval i 10ms\nsubject s\nlet d = s |> switchToLatest\nsubscribe a to d\nsend s i\nwait 30ms",
        "interval i 10ms\nlet d = i |> deliverOn 1 dropNewest\nsubscribe a to d\nwait 35ms",
        "owner o\ninterval i 10ms\nlet d = i |> takeDuring o |> subscribeOn\nsubscribe a to d",
    ]

    @Test(arguments: scripts)
    func aRunEndsEverySubscriptionAndTimerItStarted(script: String) {
        let left = Self.leftovers(of: script)
        #expect(left.subscriptions == 0, "subscriptions still alive after the run of:\n\(script)")
        #expect(left.timers == 0, "timers still on the clock after the run of:\n\(script)")
    }

    @Test func aPromisesSourceEndsWithTheRunAndItsOnDisposePrintsInsteadOfCrashingAtExit() throws {
        // The promise held its source until its deinit, which ran the onDispose action after
        // the interpreter was gone: a trap at exit (status 134) instead of a clean end.
        let script = "promise p\nsubject s\nlet d = s |> onDispose\nset p d\nsend s 1\n"
        let run = try launchBounded(["run", "-"], stdin: script)
        #expect(run.status == 0)
        #expect(run.err.isEmpty)
        #expect(run.out == "[d] onDispose\n")
        #expect(Self.leftovers(of: script).lines == ["[d] onDispose"])
    }

    @Test func aTimedBufferStopsAtTheRunsTickBudgetInsteadOfRunningForever() throws {
        // buffer DURATION closes a span every DURATION, values or not: a 1 ms span over a
        // 999999999 s wait was 10^12 spans, a run that never ended.
        let script = "subject s\nlet b = s |> buffer 1ms\nsubscribe a to b\nsend s 1\nwait 999999999s\n"
        let run = try launchBounded(["run", "-"], stdin: script)
        #expect(run.status == 0)
        guard run.status != nil else { return }  // killed: the same run in-process would not end either
        let limited = Run(script: script)
        #expect(limited.stdout == ["a: next [1]", "a: error more than \(InnerBudget.tickLimit) interval ticks in one run"])
    }

    @Test func aTimedBufferStillSendsItsSpansAndCompletesWithItsSource() {
        let run = Run(script: "subject s\nlet b = s |> buffer 10ms\nsubscribe a to b\nsend s 1\nwait 25ms\nsend s 2 3\ncomplete s\nwait 100ms", ["--times"])
        #expect(run.stdout == ["[  10ms] a: next [1]", "[  25ms] a: next [2,3]", "[  25ms] a: completed"])
    }
}
