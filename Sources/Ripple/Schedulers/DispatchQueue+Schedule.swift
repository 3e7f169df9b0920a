import Dispatch

extension DispatchQueue {
    /// Runs `action` on this queue (after `delay`, if given) as `scheduler`, unless the
    /// returned disposable is disposed first (which releases `action` at once). Shared by
    /// the Dispatch-backed schedulers.
    ///
    /// With `occupancy` (a serial queue's), the running thread is recorded there for the
    /// duration of the action.
    func schedule(
        as scheduler: any Scheduler,
        after delay: Duration?,
        occupancy: QueueOccupancy? = nil,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let scheduled = ScheduledAction(action, as: scheduler, occupancy: occupancy)
        let work: @Sendable () -> Void = { scheduled.perform() }  // one capture: no context to allocate
        if let delay {
            asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanoseconds), execute: work)
        } else {
            async(execute: work)
        }
        return scheduled
    }
}
