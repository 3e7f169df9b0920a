/// One parsed and checked statement of a script, with its line for messages.
struct Statement {
    let line: Int
    let action: Action
}

/// What a statement does. Names are already checked: each exists and has the right kind.
enum Action {
    case subject(String)
    case behavior(String, value: String)
    case replay(String, capacity: Int?, maxAge: Duration?)
    case cold(String, marbles: String, frames: [[MarbleEvent]])
    case derive(String, source: String, operators: [Operator])
    case subscribe(String, source: String)
    case observe(String, source: String, owner: String)
    case dispose(String)
    case send(String, values: [String])
    case complete(String)
    case fail(String, message: String)
    case wait(Duration)
    case marbles
    case print(String)
    case promise(String)
    case valuePromise(String, value: String, ignoreRepeated: Bool)
    case setPromise(String, source: String)
    case setValue(String, value: String)
    case connect(String)
    case owner(String)
    case release(String)
}

/// One event of a cold signal's marble string.
enum MarbleEvent: Equatable {
    case value(String)
    case completed
    case error
}

/// One `|>` step of a `let` pipeline.
enum Operator {
    case mapAdd(Int), mapMultiply(Int)
    case filterGreater(Int), filterLess(Int), filterEven, filterOdd
    case take(Int), skip(Int)
    case distinct
    case scanAdd
    case startWith(String)
    case delay(Duration), throttle(Duration), debounce(Duration)
    case merge(String), concat(String), zip(String), combineLatest(String), takeUntil(String)
    case replayLast, publish, share

    /// The other signal a combining operator reads (`merge NAME` …), if any.
    var argument: String? {
        switch self {
        case .merge(let name), .concat(let name), .zip(let name), .combineLatest(let name), .takeUntil(let name): return name
        default: return nil
        }
    }
}

/// What a name refers to, for checking uses before anything runs.
enum NameKind: Equatable {
    case subject, behavior, replay, cold, derived(published: Bool), promise, valuePromise, subscriber, owner

    var isSignal: Bool {
        switch self {
        case .subscriber, .owner: return false
        default: return true
        }
    }

    var isSendable: Bool { self == .subject || self == .behavior || self == .replay }

    var description: String {
        switch self {
        case .subject: return "subject"
        case .behavior: return "behavior subject"
        case .replay: return "replay subject"
        case .cold: return "cold signal"
        case .derived: return "derived signal"
        case .promise: return "promise"
        case .valuePromise: return "value promise"
        case .subscriber: return "subscriber"
        case .owner: return "owner"
        }
    }
}
