@testable import Ripple

/// Marble notation for tests, as in the playground: one character = one 10 ms frame;
/// `-` nothing, `|` completed, `#` error (TestError("#")), `(ab)` several events in one
/// frame, any other character a value.
enum Marbles {
    static let frame: Duration = .milliseconds(10)

    static func parse(_ marbles: String) -> [(time: Duration, event: Event<String>)] {
        var result: [(Duration, Event<String>)] = []
        var frameIndex = 0
        var inGroup = false
        for character in marbles {
            let time = frame * frameIndex
            switch character {
            case "-": break
            case "(": inGroup = true; continue
            case ")": inGroup = false
            case "|": result.append((time, .completed))
            case "#": result.append((time, .error(TestError("#"))))
            default: result.append((time, .next(String(character))))
            }
            if !inGroup { frameIndex += 1 }
        }
        return result
    }

    /// Renders recorded `(time, event)` pairs back into marbles.
    static func render<Value>(_ entries: [(time: Duration, event: Event<Value>)]) -> String {
        var frames: [Int: [String]] = [:]
        var lastFrame = -1
        for (time, event) in entries {
            let index = Int(time / frame)
            let symbol: String
            switch event {
            case .next(let value): symbol = "\(value)"
            case .error: symbol = "#"
            case .completed: symbol = "|"
            }
            frames[index, default: []].append(symbol)
            lastFrame = max(lastFrame, index)
        }
        guard lastFrame >= 0 else { return "" }
        return (0...lastFrame).map { index in
            guard let symbols = frames[index] else { return "-" }
            return symbols.count == 1 ? symbols[0] : "(" + symbols.joined() + ")"
        }.joined()
    }

    /// A hot source: a subject fed on `scheduler` at the marble times (from time zero).
    static func hot(_ marbles: String, on scheduler: TestScheduler) -> Subject<String> {
        let subject = Subject<String>()
        for (time, event) in parse(marbles) {
            scheduler.schedule(after: time - scheduler.now) { subject.send(event) }
        }
        return subject
    }

    /// A cold source: each subscription plays the marbles from its own subscription time.
    static func cold(_ marbles: String, on scheduler: TestScheduler) -> Signal<String> {
        let script = parse(marbles)
        return Signal { subscriber in
            let timers = CompoundDisposable()
            for (time, event) in script {
                timers.add(scheduler.schedule(after: time) { subscriber.send(event) })
            }
            return timers
        }
    }
}

/// Records each event with the virtual time it arrived at.
final class TimedRecorder<Value>: SubscriberProtocol, @unchecked Sendable {
    private let scheduler: TestScheduler
    private let storage = Box<[(time: Duration, event: Event<Value>)]>([])

    init(_ scheduler: TestScheduler) { self.scheduler = scheduler }

    var entries: [(time: Duration, event: Event<Value>)] { storage.value }
    var marbles: String { Marbles.render(entries) }

    func sendNext(_ value: Value) { record(.next(value)) }
    func sendError(_ error: any Error) { record(.error(error)) }
    func sendCompleted() { record(.completed) }
    private func record(_ event: Event<Value>) {
        let now = scheduler.now
        storage.mutate { $0.append((now, event)) }
    }
}

/// Subscribes `signal` with a `TimedRecorder`, runs the scheduler, and returns the marbles.
func marbles<S: SignalProtocol>(_ signal: S, on scheduler: TestScheduler, until end: Duration? = nil) -> String {
    let recorder = TimedRecorder<S.Value>(scheduler)
    signal.subscribe(recorder)
    if let end { scheduler.advance(to: end) } else { scheduler.run() }
    return recorder.marbles
}
