import Dispatch

/// Runs actions one at a time, in FIFO order, on a serial `DispatchQueue`.
///
/// Never two actions at once; each action runs asynchronously, so recursive scheduling
/// never grows the stack. `Schedulers.current` is this scheduler inside its actions.
///
///     let db = SerialQueueScheduler(label: "db")
///     db.schedule { print("on the db queue") }
public final class SerialQueueScheduler: Scheduler {
    /// The serial queue actions run on.
    public let queue: DispatchQueue

    /// Creates a scheduler on a new serial queue named `label`.
    public init(label: String, qos: DispatchQoS = .default) {
        queue = DispatchQueue(label: label, qos: qos)
    }

    /// Wraps an existing queue, which must be serial.
    public init(queue: DispatchQueue) {
        self.queue = queue
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
