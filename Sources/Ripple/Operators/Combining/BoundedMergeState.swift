/// What one `flatMap(maxConcurrent:)` subscription decides under its lock, as a pure state
/// machine: the inner signals waiting their turn, how many run, whether upstream completed,
/// and whether a thread is running the subscribe loop.
///
/// `BoundedMergeDriver` keeps one in its locked state, calls each transition under that lock,
/// and acts (subscribes an inner signal, forwards the completion, releases dropped inner
/// signals) after unlocking.
///
///     enqueue(inner)    ── an inner signal arrived: queued in arrival order
///     innerCompleted()  ── a running inner signal completed: a place is free
///     outerCompleted()  ── upstream completed
///     fail() / dispose()── the stream ends: the queue is emptied for the caller to release
///     startLoop()       ── a thread asks to run the loop: it becomes the looper, or leaves the work to it
///     nextStep()        ── the looper's next step: subscribe an inner signal, complete, or stop
///
/// Invariants:
/// 1. `running` never exceeds `limit`: `nextStep()` hands out an inner signal only below it.
/// 2. Inner signals leave the queue in arrival order, only through `nextStep()` (or all at once,
///    to be dropped, when the stream ends).
/// 3. At most one thread loops (`isLooping`); a change made while it loops is seen by its next
///    `nextStep()`, which runs under the same lock, so no change is missed when it stops.
/// 4. Once `isFinished`, nothing is queued or handed out again, and completion is decided once:
///    when upstream completed, the queue is empty and nothing runs.
struct BoundedMergeState<Inner>: @unchecked Sendable {  // holds the operator's inner signals, which leave it only to the looping thread or to be released by the ending one
    /// The most inner signals that run at once (1 or more).
    let limit: Int
    private(set) var queue = FIFOQueue<Inner>()
    /// Inner signals subscribed and not completed (invariant 1).
    private(set) var running = 0
    private(set) var outerDone = false
    /// The stream ended: completed, failed or disposed (invariant 4).
    private(set) var isFinished = false
    /// A thread runs the subscribe loop (invariant 3).
    private(set) var isLooping = false

    init(limit: Int) {
        self.limit = limit
    }

    /// What the looping thread does next.
    enum Step {
        /// Subscribe this inner signal (it already counts as running).
        case subscribe(Inner)
        /// Forward completion: upstream and every inner signal have completed.
        case complete
        /// Nothing to do now: the loop ends.
        case stop
    }

    /// Queues an inner signal; false (the caller releases it) once the stream has ended.
    mutating func enqueue(_ inner: Inner) -> Bool {
        if isFinished { return false }
        queue.append(inner)
        return true
    }

    mutating func innerCompleted() {
        running -= 1
    }

    mutating func outerCompleted() {
        outerDone = true
    }

    /// The stream fails: true for the first terminal event (forward it). Hands back the queue.
    mutating func fail() -> (isFirst: Bool, dropped: ContiguousArray<Inner?>) {
        if isFinished { return (false, []) }
        isFinished = true
        return (true, queue.removeAll())
    }

    /// The subscription is disposed: hands back the queue for the caller to release.
    mutating func dispose() -> ContiguousArray<Inner?> {
        isFinished = true
        return queue.removeAll()
    }

    /// True if the calling thread is to run the loop; false if another thread runs it (and
    /// will see the caller's change at its next step).
    mutating func startLoop() -> Bool {
        if isLooping { return false }
        isLooping = true
        return true
    }

    /// The looper's next step; `.complete` and `.stop` end the loop.
    mutating func nextStep() -> Step {
        if !isFinished, running < limit, let next = queue.popFirst() {
            running += 1
            return .subscribe(next)
        }
        isLooping = false
        if !isFinished, outerDone, running == 0, queue.isEmpty {
            isFinished = true
            return .complete
        }
        return .stop
    }
}
