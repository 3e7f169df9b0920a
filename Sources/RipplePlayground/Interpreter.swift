import Ripple

/// Runs a checked script on Ripple itself: real subjects, cold signals, promises and
/// operators on one `TestScheduler`. Every event a subscriber receives becomes one output line.
public final class Interpreter {
    /// How output looks.
    public struct Options: Sendable {
        /// Prefix each line with its virtual time, e.g. `[ 120ms] A: next 2`.
        public var times: Bool
        /// Draw the marble diagram after the run.
        public var marbles: Bool

        /// Creates options; both are off by default.
        ///
        ///     let options = Interpreter.Options(times: true)   // "[  20ms] a: next 40"
        ///
        /// - Parameters:
        ///   - times: Whether to prefix each line with its virtual time.
        ///   - marbles: Whether to draw the marble diagram after the run.
        public init(times: Bool = false, marbles: Bool = false) {
            self.times = times
            self.marbles = marbles
        }
    }

    /// An object to own weak-owner observers; `release` drops the last reference to it, which
    /// also ends its lifetime (for `takeDuring`).
    final class Owner {
        let lifetime: Lifetime
        private let token: Lifetime.Token
        init() { (lifetime, token) = Lifetime.make() }
    }

    private let clock = TestScheduler()
    private let options: Options
    private let output: (String) -> Void
    private let timeline = Timeline()

    private var signals: [String: Signal<String>] = [:]
    private var inputs: [String: any SubscriberProtocol<String>] = [:]
    private var connections: [String: MulticastConnection<String>] = [:]
    private var promises: [String: Promise<String>] = [:]
    private var valuePromises: [String: ValuePromise<String>] = [:]
    private var subscriptions: [String: any Disposable] = [:]
    /// What `connect` statements started.
    private var connectionDisposables: [any Disposable] = []
    /// Connections made while the run goes on (`replayLazily`'s), ended with the run.
    private let runEnds = CompoundDisposable()
    private var owners: [String: Owner] = [:]
    /// The subscriber rows of `observe … owner NAME`, by owner: releasing it ends them.
    private var ownedRows: [String: [Int]] = [:]
    /// Bounds the values all `flatMap`-style inner signals may send in one run.
    private let budget = InnerBudget()
    /// Bounds the ticks all `interval` subscriptions may send in one run: an interval never
    /// ends, so a long `wait` on a short period would otherwise never end either.
    private let ticks = InnerBudget(limit: InnerBudget.tickLimit, what: "interval ticks")
    /// The signals a value may name for `flatten` and `switchToLatest`: subjects and cold
    /// signals (interval and timer included). They read no other signal, so following a
    /// name can never lead back to the signal that sent it.
    private var innerSources: [String: Signal<String>] = [:]

    /// Gives the inner-value and tick budgets back (the interactive mode, before each statement).
    func refillBudget() {
        budget.refill()
        ticks.refill()
    }
    /// Keeps source recorders alive for the marble rows.
    private var recorders: [any Disposable] = []

    /// Creates an interpreter that writes each output line to `output`.
    ///
    /// Each interpreter has its own `TestScheduler`, so runs never share time or state.
    ///
    ///     let interpreter = Interpreter(options: .init(marbles: true)) { print($0) }
    ///
    /// - Parameters:
    ///   - options: How output looks.
    ///   - output: Called with each line, without its newline.
    public init(options: Options = Options(), output: @escaping (String) -> Void) {
        self.options = options
        self.output = output
    }

    /// The diagram the last `marbles` drew, so `--marbles` does not draw the same one again.
    private var lastDiagram: [String]?

    /// Runs every statement in order, then draws the diagram if asked (unless the script's own
    /// last `marbles` already drew exactly that diagram).
    public func run(_ script: Script) {
        for statement in script.statements { perform(statement) }
        finish()
    }

    /// Runs one checked statement (the interactive mode runs them as they are typed).
    func perform(_ statement: Statement) {
        currentText = statement.text
        execute(statement.action)
    }

    /// Ends the run: the final diagram if asked, then everything the run started.
    func finish() {
        timeline.extendTicks(until: clock.now)
        if options.marbles, timeline.render(now: clock.now) != lastDiagram { drawMarbles() }
        finalTime = clock.now
        endRun()
    }

    /// The virtual time now.
    var now: Duration { clock.now }

    /// The actions waiting on the virtual clock that would still run (zero once a run has
    /// ended: nothing it started is left to tick).
    var liveTimers: Int { clock.livePendingCount }

    /// The statement running, for the captions of the rows it adds.
    private var currentText = ""
    /// How each signal was made: `let` text for derived ones, for subscriber captions.
    private var definitions: [String: String] = [:]
    /// Every line the run printed, with the virtual time it printed at (for pages).
    private(set) var transcript: [(time: Duration, text: String)] = []
    /// The virtual time at the end of the run.
    private(set) var finalTime: Duration = .zero
    /// What happened, row by row (for pictures).
    var recorded: Timeline { timeline }

    /// The script is over: ends everything it started, as a process exit would, so nothing
    /// a run created outlives it (subscriptions to subjects that never ended included).
    private func endRun() {
        for subscription in subscriptions.values { subscription.dispose() }
        for disposable in connectionDisposables + recorders { disposable.dispose() }
        runEnds.dispose()
        // A promise keeps its source subscribed (`set NAME SOURCE`) until it is replaced or the
        // promise goes: end them now, so no timer of theirs stays on the clock and their
        // `onDispose`/`log` lines print while the run can still print them, not from `deinit`.
        promises = [:]
        subscriptions = [:]
        connectionDisposables = []
        recorders = []
    }

    // MARK: Statements

    private func execute(_ action: Action) {
        switch action {
        case .subject(let name):
            addSource(name, Subject<String>())
        case .behavior(let name, let value):
            addSource(name, BehaviorSubject(value))
        case .replay(let name, let capacity, let maxAge):
            if let maxAge {
                addSource(name, ReplaySubject<String>(capacity: capacity ?? .max, maxAge: maxAge, scheduler: clock))
            } else {
                addSource(name, ReplaySubject<String>(capacity: capacity ?? .max))
            }
        case .cold(let name, _, let frames):
            signals[name] = coldSignal(frames)
            innerSources[name] = signals[name]
            timeline.recordDefinition(row: timeline.addRow("\(name) (cold)", kind: .cold, caption: currentText), frames: frames)
        case .interval(let name, let period):
            signals[name] = ticks.limit(Signal<Int>.interval(period, on: clock).map(String.init))
            innerSources[name] = signals[name]
            timeline.recordTicks(row: timeline.addRow("\(name) (cold)", kind: .cold, caption: currentText), period: period)
        case .timer(let name, let due):
            signals[name] = Signal<Int>.timer(due, on: clock).map(String.init)
            innerSources[name] = signals[name]
            let row = timeline.addRow("\(name) (cold)", kind: .cold, caption: currentText)
            timeline.record(.next("0"), row: row, at: due)
            timeline.record(.completed, row: row, at: due)
        case .derive(let name, let source, let operators):
            var signal: Signal<String>
            switch source {
            case .signal(let source): signal = signals[source]!
            case .combined(let combination, let names):
                let inputs: [any SignalProtocol<String>] = names.map { signals[$0]! }
                switch combination {
                case .merge: signal = Signal<String>.merge(inputs)
                case .concat: signal = Signal<String>.concat(inputs)
                case .zip: signal = Signal<String>.zip(inputs).map(Self.list)
                case .combineLatest: signal = Signal<String>.combineLatest(inputs).map(Self.list)
                }
            }
            for op in operators { signal = apply(op, to: signal, letName: name) }
            signals[name] = signal
            definitions[name] = String(currentText.dropFirst("let ".count))
        case .subscribe(let sub, let source):
            let row = timeline.addRow(sub, kind: .subscriber, caption: "to " + (definitions[source] ?? source), start: clock.now)
            subscriptions[sub] = signals[source]!.subscribe(
                next: { [unowned self] in emit("\(sub): next \($0)", row: row, event: .next($0)) },
                error: { [unowned self] in emit("\(sub): error \($0)", row: row, event: .error($0)) },
                completed: { [unowned self] in emit("\(sub): completed", row: row, event: .completed) })
        case .observe(let sub, let source, let ownerName):
            let row = timeline.addRow(sub, kind: .subscriber, caption: "to " + (definitions[source] ?? source) + ", owner \(ownerName)",
                                      start: clock.now)
            subscriptions[sub] = signals[source]!.observe(owner: owners[ownerName] ?? Owner()) { [unowned self] _, value in
                emit("\(sub): next \(value)", row: row, event: .next(value))
            }
            ownedRows[ownerName, default: []].append(row)
        case .dispose(let sub):
            subscriptions[sub]?.dispose()
            if let row = timeline.rows.lastIndex(where: { $0.label == sub && $0.kind == .subscriber }) {
                timeline.recordEnd(row: row, at: clock.now)
            }
        case .send(let name, let values):
            for value in values { inputs[name]!.sendNext(value) }
        case .complete(let name):
            inputs[name]!.sendCompleted()
        case .fail(let name, let message):
            inputs[name]!.sendError(ScriptFailure(message: message))
        case .wait(let duration):
            clock.advance(by: duration)
        case .marbles:
            drawMarbles()
        case .print(let text):
            line(text)
        case .promise(let name):
            let promise = Promise<String>()
            promises[name] = promise
            addRecordedSource(name, promise.get())
        case .valuePromise(let name, let value, let ignoreRepeated):
            let promise = ValuePromise(value, ignoreRepeated: ignoreRepeated)
            valuePromises[name] = promise
            addRecordedSource(name, promise.get())
        case .setPromise(let name, let source):
            promises[name]!.set(signals[source]!)
        case .setValue(let name, let value):
            valuePromises[name]!.set(value)
        case .connect(let name):
            if let connection = connections[name] { connectionDisposables.append(connection.connect()) }
        case .owner(let name):
            owners[name] = Owner()
        case .release(let name):
            owners[name] = nil
            // The observations end with their owner: so do their rows in the picture.
            for row in ownedRows.removeValue(forKey: name) ?? [] { timeline.recordEnd(row: row, at: clock.now) }
        }
    }

    private func addSource<S: SignalProtocol & SubscriberProtocol>(_ name: String, _ subject: S) where S.Value == String {
        inputs[name] = subject
        addRecordedSource(name, subject.asSignal())
        innerSources[name] = signals[name]
    }

    /// Registers a hot source and records what it emits on its own marble row.
    private func addRecordedSource(_ name: String, _ signal: Signal<String>) {
        signals[name] = signal
        let row = timeline.addRow(name, caption: currentText)
        recorders.append(signal.subscribe(
            next: { [unowned self] in timeline.record(.next($0), row: row, at: clock.now) },
            error: { [unowned self] in timeline.record(.error($0), row: row, at: clock.now) },
            completed: { [unowned self] in timeline.record(.completed, row: row, at: clock.now) }))
    }

    /// A cold signal from marbles: each subscription plays them from its own start; frame 0
    /// is sent during the subscription itself.
    private func coldSignal(_ frames: [[MarbleEvent]]) -> Signal<String> {
        let clock = self.clock
        return Signal { subscriber in
            let timers = CompoundDisposable()
            for (index, events) in frames.enumerated() where !events.isEmpty {
                let send: @Sendable () -> Void = {
                    for event in events {
                        switch event {
                        case .value(let value): subscriber.sendNext(value)
                        case .completed: subscriber.sendCompleted()
                        case .error: subscriber.sendError(ScriptFailure(message: "error"))
                        }
                    }
                }
                if index == 0 { send() } else { timers.add(clock.schedule(after: Timeline.frame * index, send)) }
            }
            return timers
        }
    }

    // MARK: Operators

    private func apply(_ op: Operator, to signal: Signal<String>, letName: String) -> Signal<String> {
        switch op {
        case .mapAdd(let n): return signal.tryMap { try Arithmetic.add(n, to: $0) }
        case .mapMultiply(let n): return signal.tryMap { try Arithmetic.multiply($0, by: n) }
        case .filter(let predicate): return signal.tryFilter { try predicate.test($0) }
        case .takeWhile(let predicate):
            return signal.tryMap { ($0, try predicate.test($0)) }.take(while: \.1).map(\.0)
        case .skipWhile(let predicate):
            // skip(while:), with a test that may fail the stream; asked only while skipping.
            return Signal { downstream in
                var skipping = true
                return signal.tryFilter { value in
                    if skipping, try predicate.test(value) { return false }
                    skipping = false
                    return true
                }.subscribe(downstream)
            }
        case .compactMapInteger: return signal.compactMap { Int($0).map(String.init) }
        case .take(let n): return signal.take(n)
        case .skip(let n): return signal.skip(n)
        case .distinct: return signal.distinctUntilChanged()
        case .distinctIgnoringCase: return signal.distinctUntilChanged { $0.lowercased() == $1.lowercased() }
        case .scanAdd: return signal.tryScan("0") { sum, value in try Arithmetic.add(Arithmetic.integer(value), to: sum) }
        case .reduceAdd:
            // reduce(_:_:) with overflow as an error: the running sums, the last one on completion
            // (the seed first, so an empty source gives 0).
            return signal.tryScan("0") { sum, value in try Arithmetic.add(Arithmetic.integer(value), to: sum) }
                .startWith("0").last()
        case .first: return signal.first()
        case .last: return signal.last()
        case .collect: return signal.collect().map(Self.list)
        case .ignoreValues: return signal.ignoreValues()
        case .materialize: return signal.materialize().map(Self.describe)
        case .dematerialize: return signal.tryMap(Self.event).dematerialize()
        case .startWith(let value): return signal.startWith(value)
        case .delay(let duration): return signal.delay(duration, on: clock)
        case .throttle(let duration): return signal.throttle(duration, on: clock)
        case .debounce(let duration): return signal.debounce(duration, on: clock)
        case .timeout(let duration): return signal.timeout(duration, on: clock)
        case .bufferCount(let count): return signal.buffer(count: count).map(Self.list)
        case .bufferTime(let span):
            // buffer(timeSpan:on:) closes a span every `span` while subscribed, values or not
            // (an interval inside): its spans count in the run's tick budget like an interval's
            // ticks, so a long wait on a short span ends too, failing the stream, saying so.
            let buffered = signal.buffer(timeSpan: span, on: clock).map(Self.list)
            let spans = ticks.limit(Signal<Int>.interval(span, on: clock).map(String.init))
            return Signal { downstream in
                let buffering = buffered.subscribe(downstream)
                return CompoundDisposable([buffering, spans.subscribe(error: { downstream.sendError($0) })])
            }
        case .retry(let count): return signal.retry(count)
        case .retryBackoff(let count, let initial):
            // Doubling from `initial`; the cap only keeps a long run of retries finite.
            let backoff = RetryBackoff.exponential(initial: initial, multiplier: 2, maximum: max(initial, .seconds(86_400)))
            return signal.retry(upTo: count, backoff: backoff, on: clock)
        case .then(let other): return signal.then(signals[other]!)
        case .catchTo(let other): return signal.catchTo(signals[other]!)
        case .sample(let other): return signal.sample(signals[other]!)
        case .flatMap(let other):
            let inner = signals[other]!
            return signal.flatMap { [budget] outer in budget.limit(inner).map { "(\(outer),\($0))" } }
        case .concatMap(let other):
            let inner = signals[other]!
            return signal.concatMap { [budget] outer in budget.limit(inner).map { "(\(outer),\($0))" } }
        case .flatMapLatest(let other):
            let inner = signals[other]!
            return signal.flatMapLatest { [budget] outer in budget.limit(inner).map { "(\(outer),\($0))" } }
        case .flatMapMax(let limit, let other):
            let inner = signals[other]!
            return signal.flatMap(maxConcurrent: limit) { [budget] outer in budget.limit(inner).map { "(\(outer),\($0))" } }
        case .flatMapFirst(let other):
            let inner = signals[other]!
            return signal.flatMapFirst { [budget] outer in budget.limit(inner).map { "(\(outer),\($0))" } }
        case .flatten:
            return signal.tryMap { [unowned self] in try inner(named: $0) }.flatten()
        case .switchToLatest:
            return signal.tryMap { [unowned self] in try inner(named: $0) }.switchToLatest()
        case .log(let label):
            return signal.log(label ?? letName) { [unowned self] in line($0) }
        case .sideEffect(let effect, let label):
            let prefix = "[\(label ?? letName)] \(effect.rawValue)"
            switch effect {
            case .onNext: return signal.onNext { [unowned self] in line("\(prefix) \($0)") }
            case .onError: return signal.onError { [unowned self] in line("\(prefix) \($0)") }
            case .onCompleted: return signal.onCompleted { [unowned self] in line(prefix) }
            case .onSubscribe: return signal.onSubscribe { [unowned self] in line(prefix) }
            case .onDispose: return signal.onDispose { [unowned self] in line(prefix) }
            }
        case .takeDuring(let owner):
            return signal.take(during: owners[owner]?.lifetime ?? .empty)
        case .subscribeOn:
            return signal.subscribe(on: clock)
        case .deliverOn(let bufferSize, let overflow):
            return signal.deliver(on: clock, bufferSize: bufferSize ?? 1024, whenFull: overflow ?? .wait)
        case .zip3(let b, let c): return signal.zip(signals[b]!, signals[c]!).map { "(\($0),\($1),\($2))" }
        case .combineLatest3(let b, let c): return signal.combineLatest(signals[b]!, signals[c]!).map { "(\($0),\($1),\($2))" }
        case .merge(let other): return signal.merge(signals[other]!)
        case .concat(let other): return signal.concat(signals[other]!)
        case .zip(let other): return signal.zip(signals[other]!).map { "(\($0),\($1))" }
        case .combineLatest(let other): return signal.combineLatest(signals[other]!).map { "(\($0),\($1))" }
        case .takeUntil(let other): return signal.take(until: signals[other]!)
        case .replayLast:
            // `Signal.replayLast()` itself, but with the connection kept, so the end of the
            // run ends it (the library's version connects for good by design).
            let connection = signal.multicast(ReplaySubject<String>(capacity: 1))
            connectionDisposables.append(connection.connect())
            return connection.signal
        case .replay:
            // `Signal.replay()`, with the connection ended by the end of the run (see replayLast).
            let connection = signal.multicast(ReplaySubject<String>())
            connectionDisposables.append(connection.connect())
            return connection.signal
        case .replayLazily(let capacity):
            // `Signal.replayLazily(capacity:)`: connects on the first subscriber and stays
            // connected, with the connection ended by the end of the run (see replayLast).
            let connection = signal.multicast(ReplaySubject<String>(capacity: capacity ?? .max))
            let ends = runEnds
            return Signal { subscriber in
                let subscription = connection.subscribe(subscriber)
                ends.add(connection.connect())
                return subscription
            }
        case .publish:
            let connection = signal.publish()
            connections[letName] = connection
            return connection.signal
        case .multicast(let kind):
            let connection: MulticastConnection<String>
            switch kind {
            case .subject: connection = signal.multicast(Subject<String>())
            case .behavior(let value): connection = signal.multicast(BehaviorSubject(value))
            case .replay(let capacity): connection = signal.multicast(ReplaySubject<String>(capacity: capacity ?? .max))
            }
            connections[letName] = connection
            return connection.signal
        case .autoconnect:
            // The parser lets `autoconnect` follow only `publish` or `multicast`: the connection
            // they just made is the one to count subscribers on, and `connect` no longer takes it.
            return connections.removeValue(forKey: letName)!.autoconnect()
        case .share: return signal.share()
        case .withLatest(let other): return signal.withLatest(from: signals[other]!).map { "(\($0),\($1))" }
        case .skipUntil(let other): return signal.skip(until: signals[other]!)
        case .combinePrevious(let initial):
            let pairs = initial.map { signal.combinePrevious($0) } ?? signal.combinePrevious()
            return pairs.map { "(\($0),\($1))" }
        case .zip4(let b, let c, let d):
            return signal.zip(signals[b]!, signals[c]!, signals[d]!).map { "(\($0),\($1),\($2),\($3))" }
        case .combineLatest4(let b, let c, let d):
            return signal.combineLatest(signals[b]!, signals[c]!, signals[d]!).map { "(\($0),\($1),\($2),\($3))" }
        case .takeLast(let n): return signal.take(last: n)
        case .elementAt(let n): return signal.element(at: n)
        case .takeWhileInclusive(let predicate):
            return signal.tryMap { ($0, try predicate.test($0)) }.take(while: \.1, inclusive: true).map(\.0)
        case .takeFor(let duration): return signal.take(for: duration, on: clock)
        case .skipFor(let duration): return signal.skip(for: duration, on: clock)
        case .throttleFirst(let duration): return signal.throttle(duration, latest: false, on: clock)
        case .timeoutSwitching(let duration, let fallback): return signal.timeout(duration, on: clock, switchingTo: signals[fallback]!)
        case .bufferTimeCount(let count, let span):
            // buffer(timeSpan:count:on:) opens a window after each one, values or not: an interval
            // of `span` beside it counts in the run's tick budget, as for `buffer DURATION`.
            let buffered = signal.buffer(timeSpan: span, count: count, on: clock).map(Self.list)
            let spans = ticks.limit(Signal<Int>.interval(span, on: clock).map(String.init))
            return Signal { downstream in
                let buffering = buffered.subscribe(downstream)
                return CompoundDisposable([buffering, spans.subscribe(error: { downstream.sendError($0) })])
            }
        case .sampleDefault(let other, let value): return signal.sample(signals[other]!, default: value)
        case .shareReplay(let count): return signal.share(replay: count)
        }
    }

    /// The signal a value names, for `flatten` and `switchToLatest`; its values count in the
    /// run's inner budget. Any other value fails the stream.
    private func inner(named value: String) throws -> Signal<String> {
        guard let inner = innerSources[value] else {
            throw Arithmetic.Failure(description: "not a cold signal or subject: \(value)")
        }
        return budget.limit(inner)
    }

    /// An array value as it prints: `[1,2,3]`.
    static func list(_ values: [String]) -> String {
        "[" + values.joined(separator: ",") + "]"
    }

    /// A materialized event as it prints: `next(1)`, `error(oops)`, `completed`.
    static func describe(_ event: Event<String>) -> String {
        switch event {
        case .next(let value): return "next(\(value))"
        case .error(let error): return "error(\(error))"
        case .completed: return "completed"
        }
    }

    /// The event a value written as `describe` prints it stands for; anything else fails.
    static func event(_ value: String) throws -> Event<String> {
        if value == "completed" { return .completed }
        for (prefix, make) in [("next(", { Event<String>.next($0) }), ("error(", { .error(ScriptFailure(message: $0)) })]
        where value.hasPrefix(prefix) && value.hasSuffix(")") && value.count > prefix.count {
            return make(String(value.dropFirst(prefix.count).dropLast()))
        }
        throw Arithmetic.Failure(description: "not an event: \(value)")
    }

    // MARK: Output

    private func emit(_ text: String, row: Int, event: Event<String>) {
        timeline.record(event, row: row, at: clock.now)
        line(text)
    }

    private func line(_ text: String) {
        transcript.append((clock.now, text))
        if options.times {
            let milliseconds = String(Int(clock.now / .milliseconds(1)))
            let padded = String(repeating: " ", count: max(0, 4 - milliseconds.count)) + milliseconds
            output("[\(padded)ms] \(text)")
        } else {
            output(text)
        }
    }

    private func drawMarbles() {
        timeline.extendTicks(until: clock.now)
        let diagram = timeline.render(now: clock.now)
        lastDiagram = diagram
        for text in diagram { output(text) }
    }
}

/// How many values the inner signals of `flatMap`, `concatMap` and `flatMapLatest` may send in
/// one run, all together. Each outer value starts a whole inner run, so a few nested ones would
/// otherwise multiply a short script into billions of events; past the budget the inner signal
/// fails, which fails the stream with a message saying why.
///
/// The same bound, with its own count, keeps `interval`s from ticking forever.
final class InnerBudget {
    static let limit = 100_000
    /// The most ticks all `interval` subscriptions may send in one run.
    static let tickLimit = 10_000
    private let capacity: Int
    private let what: String
    private var left: Int

    init(limit: Int = InnerBudget.limit, what: String = "inner values") {
        capacity = limit
        self.what = what
        left = limit
    }

    /// Gives the whole budget back: the interactive mode does before each statement, so a spent
    /// budget fails only the statement that spent it, not every later `flatMap` of the session.
    func refill() { left = capacity }

    /// `inner`, failing instead of sending once the run's budget is spent.
    func limit(_ inner: Signal<String>) -> Signal<String> {
        inner.tryMap { [self] value in
            guard left > 0 else {
                throw Arithmetic.Failure(description: "more than \(capacity) \(what) in one run")
            }
            left -= 1
            return value
        }
    }
}

/// The error of `fail NAME MESSAGE` and of a `#` marble; prints as its message.
struct ScriptFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Integer arithmetic on script values, which are words unless they spell an integer.
enum Arithmetic {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func integer(_ value: String) throws -> Int {
        guard let n = Int(value) else { throw Failure(description: "not an integer: \(value)") }
        return n
    }

    static func add(_ n: Int, to value: String) throws -> String {
        let (sum, overflow) = try integer(value).addingReportingOverflow(n)
        if overflow { throw Failure(description: "integer overflow: \(value) + \(n)") }
        return String(sum)
    }

    static func multiply(_ value: String, by n: Int) throws -> String {
        let (product, overflow) = try integer(value).multipliedReportingOverflow(by: n)
        if overflow { throw Failure(description: "integer overflow: \(value) * \(n)") }
        return String(product)
    }
}
