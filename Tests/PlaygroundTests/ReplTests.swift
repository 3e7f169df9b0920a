import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import RipplePlayground
import RippleTestSupport

/// A session of the interactive mode in-process: `lines` are typed one by one.
struct Session {
    var stdout: [String] = []
    var stderr: [String] = []
    var prompts: [String] = []
    var status: Int32 = 0

    init(_ lines: [String], arguments: [String] = ["repl"], isTerminal: Bool = false) {
        var out: [String] = [], err: [String] = [], prompts: [String] = []
        var typed = lines[...]
        let command = PlaygroundCommand(
            readStandardInput: { [] },
            standardOutput: { out.append(contentsOf: $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)) },
            standardError: { err.append($0) },
            isTerminal: isTerminal,
            readLine: { typed.popFirst() },
            prompt: { prompts.append($0) })
        status = command.run(arguments)
        stdout = out
        stderr = err
        self.prompts = prompts
    }

    /// What followed the greeting.
    var afterGreeting: [String] {
        Array(stdout.dropFirst(PlaygroundCommand.greeting.split(separator: "\n").count))
    }
}

@Suite(.leakChecked, .offThePool) struct ReplTests {
    @Test func aSpentFlatMapBudgetFailsOnlyTheStatementThatSpentItNotTheRestOfTheSession() {
        var lines = ["cold c \"(0123456789)\"", "let x1 = c |> flatMap c", "let x2 = x1 |> flatMap c",
                     "let x3 = x2 |> flatMap c"]
        lines += (1...10).map { "subscribe s\($0) to x3" }  // 10 × 10,000 inner values: the budget is spent
        lines += ["cold d \"(ab)\"", "let y = d |> flatMap d", "subscribe fresh to y"]
        let session = Session(lines)
        let fresh = session.stdout.filter { $0.contains("fresh:") }
        #expect(fresh == ["[   0ms] fresh: next (a,a)", "[   0ms] fresh: next (a,b)", "[   0ms] fresh: next (b,a)",
                          "[   0ms] fresh: next (b,b)"], "\(fresh)")
    }

    @Test func eachStatementRunsAsItIsTypedAndTheClockCarriesOn() {
        let session = Session(["subject s", "subscribe a to s", "send s 1", "wait 30ms", "let d = s |> delay 20ms",
                               "subscribe b to d", "send s 2", "wait 20ms"])
        #expect(session.status == 0)
        #expect(session.afterGreeting == ["[   0ms] a: next 1", "[  30ms] a: next 2", "[  50ms] b: next 2", ""])
        #expect(session.prompts == ["[0ms] > ", "[0ms] > ", "[0ms] > ", "[0ms] > ", "[30ms] > ", "[30ms] > ", "[30ms] > ",
                                    "[30ms] > ", "[50ms] > "])
    }

    @Test func aBadLineIsExplainedAndTheSessionGoesOn() {
        let session = Session(["subject s", "frob", "subscribe a to nothing", "subscribe a to s", "let x = s |> map", "send s 1"])
        #expect(session.stderr == [
            "<repl>:2:1: error: unknown statement 'frob'",
            "<repl>:3:16: error: unknown name 'nothing'",
            "<repl>:5:17: error: expected +N or *N after 'map'",
        ])
        // 'a' refused on line 3 was not defined; 'x' refused on line 5 neither.
        #expect(session.afterGreeting == ["[   0ms] a: next 1", ""])
        let again = Session(["subject s", "let x = s |> map", "let x = s |> map +1", "subscribe a to x", "send s 1"])
        #expect(again.afterGreeting == ["[   0ms] a: next 2", ""])
    }

    @Test func marblesDrawsWhatHappenedSoFar() {
        let session = Session(["subject s", "subscribe a to s", "send s 1", "wait 20ms", "send s 2", "marbles", "quit", "send s 3"])
        #expect(session.afterGreeting == [
            "[   0ms] a: next 1", "[  20ms] a: next 2",
            "marbles: one character per 10 ms, 0ms to 20ms", "  s  1-2", "  a  1-2",
        ])
    }

    @Test func helpListDemoAndTourWorkInsideTheSession() {
        let help = Session(["help"])
        #expect(help.afterGreeting.dropLast() == Language.reference.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)[...])
        let demo = Session(["demo subject", "demo nothing"])
        #expect(demo.afterGreeting == ["== subject: RACSubject: no history; a subscriber sees only later values ==",
                                       "s1: next aaa", "s1: next bbb", "s2: next bbb", ""])
        #expect(demo.stderr == ["<repl>:2:6: error: unknown demo 'nothing'; 'list' shows them"])
        #expect(Session(["list"]).afterGreeting.count == Demo.all.count + 1)
        #expect(Session(["tour"]).afterGreeting.dropLast() == Run([]).stdout[...])
    }

    @Test func theGreetingSaysHowToBegin() {
        let session = Session([])
        let greeting = session.stdout.joined(separator: "\n")
        for hint in ["subject s", "demo NAME", "tour", "help", "quit"] {
            #expect(greeting.contains(hint), "\(hint)")
        }
        #expect(session.stdout.count <= 6)
    }

    @Test func noArgumentsStartTheSessionOnATerminalAndTheTourOtherwise() {
        #expect(Session(["subject s"], arguments: [], isTerminal: true).stdout.first == PlaygroundCommand.greeting.split(separator: "\n").first.map(String.init))
        #expect(Session([], arguments: [], isTerminal: false).stdout == Run([]).stdout)
        #expect(Run(["repl", "extra"]).status == 2)
    }
}

/// The real executable on a pseudo-terminal: with no arguments it greets and runs what is
/// typed; with standard input piped it plays the tour, as before.
@Suite(.offThePool) struct ReplTerminalTests {
    /// Reads what the terminal shows until `text` appears, or `Workload.hangLimit` passes.
    static func read(_ master: Int32, until text: String) -> String {
        var seen = ""
        let deadline = Date().addingTimeInterval(Workload.hangLimit)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !seen.contains(text), Date() < deadline {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = Glibc.read(master, &buffer, buffer.count)
            if count <= 0 { break }
            seen += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return seen
    }

    @Test func onATerminalWithNoArgumentsStatementsRunAsTheyAreTyped() throws {
        var master: Int32 = -1, slave: Int32 = -1
        #expect(openpty(&master, &slave, nil, nil, nil) == 0)
        defer { close(master) }
        let process = Process()
        process.executableURL = ExecutableTests.executable
        process.arguments = []
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        try process.run()
        try terminal.close()
        func type(_ line: String) { _ = (line + "\n").withCString { Glibc.write(master, $0, strlen($0)) } }

        let greeting = Self.read(master, until: "[0ms] > ")
        #expect(greeting.contains("ripple-playground: statements run as you type them"))
        type("subject s")
        type("subscribe a to s")
        type("send s hello")
        #expect(Self.read(master, until: "a: next hello").contains("[   0ms] a: next hello"))
        type("wait 50ms")
        #expect(Self.read(master, until: "[50ms] > ").contains("[50ms] > "))
        type("send nothing 1")
        #expect(Self.read(master, until: "error").contains("<repl>:5:6: error: unknown name 'nothing'"))
        type("send s again")
        type("marbles")
        let drawn = Self.read(master, until: "  a  ")
        #expect(drawn.contains("[  50ms] a: next again"))
        #expect(drawn.contains("marbles: "))
        type("quit")
        let deadline = Date().addingTimeInterval(Workload.hangLimit)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func withStandardInputPipedNoArgumentsStillPlayTheTour() throws {
        let run = try launchBounded([], stdin: "subject s\n")
        #expect(run.status == 0)
        #expect(run.out.hasPrefix("== subject: "))
    }
}
