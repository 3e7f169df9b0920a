

/// A scheduler on virtual time, for tests: nothing runs until told to.
///
/// `now` starts at zero and moves only with `advance(by:)`, `advance(to:)` and `run()`.
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
