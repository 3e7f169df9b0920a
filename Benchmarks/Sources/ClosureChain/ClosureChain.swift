/// The cold pipeline's stages as plain closures composed at run time: the `closure-chain`
/// reference of the `cold-pipeline` workload (a reference, not a peer).
///
/// Each stage maker is generic and out of line, as an operator returning one signal type is,
/// so a stage calls the user's closure and the next stage's through their contexts and cannot
/// be inlined into the loop. Nothing else: no subscription, no check for disposal, no
/// serialization. `scan` keeps its running value in a box without run-time exclusivity checks,
/// as Ripple's own stages do (a captured `var` would pay `swift_beginAccess` per element).
public enum ClosureChain {
    /// `from(range) → map { $0 &* 3 } → filter { $0 % 2 == 0 } → scan(0, &+) → sink`, as a chain
    /// of closures built here and called once per element.
    public static func runColdPipeline(_ range: Range<Int>, _ sink: @escaping (Int) -> Void) {
        let head = map({ $0 &* 3 }, filter({ $0 % 2 == 0 }, scan(0, &+, sink)))
        for value in range { head(value) }
    }

    @inline(never)
    static func map<T, U>(_ transform: @escaping (T) -> U, _ next: @escaping (U) -> Void) -> (T) -> Void {
        { next(transform($0)) }
    }

    @inline(never)
    static func filter<T>(_ isIncluded: @escaping (T) -> Bool, _ next: @escaping (T) -> Void) -> (T) -> Void {
        { if isIncluded($0) { next($0) } }
    }

    @inline(never)
    static func scan<T, U>(_ initial: U, _ combine: @escaping (U, T) -> U, _ next: @escaping (U) -> Void) -> (T) -> Void {
        let accumulated = Accumulated(initial)
        return { accumulated.value = combine(accumulated.value, $0); next(accumulated.value) }
    }

    /// A running value read and written by one stage, one element at a time.
    final class Accumulated<Value> {
        @exclusivity(unchecked) var value: Value
        init(_ value: Value) { self.value = value }
    }
}
