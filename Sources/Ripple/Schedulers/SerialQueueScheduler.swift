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
    /// Who runs the queue's actions now (shared with other schedulers on the same queue).
    @usableFromInline let occupancy: QueueOccupancy

    /// Creates a scheduler on a new serial queue named `label`.
    public init(label: String, qos: DispatchQoS = .default) {
        queue = DispatchQueue(label: label, qos: qos)
        occupancy = QueueOccupancy.of(queue)
    }

    /// Wraps an existing queue, which must be serial.
    ///
    /// Several schedulers may wrap one queue: each counts code running on the queue, its own
    /// actions or not, as current (`isCurrent`).
    public init(queue: DispatchQueue) {
        self.queue = queue
        occupancy = QueueOccupancy.of(queue)
    }

    /// True: actions run on dispatch's threads, whether or not anyone waits.
    public var runsActionsOnItsOwnThreads: Bool { true }

    /// Whether the calling code runs on `queue`: in an action of this or another scheduler
    /// on it, or in a block submitted to the queue directly.
    public var isCurrent: Bool { occupancy.isCurrent || Schedulers.current === self }

    /// Schedules `action` to run on the scheduler's serial queue, after every action scheduled before it.
    ///
    /// Disposing the returned disposable before the action starts means it never runs, and
    /// releases the closure at once.
    ///
    ///     SerialQueueScheduler(label: "db").schedule { print("on the db queue") }
    ///
    /// - Parameter action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        queue.schedule(as: self, after: nil, occupancy: occupancy, action)
    }

    /// Schedules `action` to run on the scheduler's serial queue once `delay` has passed.
    ///
    /// The time is measured on this scheduler's clock (``Scheduler/now``). Disposing the returned
    /// disposable before the action starts cancels it and releases the closure at once.
    ///
    ///     SerialQueueScheduler(label: "db").schedule(after: .milliseconds(10)) { print("on the db queue") }
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running the action.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        queue.schedule(as: self, after: delay, occupancy: occupancy, action)
    }
}
