@testable import Ripple
import RippleTestSupport

// A tiny pure reference for Ripple's operators on virtual time, compared with the real ones by
// `OperatorReferenceModelTests`. Hot sources are subjects fed at random times; the reference
// replays the same inputs through `ReferenceWorld`, a single-threaded miniature of subjects,
// subscriptions and a virtual clock with `TestScheduler`'s ordering.

/// One event of a source, or of the result, as text: a value, `|` (completed), `#name` (error).
enum ModelEvent: Equatable, Sendable, CustomStringConvertible {
    case next(Int), completed, error(String)

    var isTerminal: Bool {
        if case .next = self { return false }
        return true
    }

    var description: String {
        switch self {
        case .next(let value): "\(value)"
        case .completed: "|"
        case .error(let name): "#\(name)"
        }
    }
}

/// What a result sent, and when (virtual milliseconds).
struct ModelOutput: Equatable, Sendable, CustomStringConvertible {
    let time: Int
    let text: String
    var description: String { "\(text)@\(time)" }
}

/// One run's inputs: each source's events at their times, in the one global order in which the
/// `TestScheduler` runs them (equal times: in this order, before any operator's timer due then),
/// and the time the subscription is disposed, if it is.
struct ModelInputs: CustomStringConvertible {
    struct Input: CustomStringConvertible {
        let time: Int
        let source: Int
        let event: ModelEvent
        var description: String { "s\(source):\(event)@\(time)" }
    }

    var inputs: [Input]
    /// The events of the sources that are cold: each subscription gets all of them at once,
    /// synchronously, when it subscribes (their times are ignored).
    var cold: [Int: [ModelEvent]] = [:]
    var disposeAt: Int?
    /// The subscriber disposes the subscription from inside its callback for this output (1-based).
    var disposeOnOutput: Int?
    /// For these value outputs (1-based), the subscriber sends the value given here back into the
    /// hot source whose delivery produced the output (a re-entrant send: queued by the subject,
    /// delivered once its current delivery is over), or, for an output of a timer, into `s0` if
    /// it is hot (not re-entrant for the subject: delivered at once, nested in the timer's delivery).
    var reentrant: [Int: Int] = [:]
    /// `take(n)`'s n.
    var count: Int
    /// The time operators' interval, in milliseconds.
    var interval: Int
    /// Where both sides stop the clock.
    static let horizon = 300

    var description: String {
        "inputs [\(inputs.map(\.description).joined(separator: ", "))]"
            + cold.keys.sorted().map { ", cold s\($0): \(cold[$0]!.map(\.description).joined(separator: " "))" }.joined()
            + ", dispose at \(disposeAt.map(String.init) ?? "never")"
            + (disposeOnOutput.map { ", dispose on output \($0)" } ?? "") + ", n \(count), interval \(interval) ms"
            + (reentrant.isEmpty ? "" : ", re-entrant sends \(reentrant.sorted { $0.key < $1.key }.map { "\($0.value) on output \($0.key)" })")
    }

    /// Random marbles for `sources` subjects: a few small values at multiples of 10 ms, maybe a
    /// terminal event, interleaved at random where times are equal; a random dispose time or none.
    static func random(sources: Int, using random: inout SeededGenerator) -> ModelInputs {
        var scripts: [[Input]] = []
        for source in 0..<sources {
            var times = (0..<Int.random(in: 0...5, using: &random)).map { _ in Int.random(in: 0...10, using: &random) * 10 }
            times.sort()
            var script = times.map { Input(time: $0, source: source, event: .next(Int.random(in: 0...4, using: &random))) }
            let end = Int.random(in: 0..<5, using: &random)
            if end < 3 {
                let time = max(times.last ?? 0, Int.random(in: 0...12, using: &random) * 10)
                script.append(Input(time: time, source: source, event: end < 2 ? .completed : .error("e\(source)")))
            }
            scripts.append(script)
        }
        var cold: [Int: [ModelEvent]] = [:]
        for source in 0..<sources where Int.random(in: 0..<4, using: &random) == 0 {
            cold[source] = scripts[source].map(\.event)
            scripts[source] = []
        }
        // Interleave: repeatedly take the head of a random script among those with the earliest time.
        var merged: [Input] = []
        var heads = Array(repeating: 0, count: sources)
        while true {
            let ready = (0..<sources).filter { heads[$0] < scripts[$0].count }
            guard let earliest = ready.map({ scripts[$0][heads[$0]].time }).min() else { break }
            let candidates = ready.filter { scripts[$0][heads[$0]].time == earliest }
            let pick = candidates[Int.random(in: 0..<candidates.count, using: &random)]
            merged.append(scripts[pick][heads[pick]])
            heads[pick] += 1
        }
        let disposeAt = Bool.random(using: &random) ? nil : Int.random(in: 0...26, using: &random) * 5
        let disposeOnOutput = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 1...4, using: &random) : nil
        var inputs = ModelInputs(
            inputs: merged, cold: cold, disposeAt: disposeAt, disposeOnOutput: disposeOnOutput,
            count: Int.random(in: 0...3, using: &random),
            interval: [10, 15, 20, 30][Int.random(in: 0..<4, using: &random)])
        // Drawn last, so the rest of a seed's inputs are what they were before re-entrant sends existed.
        if Bool.random(using: &random) {
            for output in 1...6 where Int.random(in: 0..<3, using: &random) == 0 {
                inputs.reentrant[output] = Int.random(in: 0...4, using: &random)
            }
        }
        return inputs
    }
}

/// The reference's miniature world: hot subjects that remember their terminal event, their
/// subscriptions in subscription order, a virtual clock, and the result's output.
final class ReferenceWorld {
    private(set) var now = 0
    private(set) var output: [ModelOutput] = []
    /// The result ended (a terminal event) or was disposed: everything of it is gone.
    private(set) var ended = false
    private var terminal: [ModelEvent?]
    private var subscriptions: [(id: Int, subject: Int, handler: (ModelEvent) -> Void)] = []
    private var nextID = 0
    private var timers: [(due: Int, sequence: Int, action: () -> Void)] = []
    private var nextSequence = 0

    /// The subscriber disposes the subscription when it gets this output (1-based).
    private let disposeOnOutput: Int?

    /// The cold sources' events (see `ModelInputs.cold`).
    private let cold: [Int: [ModelEvent]]
    /// See `ModelInputs.reentrant`.
    private let reentrant: [Int: Int]
    /// The re-entrant sends made: for an output (1-based), the source and the value. The real
    /// subscriber makes exactly these.
    private(set) var sends: [Int: (source: Int, value: Int)] = [:]
    /// The hot source whose input is being delivered (nil while timers run or subscribing).
    private var delivering: Int?
    /// A timer's action is running.
    private var inTimer = false
    private var pendingSends: [(source: Int, value: Int)] = []

    /// Drops every handler and timer: the reference operators' closures capture the world, so
    /// without this each run's world would stay alive in a cycle (LeakSanitizer reports it).
    func tearDown() {
        subscriptions = []
        timers = []
        pendingSends = []
    }

    init(subjects: Int, cold: [Int: [ModelEvent]] = [:], disposeOnOutput: Int? = nil, reentrant: [Int: Int] = [:]) {
        terminal = Array(repeating: nil, count: subjects)
        self.cold = cold
        self.disposeOnOutput = disposeOnOutput
        self.reentrant = reentrant
    }

    func emit(_ text: String) {
        if ended { return }
        output.append(ModelOutput(time: now, text: text))
        let count = output.count
        if let value = reentrant[count] {
            if let source = delivering {
                sends[count] = (source, value)
                pendingSends.append((source, value))
            } else if inTimer, cold[0] == nil {
                sends[count] = (0, value)
                inTimer = false  // what the nested send starts is not the timer's
                send(.next(value), to: 0)
                inTimer = true
            }
        }
        if count == disposeOnOutput { finish() }
    }

    /// Sends a terminal event (as text) and ends the result.
    func end(_ event: ModelEvent) {
        if ended { return }
        output.append(ModelOutput(time: now, text: event.description))
        finish()
    }

    /// Ends the result without output (a dispose): every subscription and timer goes.
    func finish() {
        ended = true
        subscriptions = []
        timers = []
    }

    /// Subscribes to a source: a cold one sends all its events at once; a terminated subject
    /// its terminal event.
    @discardableResult
    func subscribe(_ subject: Int, _ handler: @escaping (ModelEvent) -> Void) -> Int {
        if ended { return -1 }
        if let script = cold[subject] {
            for event in script {
                if ended { break }
                handler(event)
            }
            return -1
        }
        if let event = terminal[subject] {
            handler(event)
            return -1
        }
        nextID += 1
        subscriptions.append((nextID, subject, handler))
        return nextID
    }

    func unsubscribe(_ id: Int) {
        subscriptions.removeAll { $0.id == id }
    }

    func schedule(after delay: Int, _ action: @escaping () -> Void) {
        if ended { return }
        nextSequence += 1
        timers.append((now + delay, nextSequence, action))
    }

    /// A subject sends: to each subscription in order that is still there when its turn comes.
    func send(_ event: ModelEvent, to subject: Int) {
        if terminal[subject] != nil { return }
        if event.isTerminal { terminal[subject] = event }
        let targets = subscriptions.filter { $0.subject == subject }
        if event.isTerminal { subscriptions.removeAll { $0.subject == subject } }
        for target in targets {
            if ended { return }
            // A terminal event reaches every subscription it found; a value only those not disposed meanwhile.
            if event.isTerminal || subscriptions.contains(where: { $0.id == target.id }) { target.handler(event) }
        }
    }

    /// Runs the timers due before `time` (or up to and including it), in due, then creation order.
    func runTimers(before time: Int, inclusive: Bool = false) {
        while !ended {
            guard let index = timers.indices.min(by: { (timers[$0].due, timers[$0].sequence) < (timers[$1].due, timers[$1].sequence) }),
                  inclusive ? timers[index].due <= time : timers[index].due < time else { return }
            let timer = timers.remove(at: index)
            now = timer.due
            inTimer = true
            timer.action()
            inTimer = false
        }
    }

    /// Plays `inputs` through the subscriptions set up so far, then runs the clock to the horizon.
    func play(_ inputs: ModelInputs) {
        var entries: [(time: Int, input: ModelInputs.Input?)] = inputs.inputs.map { ($0.time, $0) }
        if let disposeAt = inputs.disposeAt {
            let position = entries.firstIndex { $0.time > disposeAt } ?? entries.count
            entries.insert((disposeAt, nil), at: position)
        }
        for (time, input) in entries {
            runTimers(before: time)
            now = time
            guard let input else {
                finish()
                continue
            }
            delivering = input.source
            send(input.event, to: input.source)
            while !pendingSends.isEmpty {  // the subject's queue of re-entrant sends, in order
                let pending = pendingSends.removeFirst()
                send(.next(pending.value), to: pending.source)
            }
            delivering = nil
        }
        runTimers(before: ModelInputs.horizon, inclusive: true)
    }

    /// Forwards a source's event unchanged; `transform` maps values (nil drops them).
    func passing(_ transform: @escaping (Int) -> Int? = { $0 }) -> (ModelEvent) -> Void {
        { [self] event in
            if case .next(let value) = event {
                if let mapped = transform(value) { emit("\(mapped)") }
            } else {
                end(event)
            }
        }
    }
}
