import Foundation
import Testing
@testable import RipplePlayground
import RippleTestSupport

/// A bad script and the exact error lines it must produce.
struct BadScript: CustomTestStringConvertible, Sendable {
    let name: String
    let script: String
    let errors: [String]
    var testDescription: String { name }
}

@Suite(.leakChecked, .offThePool) struct ScriptErrorTests {
    static let table: [BadScript] = [
        .init(name: "unknown statement", script: "frobnicate x", errors: ["<stdin>:1:1: error: unknown statement 'frobnicate'"]),
        .init(name: "unknown name", script: "subscribe a to nothing", errors: ["<stdin>:1:16: error: unknown name 'nothing'"]),
        .init(name: "name used twice", script: "subject s\nbehavior s 1",
              errors: ["<stdin>:2:10: error: 's' is already defined on line 1"]),
        .init(name: "send to a cold signal", script: "cold c \"-a|\"\nsend c 1",
              errors: ["<stdin>:2:6: error: cannot send to 'c': it is a cold signal; only subjects take events"]),
        .init(name: "bad duration", script: "wait 10", errors: ["<stdin>:1:6: error: bad duration '10'; expected NNms or NNs"]),
        .init(name: "bad duration unit", script: "wait 5min", errors: ["<stdin>:1:6: error: bad duration '5min'; expected NNms or NNs"]),
        .init(name: "unknown operator", script: "subject s\nlet d = s |> frob 1",
              errors: ["<stdin>:2:14: error: unknown operator 'frob'"]),
        .init(name: "unterminated quote", script: "subject s\nsend s \"abc", errors: ["<stdin>:2:8: error: unterminated quote"]),
        .init(name: "bad name", script: "subject 9lives", errors: ["<stdin>:1:9: error: bad name '9lives'; names are letters, digits and '_', not starting with a digit"]),
        .init(name: "missing name", script: "subject", errors: ["<stdin>:1:8: error: expected a name"]),
        .init(name: "extra token", script: "subject s extra", errors: ["<stdin>:1:11: error: unexpected 'extra' at the end of the statement"]),
        .init(name: "dispose a subject", script: "subject s\ndispose s",
              errors: ["<stdin>:2:9: error: 's' is a subject, expected a subscriber"]),
        .init(name: "connect without publish", script: "subject s\nlet d = s |> take 1\nconnect d",
              errors: ["<stdin>:3:9: error: 'd' is a derived signal, expected a signal made with 'let … |> publish' or '|> multicast …'"]),
        .init(name: "bad capacity", script: "replay r 0", errors: ["<stdin>:1:10: error: bad capacity '0'; expected a whole number of at least 1"]),
        .init(name: "bad map argument", script: "subject s\nlet d = s |> map x",
              errors: ["<stdin>:2:18: error: 'map' takes +N or *N, found 'x'"]),
        .init(name: "huge number", script: "subject s\nlet d = s |> take 99999999999999999999",
              errors: ["<stdin>:2:19: error: 'take' takes a whole number, found '99999999999999999999'"]),
        .init(name: "bad marble", script: "cold c \"-a-!\"", errors: ["<stdin>:1:12: error: bad marble character '!'; use -, |, #, (…), letters and digits"]),
        .init(name: "marble after end", script: "cold c \"-|a\"", errors: ["<stdin>:1:11: error: marble event after the stream ended"]),
        .init(name: "send nothing", script: "subject s\nsend s", errors: ["<stdin>:2:7: error: expected a value to send"]),
        .init(name: "every error is reported", script: "subject s\nsend q 1\nwait 1x\nlet d = s |> nope",
              errors: ["<stdin>:2:6: error: unknown name 'q'", "<stdin>:3:6: error: bad duration '1x'; expected NNms or NNs",
                       "<stdin>:4:14: error: unknown operator 'nope'"]),
        .init(name: "control character", script: "subject s\u{1}", errors: ["<stdin>:1:10: error: unexpected control character U+0001"]),
    ]

    @Test(arguments: table)
    func aBadScriptPrintsItsExactErrorsAndRunsNothing(bad: BadScript) {
        let run = Run(script: bad.script + "\nprint should-not-run")
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == bad.errors)
        let check = Run(["check", "-"], stdin: Array(bad.script.utf8))
        #expect(check.status == 2)
        #expect(check.stderr == bad.errors)
    }

    @Test func invalidUTF8IsReportedWithItsPosition() {
        let bytes: [UInt8] = Array("subject s\nsend s ".utf8) + [0xFF, 0xFE] + Array("\n".utf8)
        let run = Run(["run", "-"], stdin: bytes)
        #expect(run.status == 2)
        #expect(run.stderr == ["<stdin>:2:8: error: invalid UTF-8"])
    }

    @Test(arguments: 0..<16 as Range<UInt64>)
    func binaryGarbageGetsClearErrorsNotACrash(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let bytes = (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let run = Run(["run", "-"], stdin: bytes)
        #expect(run.status == 2, "seed \(seed)")
        #expect(!run.stderr.isEmpty, "seed \(seed)")
        #expect(run.stderr.allSatisfy { $0.hasPrefix("<stdin>:") && $0.contains(": error: ") }, "seed \(seed): \(run.stderr.prefix(2))")
    }

    @Test func anEmptyScriptAndACommentOnlyScriptRunNothingAndSucceed() {
        for script in ["", "# just a comment\n   # another\n\n"] {
            let run = Run(script: script)
            #expect(run.status == 0)
            #expect(run.stdout.isEmpty && run.stderr.isEmpty)
            #expect(Run(["check", "-"], stdin: Array(script.utf8)).status == 0)
        }
    }

    @Test func aTenThousandLineScriptRuns() {
        var lines = ["subject s", "subscribe a to s"]
        for i in 0..<9_998 { lines.append("send s \(i)") }
        let run = Run(script: lines.joined(separator: "\n"))
        #expect(run.status == 0)
        #expect(run.stdout.count == 9_998)
        #expect(run.stdout.last == "a: next 9997")
    }

    @Test func aVeryLongLineIsHandledAndItsTokenShortenedInMessages() {
        let long = String(repeating: "x", count: 200_000)
        let ok = Run(script: "subject s\nsubscribe a to s\nsend s \(long)")
        #expect(ok.stdout == ["a: next \(long)"])
        let bad = Run(script: "frob\(long)")
        #expect(bad.status == 2)
        #expect(bad.stderr == ["<stdin>:1:1: error: unknown statement 'frob\(String(repeating: "x", count: 36))…'"])
    }

    @Test func tooDeepAPipelineIsRefusedWithAMessage() {
        let chain = Array(repeating: "|> take 1", count: 1_001).joined(separator: " ")
        let run = Run(script: "subject s\nlet d = s \(chain)")
        #expect(run.status == 2)
        #expect(run.stderr == ["<stdin>:2:1: error: too many operators in one 'let' (at most 1000)"])
    }

    @Test func badCommandLinesExitTwoWithAMessage() {
        for arguments in [["frob"], ["demo"], ["demo", "nope"], ["run"], ["run", "a", "b"], ["--bogus"]] {
            let run = Run(arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.first?.hasPrefix("ripple-playground: ") == true)
        }
    }

    @Test func aMissingFileExitsOneWithAMessage() {
        let run = Run(["run", "/nonexistent/script.rp"])
        #expect(run.status == 1)
        #expect(run.stderr == ["ripple-playground: cannot read '/nonexistent/script.rp': no such file"])
    }

    @Test func listNamesEveryDemo() {
        let run = Run(["list"])
        #expect(run.status == 0)
        #expect(run.stdout.count == Demo.all.count)
        #expect(run.stdout.first?.hasPrefix("subject ") == true)
    }
}

/// Standard error of a child, collected on its own thread.
final class ErrorCollector: @unchecked Sendable {
    var data = Data()
    let done = DispatchSemaphore(value: 0)
}

/// Runs the built executable itself, as a user would.
@Suite(.leakChecked, .offThePool) struct ExecutableTests {
    static var executable: URL {
        // The test bundle sits in the build folder next to the products.
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.pathComponents.count > 1 {
            let candidate = url.deletingLastPathComponent().appendingPathComponent("ripple-playground")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            url = url.deletingLastPathComponent()
        }
        return Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("ripple-playground")
    }

    func launch(_ arguments: [String], stdin: String = "") throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read standard error on another thread, so a child that fills one pipe while we
        // drain the other cannot deadlock the test.
        let errors = ErrorCollector()
        let reader = Thread { errors.data = error.fileHandleForReading.readDataToEndOfFile(); errors.done.signal() }
        reader.start()
        feed(input, stdin)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        errors.done.wait()
        let err = errors.data
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test func runDashReadsStandardInputAndExitsZero() throws {
        let result = try launch(["run", "-"], stdin: "subject s\nsubscribe a to s\nsend s 1\ncomplete s\n")
        #expect(result.status == 0)
        #expect(result.out == "a: next 1\na: completed\n")
        #expect(result.err.isEmpty)
    }

    @Test func aBadScriptExitsTwoWithErrorsOnStandardError() throws {
        let result = try launch(["run", "-"], stdin: "subject s\nsend nope 1\n")
        #expect(result.status == 2)
        #expect(result.out.isEmpty)
        #expect(result.err == "<stdin>:2:6: error: unknown name 'nope'\n")
    }

    @Test func checkPrintsNothingForAValidScript() throws {
        let result = try launch(["check", "-"], stdin: "subject s\n")
        #expect(result.status == 0)
        #expect(result.out.isEmpty && result.err.isEmpty)
    }

    @Test func aMissingFileExitsOne() throws {
        #expect(try launch(["run", "/nonexistent"]).status == 1)
    }

    @Test func theTourIsTheDefaultCommand() throws {
        let result = try launch([])
        #expect(result.status == 0)
        #expect(result.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) == (try golden("tour")) + [""])
    }
}

/// Mutated scripts from a seeded generator: every input ends in exit 0 or a clear error,
/// never a crash or a hang.
@Suite(.leakChecked, .offThePool) struct PlaygroundFuzzTests {
    static func mutate(_ script: String, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        var bytes = Array(script.utf8)
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            guard !bytes.isEmpty else { break }
            let position = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)                          // random byte
            case 1: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...20, using: &random)))  // truncate
            case 2: bytes.insert(UInt8(ascii: "\""), at: position)                                        // unbalanced quote
            case 3: bytes.insert(contentsOf: Array("99999999999999999999999".utf8), at: position)         // huge number
            case 4: bytes.insert(contentsOf: Array(String(repeating: " |> take 1", count: 50).utf8), at: position)  // deep chain
            case 5: bytes.insert(contentsOf: Array("\nwait 10ms\n".utf8), at: position)
            default: bytes.insert(contentsOf: bytes[position..<min(bytes.count, position + 30)], at: position)  // duplicate
            }
        }
        return bytes
    }

    @Test func mutatedDemoScriptsEndInSuccessOrAClearError() {
        var unchanged = 0, successes = 0, errors = 0
        for (index, demo) in Demo.all.enumerated() {
            for round in 0..<60 {
                let seed = UInt64(index * 1_000 + round)
                let bytes = Self.mutate(demo.script, seed: seed)
                if bytes == Array(demo.script.utf8) { unchanged += 1 }
                guard let run = runWatched(["run", "-"], stdin: bytes) else {
                    Issue.record("seed \(seed): still running after \(Int(Workload.hangLimit)) s")
                    return
                }
                #expect(run.status == 0 || run.status == 2, "seed \(seed)")
                if run.status == 0 { successes += 1 } else if run.status == 2 { errors += 1 }
                if run.status == 2 {
                    #expect(!run.stderr.isEmpty && run.stderr.allSatisfy { $0.hasPrefix("<stdin>:") && $0.contains(": error: ") },
                            "seed \(seed): \(run.stderr.prefix(2))")
                } else {
                    #expect(run.stderr.isEmpty, "seed \(seed)")
                }
            }
        }
        // The fuzzer explores: nearly every input differs from its demo, and the mutations
        // reach both outcomes (all-errors would mean they only break the first line).
        #expect(unchanged <= Demo.all.count * 60 / 20, "\(unchanged) inputs were the demo unchanged")
        #expect(successes >= 20 && errors >= 20, "\(successes) ran, \(errors) were refused")
    }
}
