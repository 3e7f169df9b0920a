import Foundation
import Testing
@testable import RipplePlayground
import RippleTestSupport

/// What a child process left behind: its exit status (nil when it had to be killed) and output.
struct BoundedLaunch {
    var status: Int32?
    var out: String
    var err: String
}

/// Output of a child, collected on its own thread.
final class OutputCollector: @unchecked Sendable {
    var data = Data()
    let done = DispatchSemaphore(value: 0)

    func collect(_ pipe: Pipe) {
        Thread { [self] in
            data = pipe.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }.start()
    }
}

/// Writes `text` to a child's standard input and closes it. A child that exits before reading
/// it all (a script error on its first line) closes the pipe: the write then fails with EPIPE,
/// which is ignored, instead of SIGPIPE killing the whole test process.
func feed(_ input: Pipe, _ text: String) {
    signal(SIGPIPE, SIG_IGN)
    try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    try? input.fileHandleForWriting.close()
}

/// Runs the built `ripple-playground` with a watchdog: a child still running after
/// `Workload.hangLimit` (or `limit` seconds, if longer) is killed and reported with a nil status,
/// so a script that hangs fails its test instead of blocking the suite. The limit is a guard
/// only: on a busy machine a child can wait seconds for a core.
func launchBounded(_ arguments: [String], stdin: String, limit: TimeInterval? = nil) throws -> BoundedLaunch {
    let limit = max(Workload.hangLimit, limit ?? 0)
    let process = Process()
    process.executableURL = ExecutableTests.executable
    process.arguments = arguments
    let input = Pipe(), output = Pipe(), error = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let out = OutputCollector(), err = OutputCollector()
    out.collect(output)
    err.collect(error)
    feed(input, stdin)
    let deadline = Date().addingTimeInterval(limit)
    while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    let finished = !process.isRunning
    if !finished {
        process.terminate()
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    out.done.wait()
    err.done.wait()
    // Only the first bytes: a runaway child may have printed without end.
    func text(_ data: Data) -> String { String(decoding: data.prefix(4_096), as: UTF8.self) }
    return BoundedLaunch(status: finished ? process.terminationStatus : nil, out: text(out.data), err: text(err.data))
}

/// A script that would feed values back into themselves forever, and the errors it must get.
typealias FeedbackScript = BadScript

/// Feedback cycles: the only statement that connects a signal to an input is `set PROMISE
/// SOURCE`, so every cycle runs through a promise set from a signal that depends on it.
/// Each is refused by the checker, before anything runs, never left to spin.
@Suite(.leakChecked) struct FeedbackCycleTests {
    static let forever = "a promise fed by its own values would never stop"

    static let table: [FeedbackScript] = [
        .init(name: "a promise set from itself, after it has a value",
              script: "promise p\nsubject s\nset p s\nsend s 1\nset p p",
              errors: ["<stdin>:5:7: error: cannot set 'p' from itself: \(forever)"]),
        .init(name: "a promise set from itself, then fed through its old source",
              script: "promise p\nset p p\nsubject s\nsubscribe a to p",
              errors: ["<stdin>:2:7: error: cannot set 'p' from itself: \(forever)"]),
        .init(name: "a promise set from a merge of itself and a subject",
              script: "promise p\nsubject s\nlet q = p |> merge s\nset p q\nsend s 1",
              errors: ["<stdin>:4:7: error: cannot set 'p' from 'q': 'q' depends on 'p' (q → p), and \(forever)"]),
        .init(name: "a promise that is an operator's argument, not its source",
              script: "promise p\nsubject s\nlet q = s |> merge p\nset p q\nsend s 1",
              errors: ["<stdin>:4:7: error: cannot set 'p' from 'q': 'q' depends on 'p' (q → p), and \(forever)"]),
        .init(name: "a chain of lets leading back to the promise",
              script: """
                  promise p
                  subject s
                  let a = p |> map +1 |> filter <1000
                  let b = a |> delay 0ms
                  let c = s |> combineLatest b |> startWith 1
                  set p c
                  send s 1
                  """,
              errors: ["<stdin>:6:7: error: cannot set 'p' from 'c': 'c' depends on 'p' (c → b → a → p), and \(forever)"]),
        .init(name: "two promises set from each other",
              script: "promise p\npromise q\nsubject s\nlet m = q |> merge s\nset p m\nset q p\nsend s 1",
              errors: ["<stdin>:6:7: error: cannot set 'q' from 'p': 'p' depends on 'q' (p → m → q), and \(forever)"]),
        .init(name: "two promises set from each other with no value yet",
              script: "promise p\npromise q\nset q p\nset p q",
              errors: ["<stdin>:4:7: error: cannot set 'p' from 'q': 'q' depends on 'p' (q → p), and \(forever)"]),
        .init(name: "a cycle that would end after three values is refused all the same",
              script: "promise p\nsubject s\nlet q = p |> merge s |> take 3\nset p q\nsend s 1",
              errors: ["<stdin>:4:7: error: cannot set 'p' from 'q': 'q' depends on 'p' (q → p), and \(forever)"]),
        .init(name: "a delayed cycle, one turn per wait, is refused too",
              script: "promise p\nsubject s\nlet q = p |> merge s |> delay 10ms\nset p q\nsend s 1\nwait 1s",
              errors: ["<stdin>:4:7: error: cannot set 'p' from 'q': 'q' depends on 'p' (q → p), and \(forever)"]),
        .init(name: "a cycle through every combining operator and the sharing ones",
              script: """
                  promise p
                  subject s
                  let z = s |> zip p
                  let c = s |> concat z
                  let u = s |> takeUntil c |> share |> replayLast
                  let pub = u |> publish
                  set p pub
                  connect pub
                  send s 1
                  """,
              errors: ["<stdin>:7:7: error: cannot set 'p' from 'pub': 'pub' depends on 'p' (pub → u → c → z → p), and \(forever)"]),
        .init(name: "every cycle is reported, and a refused set leaves the old source",
              script: "promise p\npromise q\nsubject s\nset p s\nset p p\nset q q\nset q p\nlet r = q |> map +1\nset p r",
              errors: ["<stdin>:5:7: error: cannot set 'p' from itself: \(forever)",
                       "<stdin>:6:7: error: cannot set 'q' from itself: \(forever)",
                       "<stdin>:9:7: error: cannot set 'p' from 'r': 'r' depends on 'p' (r → q → p), and \(forever)"]),
        // A subject cannot be piped into itself: the language has no statement that feeds a
        // signal into a subject, and a name is usable only after the line defining it.
        .init(name: "a subscriber named after the subject it subscribes to",
              script: "subject s\nsubscribe s to s",
              errors: ["<stdin>:2:11: error: 's' is already defined on line 1"]),
        .init(name: "a let that reads itself",
              script: "subject s\nlet d = d |> merge s",
              errors: ["<stdin>:2:9: error: unknown name 'd'"]),
    ]

    @Test(arguments: table)
    func aFeedbackCycleIsRefusedBeforeAnythingRuns(cycle: FeedbackScript) throws {
        let run = try launchBounded(["run", "-"], stdin: cycle.script + "\nprint should-not-run\n")
        #expect(run.status == 2, "\(run.status.map { "exit \($0)" } ?? "still running after 10 s: killed")")
        #expect(run.out.isEmpty)
        #expect(run.err == cycle.errors.map { $0 + "\n" }.joined())
        let check = Run(["check", "-"], stdin: Array(cycle.script.utf8))
        #expect(check.status == 2)
        #expect(check.stderr == cycle.errors)
    }

    @Test func aPromiseWhoseOldSourceWasReplacedMayBeSetFromTheOther() {
        // q no longer reads p once it is set from s, so p may read q.
        let run = Run(script: "promise p\npromise q\nsubject s\nset q p\nset q s\nset p q\nsubscribe a to p\nsend s 1 2")
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.stdout == ["a: next 1", "a: next 2"])
    }

    @Test func aPromiseMayReadAnotherPromiseAndSignalsBuiltFromIt() {
        let run = Run(script: """
            promise p
            promise q
            subject s
            set q s
            let d = q |> map +1 |> merge q
            set p d
            subscribe a to p
            send s 1
            """)
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.stdout == ["a: next 2", "a: next 1"])
    }
}

/// Signals that combine one source with itself again and again multiply every event: a few
/// lines could ask for billions of subscriptions. The checker refuses that up front.
@Suite(.leakChecked) struct FanOutTests {
    static func doublingChain(_ steps: Int) -> String {
        var lines = ["subject s", "let d0 = s |> map +0"]
        for step in 1...steps { lines.append("let d\(step) = d\(step - 1) |> merge d\(step - 1)") }
        lines += ["subscribe a to d\(steps)", "send s 1"]
        return lines.joined(separator: "\n")
    }

    /// A doubling chain behind a promise, and another built on the promise.
    static let throughAPromise: String = {
        var lines = ["subject s", "let d0 = s |> map +0"]
        for step in 1...10 { lines.append("let d\(step) = d\(step - 1) |> merge d\(step - 1)") }
        lines += ["promise p", "let e0 = p |> map +0"]
        for step in 1...10 { lines.append("let e\(step) = e\(step - 1) |> merge e\(step - 1)") }
        lines += ["subscribe a to e10", "set p d10", "send s 1"]
        return lines.joined(separator: "\n")
    }()

    @Test func aPromiseSetFromAWideSourcePassesItsCopiesOnAndIsRefusedPastTheLimit() throws {
        // 1024 copies into p, each copied 1024 times again after it: a million lines per send.
        let run = try launchBounded(["run", "-"], stdin: Self.throughAPromise)
        #expect(run.status == 2, "\(run.status.map { "exit \($0)" } ?? "still running after 10 s: killed")")
        #expect(run.out.isEmpty)
        #expect(run.err == "<stdin>:26:7: error: setting 'p' from 'd10' would make 'e1' copy each event of its sources 2048 times (at most 1024)\n")
    }

    @Test func aPromiseSetBackToANarrowSourceMayFeedWideSignalsAgain() {
        var lines = ["subject s", "let d0 = s |> map +0"]
        for step in 1...6 { lines.append("let d\(step) = d\(step - 1) |> merge d\(step - 1)") }
        lines += ["promise p", "let e0 = p |> map +0"]
        for step in 1...5 { lines.append("let e\(step) = e\(step - 1) |> merge e\(step - 1)") }
        lines += ["subscribe a to e5", "set p d5", "send s 1", "set p d6", "set p d0", "send s 2"]
        let run = Run(script: lines.joined(separator: "\n"))
        #expect(run.stderr == ["<stdin>:19:7: error: setting 'p' from 'd6' would make 'e5' copy each event of its sources 2048 times (at most 1024)"])
        // Without the too wide one: 32 × 32 copies of the first value, then 1 × 32 of the second.
        lines.removeAll { $0 == "set p d6" }
        let narrow = Run(script: lines.joined(separator: "\n"))
        #expect(narrow.status == 0)
        #expect(narrow.stdout.count == 1_024 + 32)
        #expect(narrow.stdout.last == "a: next 2")
    }

    @Test func aLongChainOnAPromiseUnderManyAlternatingSetsIsCheckedQuickly() {
        // Before a promise counted its widest source, each set walked all 5,000 lets: 83 s.
        var lines = ["subject s", "let w = s |> merge s", "promise p", "let e0 = p |> map +1"]
        for step in 1..<5_000 { lines.append("let e\(step) = e\(step - 1) |> map +1") }
        for _ in 0..<2_500 { lines += ["set p w", "set p s"] }
        let check = runWatched(["check", "-"], stdin: Array(lines.joined(separator: "\n").utf8))
        #expect(check?.status == 0, "\(check.map { "\($0.stderr.prefix(2))" } ?? "still checking after 10 s")")
    }

    @Test func aLetReachingItsSourcesAlongAtMost1024PathsRuns() {
        let run = Run(script: Self.doublingChain(10))
        #expect(run.status == 0)
        #expect(run.stdout.count == 1_024)
    }

    @Test func aLetReachingItsSourcesAlongMoreThan1024PathsIsRefused() throws {
        let run = try launchBounded(["run", "-"], stdin: Self.doublingChain(40))
        #expect(run.status == 2, "\(run.status.map { "exit \($0)" } ?? "still running after 10 s: killed")")
        #expect(run.out.isEmpty)
        // Reported once, where the limit is crossed; the later lines build on a refused one.
        #expect(run.err == "<stdin>:13:5: error: 'd11' would copy each event of its sources 2048 times (at most 1024)\n")
    }
}
