import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.serialized, .leakChecked, .offThePool) struct LinuxBridgeTests {
    @Test func linesFromAPipeArriveThenCompleteAtEndOfInput() throws {
        let pipe = Pipe()
        let r = Recorder<String>()
        let d = Signal.lines(from: pipe.fileHandleForReading).subscribe(r)
        pipe.fileHandleForWriting.write(Data("one\ntw".utf8))
        #expect(waitUntil { r.values == ["one"] })
        pipe.fileHandleForWriting.write(Data("o\r\nthree".utf8))
        try pipe.fileHandleForWriting.close()
        #expect(waitUntil { r.isCompleted })
        #expect(r.events == [.next("one"), .next("two"), .next("three"), .completed])
        d.dispose()
    }

    @Test func aChildProcessesOutputLinesThenCompletionOnStatusZero() {
        let r = Recorder<String>()
        Signal.run(executable: "/bin/sh", arguments: ["-c", "echo a; echo b"]).subscribe(r)
        #expect(waitUntil { r.isCompleted })
        #expect(r.events == [.next("a"), .next("b"), .completed])
    }

    @Test func aNonZeroExitStatusFailsWithTheStatusAfterTheOutput() {
        let r = Recorder<String>()
        Signal.run(executable: "/bin/sh", arguments: ["-c", "echo partial; exit 3"]).subscribe(r)
        #expect(waitUntil { r.isFailed })
        #expect(r.values == ["partial"])
        let error = r.events.last?.error as? ProcessExitError
        #expect(error?.status == 3)
        #expect(error?.signaled == false)
    }

    @Test func disposingTerminatesTheChild() {
        let r = Recorder<String>()
        let d = Signal.run(executable: "/bin/sh", arguments: ["-c", "echo $$; exec sleep 30"]).subscribe(r)
        #expect(waitUntil { !r.values.isEmpty })
        let pid = pid_t(r.values[0])!
        #expect(kill(pid, 0) == 0)
        d.dispose()
        #expect(waitUntil { !isAlive(pid) })
    }

    /// Foundation keeps a `Process` nobody waited for alive forever; the bridge must not let
    /// that pin its subscription (and what the user's callbacks capture). Found by LeakSanitizer.
    @Test func aFinishedChildProcessReleasesItsSubscriptionAndSubscriber() {
        let baseline = liveSubscriptionsInThisTest
        weak var weakRecorder: Recorder<String>?
        do {
            let recorder = Recorder<String>()
            weakRecorder = recorder
            Signal.run(executable: "/bin/sh", arguments: ["-c", "echo a"]).subscribe(recorder)
            Signal.run(executable: "/bin/sh", arguments: ["-c", "exit 4"]).subscribe(next: { _ in })
            #expect(waitUntil { recorder.isCompleted })
        }
        #expect(waitUntil { weakRecorder == nil })
        #expect(waitUntil { liveSubscriptionsInThisTest == baseline })
    }

    /// Running and not a zombie (a terminated child stays a zombie until its parent reaps it).
    private func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        return state != "Z" && state != "X"
    }

    @Test func aMissingExecutableFailsAtOnce() {
        let r = Recorder<String>()
        Signal.run(executable: "/nonexistent/tool").subscribe(r)
        #expect(r.isFailed)
    }

    @Test func unixSignalsSentToThisProcessArriveAndDisposeRestoresTheDefault() {
        // The test runner's threads (and the dispatch threads they start) block every signal;
        // unblock these two on this thread so the kernel has somewhere to deliver them.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SIGUSR1)
        sigaddset(&unblocked, SIGUSR2)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        defer { pthread_sigmask(SIG_BLOCK, &unblocked, nil) }
        let r = Recorder<Int32>()
        let d = Signal.unixSignals(SIGUSR1, SIGUSR2).subscribe(r)  // returns once the sources are registered
        kill(getpid(), SIGUSR1)
        #expect(waitUntil { r.values == [SIGUSR1] })
        kill(getpid(), SIGUSR2)
        #expect(waitUntil { r.values == [SIGUSR1, SIGUSR2] })
        d.dispose()
        var action = sigaction()
        sigaction(SIGUSR1, nil, &action)
        #expect(unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self))
    }

    @Test func intervalOnARealSchedulerTicksUntilDisposed() {
        let ticks = Box<[Int]>([])
        let d = Signal<Int>.interval(.milliseconds(5), on: SerialQueueScheduler(label: "ticks"))
            .subscribeNext { tick in ticks.mutate { $0.append(tick) } }
        #expect(waitUntil { ticks.value.count >= 3 })
        d.dispose()
        let stoppedAt = ticks.value.count
        Thread.sleep(forTimeInterval: 0.05)
        #expect(ticks.value.count <= stoppedAt + 1)
        #expect(Array(ticks.value.prefix(3)) == [0, 1, 2])
    }

    @Test func notificationCenterSignalDeliversUntilDisposed() {
        let center = NotificationCenter()
        let name = Notification.Name("ripple.test")
        let received = Box(0)
        let d = center.signal(for: name).subscribeNext { _ in received.mutate { $0 += 1 } }
        center.post(name: name, object: nil)
        center.post(name: name, object: nil)
        d.dispose()
        center.post(name: name, object: nil)
        #expect(received.value == 2)
    }

    @Test func followReadsAGrowingFileAcrossTruncationAndRotation() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-follow-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.log").path
        try "old line\n".write(toFile: path, atomically: false, encoding: .utf8)
        let r = Recorder<String>()
        let d = Signal.follow(path: path, pollInterval: .milliseconds(10)).subscribe(r)
        func append(_ text: String, to file: String = path) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            try handle.seekToEnd()
            handle.write(Data(text.utf8))
            try handle.close()
        }
        try append("one\ntwo\n")
        #expect(waitUntil { r.values == ["one", "two"] })        // starts at the end: "old line" is skipped
        try "".write(toFile: path, atomically: false, encoding: .utf8)  // truncate
        Thread.sleep(forTimeInterval: 0.05)
        try append("three\n")
        #expect(waitUntil { r.values == ["one", "two", "three"] })
        try append("last of old\n")
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")  // rotate by rename
        try "four\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(waitUntil { r.values == ["one", "two", "three", "last of old", "four"] })
        d.dispose()
    }

    @Test func followWaitsForAFileThatDoesNotExistYet() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-wait-\(UUID()).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = Recorder<String>()
        let d = Signal.follow(path: path, pollInterval: .milliseconds(10)).subscribe(r)
        Thread.sleep(forTimeInterval: 0.05)
        try "hello\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(waitUntil { r.values == ["hello"] })
        d.dispose()
    }
}

/// Runs the built `ripple-logwatch` as a user would.
@Suite(.serialized, .leakChecked, .offThePool) struct LogWatchDaemonTests {
    static var executable: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.pathComponents.count > 1 {
            let candidate = url.deletingLastPathComponent().appendingPathComponent("ripple-logwatch")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            url = url.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/ripple-logwatch")
    }

    final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        func append(_ data: Data) { lock.withLock { text += String(decoding: data, as: UTF8.self) } }
        var lines: [String] { lock.withLock { text.split(separator: "\n").map(String.init) } }
    }

    /// Starts the daemon and returns once it is following `path` (the last argument): it says so
    /// on standard error after it has opened the file at its end and registered its signals.
    func start(_ arguments: [String]) throws -> (Process, Output) {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let pipe = Pipe(), errors = Pipe()
        process.standardOutput = pipe
        process.standardError = errors
        let output = Output(), status = Output()
        pipe.fileHandleForReading.readabilityHandler = { handle in output.append(handle.availableData) }
        errors.fileHandleForReading.readabilityHandler = { handle in status.append(handle.availableData) }
        // A child inherits its parent's blocked signals, and the test runner's threads block them
        // all: with SIGTERM blocked a wrong disposition could never kill the daemon. Start it as a
        // shell would, with nothing blocked (Foundation spawns from the calling thread).
        var nothing = sigset_t(), blocked = sigset_t()
        sigemptyset(&nothing)
        pthread_sigmask(SIG_SETMASK, &nothing, &blocked)
        defer { pthread_sigmask(SIG_SETMASK, &blocked, nil) }
        try process.run()
        let following = "ripple-logwatch: following \(arguments.last ?? "")"
        #expect(waitUntil { status.lines.contains(following) }, "the daemon never started following: \(status.lines)")
        return (process, output)
    }

    /// Waits for the daemon to exit (a hang guard only: how long a shutdown takes on a busy
    /// machine proves nothing); kills it if it never does.
    func expectExit(_ process: Process, sourceLocation: SourceLocation = #_sourceLocation) {
        let exited = waitUntil { !process.isRunning }
        #expect(exited, "the daemon did not exit", sourceLocation: sourceLocation)
        if !exited { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    @Test func followsMatchesRotatesReplaysOnSIGHUPAndExitsCleanlyOnSIGTERM() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-logwatch-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("service.log").path
        try "ERROR before start\n".write(toFile: log, atomically: false, encoding: .utf8)
        let (process, output) = try start(["--match", "ERROR|WARN", "--keep", "2", log])
        func append(_ text: String) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try handle.seekToEnd()
            handle.write(Data(text.utf8))
            try handle.close()
        }
        try append("INFO ignored\nERROR one\nWARN two\n")
        #expect(waitUntil { output.lines == ["ERROR one", "WARN two"] })
        try FileManager.default.moveItem(atPath: log, toPath: log + ".1")
        try "ERROR three\nINFO nope\n".write(toFile: log, atomically: false, encoding: .utf8)
        #expect(waitUntil { output.lines.last == "ERROR three" })
        kill(process.processIdentifier, SIGHUP)
        #expect(waitUntil { output.lines.count == 6 })
        #expect(output.lines == ["ERROR one", "WARN two", "ERROR three", "# replay 2", "WARN two", "ERROR three"])
        try append("ERROR written just before SIGTERM\n")
        kill(process.processIdentifier, SIGTERM)
        expectExit(process)
        #expect(process.terminationStatus == 0)
        #expect(process.terminationReason == .exit)
        #expect(waitUntil { output.lines.last == "ERROR written just before SIGTERM" }, "nothing was lost")
    }

    /// An impatient operator (or a supervisor) repeats SIGTERM while the daemon shuts down.
    @Test func aSecondSIGTERMFiftyMillisecondsAfterTheFirstStillExitsZeroWithNothingLost() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-logwatch-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("service.log").path
        try "".write(toFile: log, atomically: false, encoding: .utf8)
        let (process, output) = try start([log])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try handle.seekToEnd()
        handle.write(Data("first\nwritten just before SIGTERM\n".utf8))
        try handle.close()
        kill(process.processIdentifier, SIGTERM)
        usleep(50_000)
        kill(process.processIdentifier, SIGTERM)
        expectExit(process)
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 0)
        #expect(waitUntil { output.lines == ["first", "written just before SIGTERM"] }, "nothing was lost")
    }

    @Test func badOptionsAndRegexesExitTwoWithAMessage() throws {
        for arguments in [["--match", "(", "x"], ["--bogus", "x"], ["--keep", "zero", "x"], []] {
            let process = Process()
            process.executableURL = Self.executable
            process.arguments = arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 2, "\(arguments)")
            #expect(message.hasPrefix("ripple-logwatch: "))
            #expect(message.split(separator: "\n").count == 1)
        }
    }
}
