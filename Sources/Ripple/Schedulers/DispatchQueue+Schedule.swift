import Dispatch

extension DispatchQueue {
    /// Runs `action` on this queue (after `delay`, if given) as `scheduler`, unless the
    /// returned flag is disposed first. Shared by the Dispatch-backed schedulers.
    func schedule(
        as scheduler: any Scheduler,
        after delay: Duration?,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let flag = CancellationFlag()
        let work: @Sendable () -> Void = {
            if flag.isDisposed { return }
            Schedulers.run(as: scheduler, action)
        }
        if let delay {
            asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanoseconds), execute: work)
        } else {
            async(execute: work)
        }
        return flag
    }
}
