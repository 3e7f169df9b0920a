import Testing
@testable import Ripple
import RippleTestSupport

/// One step of a random program run against a subject.
enum ModelOperation: CustomStringConvertible {
    case subscribe(echoOn: Int?)   // a subscriber that, on receiving `echoOn`, sends echoOn + 1000 from its callback
    case dispose(Int)
    case send(Int)
    case complete
    case fail

    var description: String {
        switch self {
        case .subscribe(let echo): return "subscribe(echo: \(echo.map(String.init) ?? "-"))"
        case .dispose(let index): return "dispose(\(index))"
        case .send(let value): return "send(\(value))"
        case .complete: return "complete"
        case .fail: return "fail"
        }
    }
}

/// The reference model: plain arrays, no concurrency, the documented semantics.
struct SubjectModel {
    enum Kind { case subject, behavior, replay(capacity: Int) }
    let kind: Kind
    var history: [Int]
    var terminal: Event<Int>?
    var subscribers: [(index: Int, echoOn: Int?, active: Bool)] = []
    var logs: [[Event<Int>]] = []

    init(kind: Kind) {
        self.kind = kind
        if case .behavior = kind { history = [0] } else { history = [] }
    }

    mutating func apply(_ operation: ModelOperation) {
        switch operation {
        case .subscribe(let echoOn):
            let index = logs.count
            logs.append([])
            var replay = history
            if case .subject = kind { replay = [] }
            if case .error = terminal, case .behavior = kind { replay = [] }
            var queue: [Event<Int>] = []
            for value in replay { deliver(.next(value), to: index, echoOn: echoOn, queue: &queue) }
            if let terminal {
                logs[index].append(terminal)
            } else {
                subscribers.append((index, echoOn, true))
            }
            drain(&queue)
        case .dispose(let index):
            if let position = subscribers.firstIndex(where: { $0.index == index }) { subscribers[position].active = false }
        case .send(let value):
            var queue: [Event<Int>] = []
            enqueue(.next(value), into: &queue)
            drain(&queue)
        case .complete, .fail:
            var queue: [Event<Int>] = []
            enqueue(operation.isComplete ? .completed : .error(TestError("model")), into: &queue)
            drain(&queue)
        }
    }

    private mutating func enqueue(_ event: Event<Int>, into queue: inout [Event<Int>]) {
        guard terminal == nil else { return }
        switch event {
        case .next(let value):
            switch kind {
            case .subject: break
            case .behavior: history = [value]
            case .replay(let capacity):
                history.append(value)
                if history.count > capacity { history.removeFirst() }
            }
        default: terminal = event
        }
        queue.append(event)
    }

    private mutating func drain(_ queue: inout [Event<Int>]) {
        while !queue.isEmpty {
            let event = queue.removeFirst()
            for subscriber in subscribers where subscriber.active {
                deliver(event, to: subscriber.index, echoOn: subscriber.echoOn, queue: &queue)
            }
            if event.isTerminal { subscribers.removeAll() }
        }
    }

    private mutating func deliver(_ event: Event<Int>, to index: Int, echoOn: Int?, queue: inout [Event<Int>]) {
        logs[index].append(event)
        if case .next(let value) = event, value == echoOn { enqueue(.next(value + 1000), into: &queue) }
    }
}

extension ModelOperation {
    var isComplete: Bool { if case .complete = self { return true } else { return false } }
}

@Suite(.leakChecked) struct SubjectModelTests {
    static func program(seed: UInt64) -> (SubjectModel.Kind, [ModelOperation]) {
        var random = SeededGenerator(seed: seed)
        let kinds: [SubjectModel.Kind] = [.subject, .behavior, .replay(capacity: Int.random(in: 1...4, using: &random))]
        let kind = kinds[Int(random.next() % 3)]
        var operations: [ModelOperation] = []
        var subscribed = 0
        for _ in 0..<Int.random(in: 5...40, using: &random) {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                operations.append(.subscribe(echoOn: Bool.random(using: &random) ? Int.random(in: 0..<10, using: &random) : nil))
                subscribed += 1
            case 25..<35 where subscribed > 0:
                operations.append(.dispose(Int.random(in: 0..<subscribed, using: &random)))
            case 35..<95:
                operations.append(.send(Int.random(in: 0..<10, using: &random)))
            case 95..<98:
                operations.append(.complete)
            default:
                operations.append(.fail)
            }
        }
        return (kind, operations)
    }

    /// Runs `operations` on a real subject and returns every subscriber's events.
    static func run(_ kind: SubjectModel.Kind, _ operations: [ModelOperation]) -> [[Event<Int>]] {
        let signal: any SignalProtocol<Int>
        let input: any SubscriberProtocol<Int>
        switch kind {
        case .subject: let s = Subject<Int>(); (signal, input) = (s, s)
        case .behavior: let s = BehaviorSubject(0); (signal, input) = (s, s)
        case .replay(let capacity): let s = ReplaySubject<Int>(capacity: capacity); (signal, input) = (s, s)
        }
        var logs: [[Event<Int>]] = []
        var disposables: [any Disposable] = []
        for operation in operations {
            switch operation {
            case .subscribe(let echoOn):
                let index = logs.count
                logs.append([])
                disposables.append(signal.subscribe(
                    next: { value in
                        logs[index].append(.next(value))
                        if value == echoOn { input.sendNext(value + 1000) }
                    },
                    error: { logs[index].append(.error($0)) },
                    completed: { logs[index].append(.completed) }))
            case .dispose(let index): disposables[index].dispose()
            case .send(let value): input.sendNext(value)
            case .complete: input.sendCompleted()
            case .fail: input.sendError(TestError("model"))
            }
        }
        // The echoing closures capture the subject, which holds them: end every subscription.
        disposables.forEach { $0.dispose() }
        return logs
    }

    @Test func thousandsOfRandomProgramsMatchTheReferenceModel() {
        for seed in UInt64(1)...UInt64(Workload.size(3_000)) {
            let (kind, operations) = Self.program(seed: seed)
            var model = SubjectModel(kind: kind)
            operations.forEach { model.apply($0) }
            let actual = Self.run(kind, operations)
            #expect(actual == model.logs, "seed \(seed) (\(kind)): \(operations)")
            if actual != model.logs { return }  // one reproducible failure is enough
        }
    }
}
