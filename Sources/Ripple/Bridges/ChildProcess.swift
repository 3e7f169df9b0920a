import Foundation

/// The error a child process ends with when it exits with a non-zero status or is killed.
public struct ProcessExitError: Error, CustomStringConvertible, Sendable {
    /// The exit status, or the signal number when `signaled`.
    public let status: Int32
    /// Whether the child was ended by a signal.
    public let signaled: Bool

    /// The error of a child that exited with `status`, or was ended by signal `status` when
    /// `signaled`: what a test expects from `Signal.run(executable:arguments:)`.
    ///
    ///     print(ProcessExitError(status: 1))                   // exited with status 1
    ///     print(ProcessExitError(status: 15, signaled: true))  // terminated by signal 15
    ///
    /// - Parameters:
    ///   - status: The exit status, or the signal number when `signaled`.
    ///   - signaled: Whether a signal ended the child; `false` unless given.
    public init(status: Int32, signaled: Bool = false) {
        self.status = status
        self.signaled = signaled
    }

    /// A readable account of how the child ended, such as "exited with status 1".
    ///
    ///     Signal.run(executable: "/bin/false", arguments: [])
    ///         .subscribe(error: { print($0) })   // exited with status 1
    public var description: String { signaled ? "terminated by signal \(status)" : "exited with status \(status)" }
}

extension Signal where Value == String {
    /// Runs `executable` with `arguments` for each subscription and sends the lines of its
    /// standard output; completes when it exits with status 0, fails with
    /// `ProcessExitError` otherwise (after every line it printed).
    ///
    /// Standard error is passed through to this process's. Disposing terminates the child
    /// if it still runs: SIGTERM, then SIGKILL a second later if it is still there (a child
    /// inherits its parent thread's blocked signals). A child that cannot start fails the
    /// signal at once. A child that has exited is reaped (`waitUntilExit`), so Foundation lets
    /// go of its `Process`, and with it the subscription and what its callbacks capture.
    ///
    ///     Signal.run(executable: "/bin/sh", arguments: ["-c", "ls /tmp"]).subscribeNext { print($0) }
    public static func run(executable: String, arguments: [String] = []) -> Signal<String> {
        Signal { subscriber in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            let exit = ChildExit(subscriber: subscriber)
            process.terminationHandler = { process in
                exit.exited(status: process.terminationStatus,
                            signaled: process.terminationReason == .uncaughtSignal)
                // swift-corelibs-foundation keeps a Process nobody waited for alive forever
                // (LeakSanitizer reports it), and with it this handler and the subscription it
                // captures: drop the handler, and wait (at once: the child has exited) so
                // Foundation lets go of the Process.
                process.terminationHandler = nil
                let exited = UncheckedSendable(process)
                DispatchQueue.global().async { exited.value.waitUntilExit() }
            }
            let lines = Signal.lines(from: output.fileHandleForReading).subscribe(
                next: { subscriber.sendNext($0) },
                error: { subscriber.sendError($0) },
                completed: { exit.outputEnded() })
            do {
                try process.run()
            } catch {
                lines.dispose()
                subscriber.sendError(error)
                return nil
            }
            try? output.fileHandleForWriting.close()  // the child holds its own copy
            let processBox = UncheckedSendable(process)
            return ActionDisposable {
                lines.dispose()
                let process = processBox.value
                guard process.isRunning else { return }
                process.terminate()
                // A child that blocks or ignores SIGTERM is killed a second later.
                let pid = process.processIdentifier
                DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
                    if processBox.value.isRunning { kill(pid, SIGKILL) }
                }
            }
        }
    }
}

/// Ends a `run` subscription once both the output has ended and the child has exited, so
/// every line arrives before the terminal event.
final class ChildExit: Sendable {
    private struct State {
        var outputEnded = false
        var exit: (status: Int32, signaled: Bool)?
    }

    private let subscriber: PassthroughSubscriber<String>
    private let state = Lock(State())

    init(subscriber: PassthroughSubscriber<String>) {
        self.subscriber = subscriber
    }

    func outputEnded() { finish { $0.outputEnded = true } }

    func exited(status: Int32, signaled: Bool) { finish { $0.exit = (status, signaled) } }

    private func finish(_ change: (inout State) -> Void) {
        let ended: (Int32, Bool)? = state.withLock { state in
            change(&state)
            guard state.outputEnded, let exit = state.exit else { return nil }
            return (exit.status, exit.signaled)
        }
        guard let (status, signaled) = ended else { return }
        if status == 0 && !signaled {
            subscriber.sendCompleted()
        } else {
            subscriber.sendError(ProcessExitError(status: status, signaled: signaled))
        }
    }
}
