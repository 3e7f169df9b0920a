/// An action waiting on a scheduler; disposing it cancels the action and releases it.
///
/// A plain cancellation flag would leave the closure — and everything it captured, often
/// a subscriber — in the scheduler's queue until its due time came, or forever on a
/// `TestScheduler` that is never advanced that far. Disposing clears the closure at once.
/// The scheduler runs the action through `take()`, which hands it out at most once, or
/// `perform()`, which runs it as the scheduler given at `init(_:as:occupancy:)`.
///
///     let work = ScheduledAction { print("tick") }
///     work.dispose()      // the closure is released now
///     work.take()         // nil: nothing runs
final class ScheduledAction: Disposable, Sendable {
    /// The action and how to run it, in a struct: a closure stored straight in the generic
    /// `Mutex` is kept at its most general abstraction, so storing and taking it would each
    /// allocate a reabstraction thunk (two allocations per scheduled action).
    private struct Work: Sendable {
        let action: @Sendable () -> Void
        /// For `perform()`: the scheduler the action runs as, and its serial queue's occupancy.
        let scheduler: (any Scheduler)?
        let occupancy: QueueOccupancy?
    }

    private let work: Lock<Work?>

    /// An action that its scheduler takes (`take()`) and runs itself.
    init(_ action: @escaping @Sendable () -> Void) {
        work = Lock(Work(action: action, scheduler: nil, occupancy: nil))
    }

    /// An action that `perform()` runs as `scheduler` (recording the running thread in
    /// `occupancy`, if given). Keeping them here lets the closure a queue runs capture this
    /// object alone, which needs no allocation of its own.
    init(_ action: @escaping @Sendable () -> Void, as scheduler: any Scheduler, occupancy: QueueOccupancy?) {
        work = Lock(Work(action: action, scheduler: scheduler, occupancy: occupancy))
    }

    /// True once the action was disposed or handed out to run.
    var isDisposed: Bool {
        work.withLock { $0 == nil }
    }

    /// Hands out the action to run, once; nil if it was disposed or already taken. Only for
    /// an action made with `init(_:)` (the caller runs it as its scheduler itself).
    func take() -> (@Sendable () -> Void)? {
        let work = takeWork()
        precondition(work?.scheduler == nil, "Ripple: a ScheduledAction made with a scheduler runs through perform()")
        return work?.action
    }

    /// Runs the action — as the scheduler given to `init(_:as:occupancy:)`, with the running
    /// thread recorded in its occupancy; made with `init(_:)`, just the action — unless it
    /// was disposed or already taken.
    func perform() {
        guard let work = takeWork() else { return }
        guard let scheduler = work.scheduler else { return work.action() }
        guard let occupancy = work.occupancy else { return Schedulers.run(as: scheduler, work.action) }
        occupancy.run { Schedulers.run(as: scheduler, work.action) }
    }

    func dispose() {
        let dropped = takeWork()  // released here, outside the lock
        _ = dropped
    }

    private func takeWork() -> Work? {
        work.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }
}
