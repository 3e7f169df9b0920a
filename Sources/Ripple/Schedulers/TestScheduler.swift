

/// A scheduler on virtual time, for tests: nothing runs until told to.
///
/// `now` starts at zero and moves only with `advance(by:)`, `advance(to:)`, `run()`,
/// `run(until:)` and `runUntilIdle(limit:)`.
/// Actions due at the same virtual time run in the order they were scheduled; an action
/// scheduled for "now" from inside a running action runs in the same advance. It may be
/// driven and scheduled on from any thread.
///
///     let clock = TestScheduler()
///     clock.schedule(after: .milliseconds(20)) { print("b") }
///     clock.schedule(after: .milliseconds(10)) { print("a") }
///     clock.advance(by: .milliseconds(15))   // a
///     clock.run()                            // b; clock.now == 20 ms
public final class TestScheduler: Scheduler, Sendable {
    private struct State {
        var now: Duration = .zero
        var nextSequence: UInt64 = 0
        var queue = VirtualTimeQueue()
    }

    private let state = Lock(State())

    /// Creates a virtual clock at time zero.
    public init() {}

    /// The virtual time since the scheduler was created.
    public var now: Duration {
        state.withLock { $0.now }
    }

    /// How many actions are waiting (including cancelled ones not yet reached).
    public var pendingCount: Int {
        state.withLock { $0.queue.count }
    }

    /// How many waiting actions would still run: `pendingCount` without the cancelled ones
    /// (a disposed action stays queued until the clock reaches it, but runs nothing and holds
    /// nothing). Zero means that advancing the clock runs no code. O(n) in the queue length.
    ///
    ///     let work = clock.schedule(after: .seconds(1)) { print("tick") }
    ///     work.dispose()
    ///     clock.pendingCount       // 1
    ///     clock.livePendingCount   // 0
    public var livePendingCount: Int {
        state.withLock { $0.queue.liveCount }
    }

    /// Schedules `action` to run at the current virtual time, when the test next advances
    /// the clock or calls ``TestScheduler/run()``.
    ///
    /// Disposing the returned disposable before the action starts means it never runs, and
    /// releases the closure at once.
    ///
    ///     let clock = TestScheduler(); clock.schedule { print("ran") }; clock.run()   // ran
    ///
    /// - Parameter action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        schedule(after: .zero, action)
    }

    /// Schedules `action` to run at virtual time `now + delay`, when the test advances the clock that far;
    /// actions due at the same time run in the order they were scheduled.
    ///
    /// The time is measured on this scheduler's clock (``Scheduler/now``). Disposing the returned
    /// disposable before the action starts cancels it and releases the closure at once.
    ///
    ///     let clock = TestScheduler(); clock.schedule(after: .milliseconds(10)) { print("ran") }; clock.run()   // ran
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running the action.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = ScheduledAction(action)
        state.withLock { state in
            let due = state.now + max(delay, .zero)
            state.queue.insert(.init(due: due, sequence: state.nextSequence, action: scheduled))
            state.nextSequence += 1
        }
        return scheduled
    }

    /// Schedules `action` to run at the absolute virtual time `time`, when the test advances the
    /// clock that far; a time already past runs at the current time, at the next advance.
    ///
    /// Actions due at the same time run in the order they were scheduled, whichever of
    /// `schedule(after:)` and `schedule(at:)` scheduled them. Disposing the returned disposable
    /// before the action starts cancels it and releases the closure at once.
    ///
    ///     let clock = TestScheduler()
    ///     clock.advance(to: .milliseconds(30))
    ///     clock.schedule(at: .milliseconds(100)) { print("at 100 ms") }
    ///     clock.run()   // at 100 ms; clock.now == 100 ms
    ///
    /// - Parameters:
    ///   - time: The virtual time, since the scheduler was created, to run the action at.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(at time: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = ScheduledAction(action)
        state.withLock { state in
            state.queue.insert(.init(due: max(time, state.now), sequence: state.nextSequence, action: scheduled))
            state.nextSequence += 1
        }
        return scheduled
    }

    /// The virtual time the next action that would still run is due at, or nil when none
    /// would (cancelled actions do not count).
    ///
    /// A test reads it to see when something will happen next without running it, and to
    /// step from one due time to the next. O(n) in the pending actions (a test tool, not a hot path).
    ///
    ///     let clock = TestScheduler()
    ///     clock.nextDueTime                                          // nil
    ///     let tick = clock.schedule(after: .milliseconds(40)) {}
    ///     clock.schedule(after: .milliseconds(70)) {}
    ///     clock.nextDueTime                                          // 40 ms
    ///     tick.dispose()
    ///     clock.nextDueTime                                          // 70 ms
    public var nextDueTime: Duration? {
        state.withLock { state in
            var queue = state.queue  // a copy: the cancelled ones stay queued, as `pendingCount` says
            while let first = queue.popFirst() {
                if !first.action.isDisposed { return first.due }
            }
            return nil
        }
    }

    /// Runs every action due at or before `time`, in order, and leaves the clock at `time`:
    /// the same as ``advance(to:)``, named for tests written in RxTest's and RxJS's terms.
    ///
    /// Unlike ``run()`` it returns while a periodic timer (`Signal.interval`) is live: the
    /// timer's ticks up to `time` run, the next one stays scheduled.
    ///
    ///     let clock = TestScheduler()
    ///     let ticks = Signal<Int>.interval(.milliseconds(10), on: clock).subscribeNext { print($0) }
    ///     clock.run(until: .milliseconds(30))   // 0 1 2, then returns
    ///     ticks.dispose()
    ///
    /// - Parameter time: The virtual time to stop at; a time already past runs nothing and
    ///   leaves the clock where it is (an action due now waits for the next advance).
    public func run(until time: Duration) {
        advance(to: time)
    }

    /// Runs pending actions like ``run()``, but at most `limit` of them: returns whether the
    /// scheduler became idle (nothing left that would run).
    ///
    /// ``run()`` never returns while a periodic timer is live, since each tick schedules the
    /// next; this returns `false` after `limit` actions instead, with the clock at the last
    /// one's due time, so a test can fail with a message rather than hang. Cancelled actions
    /// do not count towards the limit.
    ///
    ///     let clock = TestScheduler()
    ///     let ticks = Signal<Int>.interval(.milliseconds(10), on: clock).subscribeNext { _ in }
    ///     clock.runUntilIdle(limit: 5)   // false: 5 ticks ran, clock.now == 50 ms
    ///     ticks.dispose()
    ///     clock.runUntilIdle()           // true
    ///
    /// - Parameter limit: The most actions to run; 10,000 unless given.
    /// - Returns: `true` when no action that would run is left, `false` when the limit stopped it.
    @discardableResult
    public func runUntilIdle(limit: Int = 10_000) -> Bool {
        var ran = 0
        while ran < limit, let action = nextAction(dueBy: nil) {
            Schedulers.run(as: self, action)
            ran += 1
        }
        return nextDueTime == nil
    }

    /// Moves the clock forward by `interval`, running every action due by then in order.
    public func advance(by interval: Duration) {
        advance(to: now + interval)
    }

    /// Moves the clock to `time` (never backwards), running every action due by then in order.
    public func advance(to time: Duration) {
        while let action = nextAction(dueBy: time) {
            Schedulers.run(as: self, action)
        }
        state.withLock { state in
            if state.now < time { state.now = time }
        }
    }

    /// Runs every pending action, including those they schedule, advancing the clock to each one's due time.
    ///
    /// It returns only when nothing is left to run: while a periodic timer (`Signal.interval`)
    /// is live it never returns. Use ``run(until:)`` or ``runUntilIdle(limit:)`` then.
    public func run() {
        while let action = nextAction(dueBy: nil) {
            Schedulers.run(as: self, action)
        }
    }

    /// Pops the next live action due by `limit` (any, when nil) and moves the clock to its due time.
    private func nextAction(dueBy limit: Duration?) -> (@Sendable () -> Void)? {
        state.withLock { state in
            while let first = state.queue.first {
                if let limit, first.due > limit { return nil }
                _ = state.queue.popFirst()
                guard let action = first.action.take() else { continue }  // disposed
                if state.now < first.due { state.now = first.due }
                return action
            }
            return nil
        }
    }
}
