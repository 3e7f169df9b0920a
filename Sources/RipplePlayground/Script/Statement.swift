import Ripple

/// One parsed and checked statement of a script, with its line for messages.
struct Statement {
    let line: Int
    let action: Action
    /// The statement as written (tokens joined by one space, quoted ones in quotes).
    var text: String = ""
}

/// What a statement does. Names are already checked: each exists and has the right kind.
enum Action {
    case subject(String)
    case behavior(String, value: String)
    case replay(String, capacity: Int?, maxAge: Duration?)
    case cold(String, marbles: String, frames: [[MarbleEvent]])
    /// `interval NAME PERIOD`: a cold signal sending 0, 1, 2, … at 1 ×, 2 ×, … PERIOD.
    case interval(String, period: Duration)
    /// `timer NAME DUE`: a cold signal sending 0 at DUE, then completing.
    case timer(String, due: Duration)
    case derive(String, source: DerivedSource, operators: [Operator])
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

/// What a `let` starts from: one signal, or `Signal.merge A B …` (and `concat`, `zip`,
/// `combineLatest`), the library's array forms over signals of the script.
enum DerivedSource: Equatable {
    case signal(String)
    case combined(Combination, [String])

    /// The signals it reads, in order (a name given twice counts twice).
    var names: [String] {
        switch self {
        case .signal(let name): return [name]
        case .combined(_, let names): return names
        }
    }
}

/// The array forms of the combining operators: `Signal.merge([…])` and its kin.
enum Combination: String, CaseIterable {
    case merge, concat, zip, combineLatest

    /// As written in a script: `Signal.merge`.
    var keyword: String { "Signal." + rawValue }
}

/// The side-effect operators; each prints `[LABEL] WORD …` when its action runs.
enum SideEffect: String, CaseIterable {
    case onNext, onError, onCompleted, onSubscribe, onDispose
}

/// The subject a `multicast` wires the source to (a new one, made by the `let`).
enum MulticastSubject: Equatable {
    case subject
    case behavior(String)
    case replay(Int?)
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
    case filter(Predicate), takeWhile(Predicate), skipWhile(Predicate)
    case compactMapInteger
    case take(Int), skip(Int), first, last
    case distinct, distinctIgnoringCase
    case scanAdd, reduceAdd, collect, ignoreValues, materialize, dematerialize
    case startWith(String)
    case delay(Duration), throttle(Duration), debounce(Duration), timeout(Duration)
    case bufferCount(Int), bufferTime(Duration)
    case retry(Int)
    /// `retryBackoff N DURATION`: waits DURATION before the first retry, doubling it each time.
    case retryBackoff(Int, Duration)
    case merge(String), concat(String), zip(String), combineLatest(String), takeUntil(String)
    /// `zip B C` and `combineLatest B C`: the three-signal forms, values `(a,b,c)`.
    case zip3(String, String), combineLatest3(String, String)
    case then(String), catchTo(String), sample(String)
    case flatMap(String), concatMap(String), flatMapLatest(String)
    /// `flatMapMax N NAME`: at most N runs of NAME at once; `flatMapFirst NAME`: values that
    /// arrive while a run is going are ignored.
    case flatMapMax(Int, String), flatMapFirst(String)
    /// Each value names a cold signal or subject of the script: `flatten` merges their runs,
    /// `switchToLatest` follows the latest one.
    case flatten, switchToLatest
    case log(String?)
    case sideEffect(SideEffect, label: String?)
    /// `takeDuring OWNER`: completes when the owner is released.
    case takeDuring(owner: String)
    /// `subscribeOn`, `deliverOn [N POLICY]`: on the script's virtual clock.
    case subscribeOn
    case deliverOn(bufferSize: Int?, overflow: DeliveryOverflow?)
    case replay, replayLast, replayLazily(Int?), publish, share
    /// `shareReplay N`: `share` that replays the run's last N values to a late subscriber.
    case shareReplay(Int)
    case multicast(MulticastSubject), autoconnect
    /// `withLatest NAME`: values `(a,b)`; `skipUntil NAME`; `combinePrevious [VALUE]`: values `(previous,current)`.
    case withLatest(String), skipUntil(String), combinePrevious(String?)
    /// `zip B C D` and `combineLatest B C D`: the four-signal forms, values `(a,b,c,d)`.
    case zip4(String, String, String), combineLatest4(String, String, String)
    /// `takeLast N`, `elementAt N`, `takeWhile PRED inclusive`, `takeFor DURATION`, `skipFor DURATION`.
    case takeLast(Int), elementAt(Int), takeWhileInclusive(Predicate), takeFor(Duration), skipFor(Duration)
    /// `throttle DURATION first`, `timeout DURATION NAME`, `buffer N DURATION`, `sample NAME VALUE`.
    case throttleFirst(Duration), timeoutSwitching(Duration, fallback: String), bufferTimeCount(Int, Duration)
    case sampleDefault(String, value: String)

    /// The other signals a combining operator reads (`merge NAME`, `zip B C` …).
    var arguments: [String] {
        switch self {
        case .merge(let name), .concat(let name), .zip(let name), .combineLatest(let name), .takeUntil(let name),
             .then(let name), .catchTo(let name), .sample(let name),
             .flatMap(let name), .concatMap(let name), .flatMapLatest(let name),
             .flatMapMax(_, let name), .flatMapFirst(let name):
            return [name]
        case .zip3(let b, let c), .combineLatest3(let b, let c):
            return [b, c]
        case .withLatest(let name), .skipUntil(let name), .timeoutSwitching(_, let name), .sampleDefault(let name, _):
            return [name]
        case .zip4(let b, let c, let d), .combineLatest4(let b, let c, let d):
            return [b, c, d]
        default: return []
        }
    }

    /// Whether it makes a connection that `connect NAME` starts (`publish`, `multicast`).
    var isConnectable: Bool {
        switch self {
        case .publish, .multicast: return true
        default: return false
        }
    }

    /// How many times the operator may send one upstream event again: `retry N` (and
    /// `retryBackoff N …`) runs its source up to N + 1 times. The checker multiplies the fan-out by it.
    var repeats: Int {
        switch self {
        case .retry(let count), .retryBackoff(let count, _): return count + 1
        default: return 1
        }
    }
}

/// A test on one value, for `filter`, `takeWhile` and `skipWhile`: `>N`, `<N`, `even`,
/// `odd` (integers only: a word fails the stream), `=VALUE` and `!=VALUE` (any value).
enum Predicate: Equatable {
    case greater(Int), less(Int), even, odd, equal(String), notEqual(String)

    func test(_ value: String) throws -> Bool {
        switch self {
        case .greater(let n): return try Arithmetic.integer(value) > n
        case .less(let n): return try Arithmetic.integer(value) < n
        case .even: return try Arithmetic.integer(value) % 2 == 0
        case .odd: return try Arithmetic.integer(value) % 2 != 0
        case .equal(let other): return value == other
        case .notEqual(let other): return value != other
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
