/// Where values flow in a script, as the checker sees it line by line: which signals each
/// `let` reads, and which signal each promise is currently set from. Subjects, cold signals
/// and value promises read nothing.
///
/// `set PROMISE SOURCE` is the only statement that feeds a signal into something other
/// signals read, so it is the only way to build a feedback cycle: a promise set from a signal
/// that depends on the promise (itself, a `let` built on it, or another promise set from
/// one). Such a promise would take its own values back forever, so the checker refuses the
/// `set`; everything else is acyclic, because a name can only be used after it is defined.
///
/// The graph follows the run: a `set` replaces the promise's previous source, so an edge
/// exists only from its `set` to the next one.
struct DataFlow {
    /// The signals each `let` reads: its source and its operators' arguments.
    private var reads: [String: [String]] = [:]
    /// The promises each signal reaches through `let`s alone (a promise reaches itself).
    private var promisesReached: [String: Set<String>] = [:]
    /// The signal each promise is currently set from.
    private var sources: [String: String] = [:]
    /// How many copies of one source event each `let` makes (the number of paths from its
    /// sources to it), and each promise passes on (its widest source so far). Absent means 1.
    private(set) var copies: [String: Int] = [:]

    mutating func definePromise(_ name: String) {
        promisesReached[name] = [name]
    }

    /// Records a `let`; returns whether it is the first on its paths to make more than
    /// `Script.maximumFanOut` copies (its inputs are all within the limit). `repeats` is how
    /// many times its operators may send each event again (`retry N`: N + 1).
    mutating func define(_ name: String, reading inputs: [String], repeats: Int = 1) -> Bool {
        reads[name] = inputs
        let repeats = min(repeats, Script.maximumFanOut + 1)
        if repeats > 1 { self.repeats[name] = repeats }
        lets.append(name)
        promisesReached[name] = inputs.reduce(into: Set<String>()) { $0.formUnion(promisesReached[$1] ?? []) }
        let inputCopies = inputs.map { copies[$0] ?? 1 }
        // Inputs over the limit are capped, so the sum cannot overflow however long the chain.
        // A let reading nothing (`Signal.merge` of no signals) counts as a source of its own, as
        // `copiesChange` counts it.
        let total = (inputs.isEmpty ? 1 : inputCopies.reduce(0) { $0 + min($1, Script.maximumFanOut + 1) }) * repeats
        copies[name] = total
        return total > Script.maximumFanOut && inputCopies.allSatisfy { $0 <= Script.maximumFanOut }
    }

    /// How many times each `let` may repeat an event (absent means 1), capped past the limit.
    private var repeats: [String: Int] = [:]

    /// The lets in the order they were defined.
    private var lets: [String] = []

    /// Records `set promise source` (already checked with `cycle` and `fanOut`).
    mutating func setSource(of promise: String, to source: String) {
        if let changed = copiesChange(setting: promise, from: source) {
            copies.merge(changed) { $1 }
        }
        sources[promise] = source
    }

    /// The first `let` that `set promise source` would push over `Script.maximumFanOut`
    /// copies, with its new count: a promise passes on every copy its source makes, so the
    /// signals built on it multiply them again.
    func fanOut(setting promise: String, from source: String) -> (name: String, copies: Int)? {
        guard let changed = copiesChange(setting: promise, from: source) else { return nil }
        for name in lets {
            let now = changed[name] ?? copies[name] ?? 1
            if now > Script.maximumFanOut, copies[name] ?? 1 <= Script.maximumFanOut { return (name, now) }
        }
        return nil
    }

    /// Every signal's copies were `promise` set from `source`, or nil when nothing changes.
    ///
    /// A promise counts the widest source it has been set from, not only its current one: a
    /// narrower source never lowers a count, so only a wider one (rare) costs this walk over
    /// the whole graph, and alternating sources costs nothing. The graph of current sources is
    /// acyclic (cycles are refused first), so each count is the sum over the signal's inputs;
    /// it is worked out without recursion, for long chains.
    private func copiesChange(setting promise: String, from source: String) -> [String: Int]? {
        guard copies[source] ?? 1 > copies[promise] ?? 1 else { return nil }
        var sources = self.sources
        sources[promise] = source
        func inputs(_ name: String) -> [String] { reads[name] ?? sources[name].map { [$0] } ?? [] }
        var result: [String: Int] = [:]
        for root in lets + Array(sources.keys) {
            var stack = [root]
            while let name = stack.last {
                if result[name] != nil { stack.removeLast(); continue }
                let upstream = inputs(name)
                let missing = upstream.filter { result[$0] == nil && !inputs($0).isEmpty }
                if missing.isEmpty {
                    let total = upstream.reduce(0) { $0 + min(result[$1] ?? 1, Script.maximumFanOut + 1) } * (repeats[name] ?? 1)
                    let widest = reads[name] == nil ? copies[name] ?? 1 : 0  // a promise's widest so far
                    result[name] = max(upstream.isEmpty ? 1 : total, widest)
                    stack.removeLast()
                } else {
                    stack += missing
                }
            }
        }
        return result
    }

    /// The path by which `source` would feed `promise` back into itself, from `source` to
    /// `promise` (`[p]` for `set p p`), or nil when setting it is safe.
    func cycle(setting promise: String, from source: String) -> [String]? {
        // First over promises only: does `source`, through lets and the promises' current
        // sources, reach `promise`? Cheap even for long chains of lets.
        var seen: Set<String> = []
        var pending = Array(promisesReached[source] ?? [])
        var found = false
        while let next = pending.popLast() {
            if next == promise { found = true; break }
            guard seen.insert(next).inserted, let upstream = sources[next] else { continue }
            pending.append(contentsOf: promisesReached[upstream] ?? [])
        }
        return found ? path(from: source, to: promise) ?? [source, promise] : nil
    }

    /// A path of names from `start` to `target`, each reading the next, for the message.
    private func path(from start: String, to target: String) -> [String]? {
        var parent: [String: String] = [:]
        var visited: Set<String> = [start]
        var queue = [start]
        var index = 0
        while index < queue.count {
            let name = queue[index]
            index += 1
            if name == target {
                var path = [name]
                while let previous = parent[path.last!] { path.append(previous) }
                return path.reversed()
            }
            let upstream = reads[name] ?? sources[name].map { [$0] } ?? []
            for next in upstream where visited.insert(next).inserted {
                parent[next] = name
                queue.append(next)
            }
        }
        return nil
    }

    /// The checker's message for a `set` that would close `cycle`.
    static func feedbackMessage(promise: String, source: String, cycle: [String]) -> String {
        let forever = "a promise fed by its own values would never stop"
        if source == promise { return "cannot set \(quoted(promise)) from itself: \(forever)" }
        let names = cycle.map(shortened)
        let shown = names.count > 8 ? names.prefix(4) + ["…"] + names.suffix(3) : names[...]
        return "cannot set \(quoted(promise)) from \(quoted(source)): \(quoted(source)) depends on \(quoted(promise)) "
            + "(\(shown.joined(separator: " → "))), and \(forever)"
    }
}
