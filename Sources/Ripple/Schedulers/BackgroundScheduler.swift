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

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        queue.schedule(as: self, after: nil, action)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        queue.schedule(as: self, after: delay, action)
    }
}
