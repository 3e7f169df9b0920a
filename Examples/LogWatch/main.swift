import Foundation
import Ripple

// ripple-logwatch: follows a log file and prints each new matching line, built only on Ripple.
//
//   ripple-logwatch [--match REGEX] [--keep N] [--max-age SECONDS] FILE
//
// Lines travel through a Subject (no delegate protocol), the most recent matching lines stay in
// a ReplaySubject(capacity:maxAge:), the status lives in a BehaviorSubject. Every subscription
// below is made from top-level code, which Swift 6 isolates to the main actor, so every callback
// runs on the main actor (Ripple hops there from the follower's and the signals' threads) and the
// daemon needs no lock of its own. The main thread serves the main actor: `dispatchMain()` at the
// end, never a blocking wait (a blocked main thread would never run those callbacks).
// SIGHUP prints "# replay N" and the cached lines, oldest first; SIGTERM or SIGINT disposes
// everything and exits 0 (repeating the signal meanwhile changes nothing).

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ripple-logwatch: \(message)\n".utf8))
    exit(2)
}

func write(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// MARK: Command line

var pattern: NSRegularExpression?
var keep = 100
var maxAge: Duration?
var path: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--match":
        guard let value = arguments.popFirst() else { fail("--match needs a regular expression") }
        do { pattern = try NSRegularExpression(pattern: value) } catch { fail("bad regular expression for --match: '\(value)'") }
    case "--keep":
        guard let value = arguments.popFirst(), let n = Int(value), n >= 1 else { fail("--keep needs a whole number of at least 1") }
        keep = n
    case "--max-age":
        guard let value = arguments.popFirst(), let seconds = Double(value), seconds > 0 else { fail("--max-age needs a positive number of seconds") }
        maxAge = .milliseconds(Int64(seconds * 1000))
    default:
        if argument.hasPrefix("-") && argument != "-" { fail("unknown option '\(argument)'") }
        if path != nil { fail("only one FILE may be given (got '\(path!)' and '\(argument)')") }
        path = argument
    }
}
guard let path else { fail("usage: ripple-logwatch [--match REGEX] [--keep N] [--max-age SECONDS] FILE") }

// MARK: The pipeline

let scheduler = SerialQueueScheduler(label: "ripple-logwatch")
let lines = Subject<String>()
let status = BehaviorSubject("starting")
let recent: ReplaySubject<String> = maxAge.map { ReplaySubject(capacity: keep, maxAge: $0, scheduler: scheduler) }
    ?? ReplaySubject(capacity: keep)
let everything = CompoundDisposable()
let stopped = Subject<Void>()

let matcher = pattern
let matching = lines.filter { line in
    guard let matcher else { return true }
    return matcher.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
}
matching.subscribe(recent).disposed(by: everything)
matching.subscribeNext { write($0) }.disposed(by: everything)
status.subscribeNext { FileHandle.standardError.write(Data("ripple-logwatch: \($0)\n".utf8)) }.disposed(by: everything)

Signal.follow(path: path).deliver(on: scheduler).subscribe(lines).disposed(by: everything)

Signal.unixSignals(SIGHUP).deliver(on: scheduler).subscribeNext { _ in
    var cached: [String] = []
    recent.subscribeNext { cached.append($0) }.dispose()   // the replay arrives synchronously
    write("# replay \(cached.count)")
    cached.forEach(write)
}.disposed(by: everything)

// On SIGTERM or SIGINT: give the follower one more poll (so a line written just before the
// signal is not lost), then dispose everything and exit 0 — well within a second. Later
// SIGTERMs and SIGINTs change nothing.
Signal.unixSignals(SIGTERM, SIGINT).take(1).delay(.milliseconds(150), on: scheduler).subscribeNext { _ in
    status.sendNext("stopping")
    everything.dispose()
    stopped.sendCompleted()
}.disposed(by: everything)

// Subscribed after the stop handler, so a SIGTERM arriving in between still reaches that
// handler. Holds SIGTERM, SIGINT and SIGHUP until the process exits (it is not in `everything`): while
// any subscription to a signal lives, the signal cannot kill the process, so a second SIGTERM
// (or a SIGHUP) during the shutdown below is absorbed instead of meeting the restored default.
let holdingStopSignals = Signal.unixSignals(SIGTERM, SIGINT, SIGHUP).subscribe()

stopped.subscribe(completed: { withExtendedLifetime(holdingStopSignals) {}; exit(0) })
scheduler.schedule { status.sendNext("following \(path)") }
dispatchMain()  // serves the main actor until the stop handler exits
