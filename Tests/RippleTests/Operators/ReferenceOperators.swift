@testable import Ripple

// The reference model's operators: each one a few lines over `ReferenceWorld`, written from the
// operator's documented behaviour (its article and its doc comment), not from its implementation.

extension ModelOperator {
    /// Sets up the reference for one subscription at time 0 (before any input).
    func reference(_ w: ReferenceWorld, _ p: ModelInputs) {
        let d = p.interval
        switch self {
        case .map: w.subscribe(0, w.passing { $0 * 10 + 1 })
        case .filter: w.subscribe(0, w.passing { $0 % 2 == 0 ? $0 : nil })
        case .compactMap: w.subscribe(0, w.passing { $0 % 3 == 0 ? nil : $0 * 2 })
        case .scan:
            var sum = 0
            w.subscribe(0, w.passing { sum += $0; return sum })
        case .take, .first:
            var remaining = self == .first ? 1 : p.count
            if remaining == 0 { return w.end(.completed) }
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                remaining -= 1
                w.emit("\(value)")
                if remaining == 0 { w.end(.completed) }
            }
        case .skip:
            var remaining = 2
            w.subscribe(0, w.passing { value in
                if remaining > 0 { remaining -= 1; return nil }
                return value
            })
        case .takeWhile:
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                if value < 3 { w.emit("\(value)") } else { w.end(.completed) }
            }
        case .skipWhile:
            var skipping = true
            w.subscribe(0, w.passing { value in
                if skipping && value < 3 { return nil }
                skipping = false
                return value
            })
        case .distinctUntilChanged:
            var previous: Int?
            w.subscribe(0, w.passing { value in
                if value == previous { return nil }
                previous = value
                return value
            })
        case .startWith:
            w.emit("7")
            w.emit("8")
            w.subscribe(0, w.passing())
        case .reduce, .collect, .last, .ignoreValues:
            var values: [Int] = []
            w.subscribe(0) { event in
                switch event {
                case .next(let value): values.append(value)
                case .error: w.end(event)
                case .completed:
                    switch self {
                    case .reduce: w.emit("\(values.reduce(0, +))")
                    case .collect: w.emit("\(values)")
                    case .last: if let last = values.last { w.emit("\(last)") }
                    default: break
                    }
                    w.end(.completed)
                }
            }
        case .materialize:
            w.subscribe(0) { event in
                switch event {
                case .next(let value): w.emit("n\(value)")
                case .completed: w.emit("c"); w.end(.completed)
                case .error(let name): w.emit("e\(name)"); w.end(.completed)
                }
            }
        case .merge, .flatMap:
            var active = 0
            var outerDone = false
            func innerEvent(_ event: ModelEvent) {
                switch event {
                case .next(let value): w.emit("\(value)")
                case .error: w.end(event)
                case .completed:
                    active -= 1
                    if outerDone && active == 0 { w.end(.completed) }
                }
            }
            if self == .merge {  // Signal.from([s0, s1]).flatMap { $0 }
                for source in 0..<2 {
                    active += 1
                    w.subscribe(source, innerEvent)
                }
                outerDone = true
                if active == 0 { w.end(.completed) }
                return
            }
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    active += 1
                    w.subscribe(1 + value % 2, innerEvent)
                case .error: w.end(event)
                case .completed:
                    outerDone = true
                    if active == 0 { w.end(.completed) }
                }
            }
        case .concat, .concatMap:
            var queue: [Int] = self == .concat ? [0, 1] : []
            var busy = false
            var outerDone = self == .concat
            func advance() {
                while !w.ended && !busy {
                    if queue.isEmpty {
                        if outerDone { w.end(.completed) }
                        return
                    }
                    busy = true
                    w.subscribe(queue.removeFirst()) { event in
                        switch event {
                        case .next(let value): w.emit("\(value)")
                        case .error: w.end(event)
                        case .completed:
                            busy = false
                            advance()
                        }
                    }
                }
            }
            if self == .concat { return advance() }
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    queue.append(1 + value % 2)
                    advance()
                case .error: w.end(event)
                case .completed:
                    outerDone = true
                    advance()
                }
            }
        case .flatMapMaxConcurrent, .flatMapFirst:
            // At most `limit` inner runs; `flatMapMaxConcurrent` queues the rest in arrival
            // order, `flatMapFirst` ignores values while one runs.
            let limit = self == .flatMapFirst ? 1 : 2
            var running = 0
            var queue: [Int] = []
            var outerDone = false
            func advance() {
                while !w.ended, running < limit, !queue.isEmpty {
                    running += 1
                    w.subscribe(queue.removeFirst()) { event in
                        switch event {
                        case .next(let value): w.emit("\(value)")
                        case .error: w.end(event)
                        case .completed:
                            running -= 1
                            advance()
                        }
                    }
                }
                if outerDone, running == 0, queue.isEmpty { w.end(.completed) }
            }
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    if self == .flatMapFirst, running > 0 { return }
                    queue.append(1 + value % 2)
                    advance()
                case .error: w.end(event)
                case .completed:
                    outerDone = true
                    advance()
                }
            }
        case .switchToLatest:
            var generation = 0
            var innerActive = false
            var outerDone = false
            var current = -1
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    generation += 1
                    let mine = generation
                    innerActive = true
                    w.unsubscribe(current)
                    current = w.subscribe(1 + value % 2) { inner in
                        switch inner {
                        case .next(let value): if mine == generation { w.emit("\(value)") }
                        case .error: if mine == generation { w.end(inner) }
                        case .completed:
                            if mine == generation { innerActive = false }
                            if outerDone && !innerActive { w.end(.completed) }
                        }
                    }
                case .error: w.end(event)
                case .completed:
                    outerDone = true
                    if !innerActive { w.end(.completed) }
                }
            }
        case .then:
            w.subscribe(0) { event in
                switch event {
                case .next: break
                case .completed: w.subscribe(1, w.passing())
                case .error: w.end(event)
                }
            }
        case .catch, .catchTo:
            w.subscribe(0) { event in
                if case .error = event { w.subscribe(1, w.passing()) } else { w.passing()(event) }
            }
        case .retry:
            func attempt(_ index: Int) {
                w.subscribe(index) { event in
                    if case .error = event, index < 2 { attempt(index + 1) } else { w.passing()(event) }
                }
            }
            attempt(0)
        case .retryBackoff:
            // Attempt k + 1 subscribes to s[k + 1], `interval` after attempt k failed.
            func attempt(_ index: Int) {
                w.subscribe(index) { event in
                    if case .error = event, index < 2 {
                        w.schedule(after: d) { attempt(index + 1) }
                    } else {
                        w.passing()(event)
                    }
                }
            }
            attempt(0)
        case .takeUntil:
            w.subscribe(1) { event in w.end(event.isTerminal ? event : .completed) }
            w.subscribe(0, w.passing())
        case .sample:
            var latest: Int?
            w.subscribe(0) { event in
                if case .next(let value) = event { latest = value } else { w.end(event) }
            }
            w.subscribe(1) { event in
                if case .next = event { if let latest { w.emit("\(latest)") } } else { w.end(event) }
            }
        case .delay:
            w.subscribe(0) { event in
                switch event {
                case .next(let value): w.schedule(after: d) { w.emit("\(value)") }
                case .completed: w.schedule(after: d) { w.end(.completed) }
                case .error: w.end(event)
                }
            }
        case .debounce:
            var waiting: Int?
            var generation = 0
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    waiting = value
                    generation += 1
                    let mine = generation
                    w.schedule(after: d) {
                        if mine == generation, let value = waiting {
                            waiting = nil
                            w.emit("\(value)")
                        }
                    }
                case .completed:
                    if let waiting { w.emit("\(waiting)") }
                    w.end(.completed)
                case .error: w.end(event)
                }
            }
        case .throttle:
            var isOpen = false
            var waiting: Int?
            func openWindow() {
                w.schedule(after: d) {
                    if let value = waiting {
                        waiting = nil
                        w.emit("\(value)")
                        openWindow()
                    } else {
                        isOpen = false
                    }
                }
            }
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    if isOpen {
                        waiting = value
                    } else {
                        isOpen = true
                        w.emit("\(value)")
                        openWindow()
                    }
                case .completed:
                    if let waiting { w.emit("\(waiting)") }
                    w.end(.completed)
                case .error: w.end(event)
                }
            }
        case .bufferCount, .bufferTimeSpan:
            var buffer: [Int] = []
            if self == .bufferTimeSpan {
                func tick() {
                    w.schedule(after: d) {
                        let span = buffer
                        buffer = []  // before sending: a value sent back during the delivery opens the next span
                        if !span.isEmpty { w.emit("\(span)") }
                        tick()
                    }
                }
                tick()
            }
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    buffer.append(value)
                    if self == .bufferCount && buffer.count == 2 {
                        w.emit("\(buffer)")
                        buffer = []
                    }
                case .completed:
                    if !buffer.isEmpty { w.emit("\(buffer)") }
                    w.end(.completed)
                case .error: w.end(event)
                }
            }
        case .timeout:
            w.schedule(after: d) { w.end(.error("timeout")) }
            w.subscribe(0, w.passing())
        case .deliverOn:
            // One drain at a time, scheduled when the queue gets its first event; it delivers
            // batches until the queue is dry (events sent back meanwhile join the next batch).
            var queue: [ModelEvent] = []
            var isScheduled = false
            var isTerminated = false
            w.subscribe(0) { event in
                if isTerminated { return }
                if event.isTerminal { isTerminated = true }
                queue.append(event)
                if isScheduled { return }
                isScheduled = true
                w.schedule(after: 0) {
                    while !queue.isEmpty && !w.ended {
                        let batch = queue
                        queue = []
                        for event in batch where !w.ended { w.passing()(event) }
                    }
                    isScheduled = false
                }
            }
        case .subscribeOn:
            w.schedule(after: 0) { w.subscribe(0, w.passing()) }
        case .zip:
            var queues: [[Int]] = [[], []]
            var completed = [false, false]
            func exhausted() -> Bool { (0..<2).contains { completed[$0] && queues[$0].isEmpty } }
            for index in 0..<2 {
                w.subscribe(index) { event in
                    switch event {
                    case .next(let value):
                        queues[index].append(value)
                        if queues.allSatisfy({ !$0.isEmpty }) {
                            w.emit("\(queues.map { $0.first! })")
                            for source in 0..<2 { queues[source].removeFirst() }
                            if exhausted() { w.end(.completed) }
                        }
                    case .completed:
                        completed[index] = true
                        if exhausted() { w.end(.completed) }
                    case .error: w.end(event)
                    }
                }
            }
        case .combineLatest:
            var latest: [Int?] = [nil, nil]
            var completedCount = 0
            for index in 0..<2 {
                w.subscribe(index) { event in
                    switch event {
                    case .next(let value):
                        latest[index] = value
                        if latest.allSatisfy({ $0 != nil }) { w.emit("\(latest.map { $0! })") }
                    case .completed:
                        completedCount += 1
                        if completedCount == 2 || latest[index] == nil { w.end(.completed) }
                    case .error: w.end(event)
                    }
                }
            }
        case .withLatest:
            var latest: Int?
            w.subscribe(1) { event in
                switch event {
                case .next(let value): latest = value
                case .error: w.end(event)
                case .completed: break  // the last value keeps being paired
                }
            }
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                if let latest { w.emit("(\(value),\(latest))") }
            }
        case .combinePrevious:
            var previous = 7
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                let pair = "(\(previous),\(value))"
                previous = value
                w.emit(pair)
            }
        case .scanInto:
            var sum = 0
            w.subscribe(0, w.passing { sum += $0; return sum })
        case .skipUntil:
            var gate = "waiting"
            var trigger = -1
            trigger = w.subscribe(1) { event in
                if gate == "open" { return }  // its subscription ended with its first value
                switch event {
                case .next:
                    if gate == "waiting" { gate = "open" }
                    w.unsubscribe(trigger)
                case .completed: if gate == "waiting" { gate = "shut" }
                case .error: w.end(event)
                }
            }
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                if gate == "open" { w.emit("\(value)") }
            }
        case .takeLast:
            var values: [Int] = []
            w.subscribe(0) { event in
                switch event {
                case .next(let value): values.append(value)
                case .error: w.end(event)
                case .completed:
                    for value in values.suffix(p.count) { w.emit("\(value)") }
                    w.end(.completed)
                }
            }
        case .takeWhileInclusive:
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                w.emit("\(value)")
                if value >= 3 { w.end(.completed) }
            }
        case .elementAt:
            var seen = 0
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    if seen == p.count {
                        w.emit("\(value)")
                        w.end(.completed)
                    }
                    seen += 1
                case .error: w.end(event)
                case .completed:
                    w.end(.error("no value at index \(p.count): the signal completed after \(seen) value\(seen == 1 ? "" : "s")"))
                }
            }
        case .takeFor:
            w.schedule(after: d) { w.end(.completed) }
            w.subscribe(0, w.passing())
        case .skipFor:
            var isOpen = false
            w.schedule(after: d) { isOpen = true }
            w.subscribe(0, w.passing { isOpen ? $0 : nil })
        case .throttleFirst:
            var isOpen = false
            w.subscribe(0) { event in
                guard case .next(let value) = event else { return w.end(event) }
                if isOpen { return }
                isOpen = true
                w.emit("\(value)")
                w.schedule(after: d) { isOpen = false }
            }
        case .timeoutSwitching:
            var switched = false
            var source = -1
            w.schedule(after: d) {
                switched = true
                w.unsubscribe(source)
                w.subscribe(1, w.passing())
            }
            source = w.subscribe(0) { event in
                if !switched { w.passing()(event) }
            }
        case .bufferTimeCount:
            var buffer: [Int] = []
            var window = 0
            func open() {
                window += 1
                let mine = window
                w.schedule(after: d) {
                    guard mine == window else { return }
                    let span = buffer
                    buffer = []  // before sending: a value sent back during the delivery joins the next window
                    open()
                    if !span.isEmpty { w.emit("\(span)") }
                }
            }
            open()
            w.subscribe(0) { event in
                switch event {
                case .next(let value):
                    buffer.append(value)
                    if buffer.count == 2 {
                        let full = buffer
                        buffer = []
                        open()
                        w.emit("\(full)")
                    }
                case .completed:
                    if !buffer.isEmpty { w.emit("\(buffer)") }
                    w.end(.completed)
                case .error: w.end(event)
                }
            }
        case .sampleDefault:
            var latest = 9
            w.subscribe(0) { event in
                if case .next(let value) = event { latest = value } else { w.end(event) }
            }
            w.subscribe(1) { event in
                if case .next = event { w.emit("\(latest)") } else { w.end(event) }
            }
        }
    }
}
