import Dispatch

/// Runs actions on the global concurrent pool at a quality of service.
///
/// Actions may run in parallel with each other; operators that deliver on it
/// (`deliver(on:)`) still keep one subscription's events in order and never overlap them.
///
///     BackgroundScheduler(qos: .utility).schedule { compress(file) }
public final class BackgroundScheduler: Scheduler {
    /// The quality of service actions run at.
    public let qos: DispatchQoS.QoSClass
    private let queue: DispatchQueue

    /// Creates a scheduler on the global queue for `qos`.
    public init(qos: DispatchQoS.QoSClass = .default) {
        self.qos = qos
        queue = DispatchQueue.global(qos: qos)
    }

    /// True: actions run on dispatch's threads, whether or not anyone waits.
    public var runsActionsOnItsOwnThreads: Bool { true }

    /// Schedules `action` to run on the global pool at this scheduler's quality of service;
    /// actions may run in parallel.
    ///
    /// Disposing the returned disposable before the action starts means it never runs, and
    /// releases the closure at once.
    ///
    ///     BackgroundScheduler(qos: .utility).schedule { print("somewhere in the pool") }
    ///
    /// - Parameter action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        queue.schedule(as: self, after: nil, action)
    }

    /// Schedules `action` to run on the global pool once `delay` has passed.
    ///
    /// The time is measured on this scheduler's clock (``Scheduler/now``). Disposing the returned
    /// disposable before the action starts cancels it and releases the closure at once.
    ///
    ///     BackgroundScheduler(qos: .utility).schedule(after: .milliseconds(10)) { print("somewhere in the pool") }
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running the action.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        queue.schedule(as: self, after: delay, action)
    }
}
