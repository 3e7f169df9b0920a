/// An action waiting on a scheduler; disposing it cancels the action and releases it.
///
/// A plain cancellation flag would leave the closure — and everything it captured, often
/// a subscriber — in the scheduler's queue until its due time came, or forever on a
/// `TestScheduler` that is never advanced that far. Disposing clears the closure at once.
/// The scheduler runs the action through `take()`, which hands it out at most once.
///
///     let work = ScheduledAction { print("tick") }
///     work.dispose()      // the closure is released now
///     work.take()         // nil: nothing runs
final class ScheduledAction: Disposable, Sendable {
    private let action: Lock<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = Lock(action)
    }

    /// True once the action was disposed or handed out to run.
    var isDisposed: Bool {
        action.withLock { $0 == nil }
    }

    /// Hands out the action to run, once; nil if it was disposed or already taken.
    func take() -> (@Sendable () -> Void)? {
        action.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }

    func dispose() {
        let dropped = take()  // released here, outside the lock
        _ = dropped
    }
}
