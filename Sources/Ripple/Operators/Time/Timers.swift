extension Signal where Value == Int {
    /// Sends 0, 1, 2, … at 1 × `period`, 2 × `period`, … on `scheduler`; never completes
    /// (RAC's `interval:onScheduler:`).
    ///
    ///     interval: ---0---1---2---…    (40 ms)
    ///
    /// Each tick schedules the next, so a long run never grows the stack. Disposing
    /// cancels the pending tick.
    public static func interval(_ period: Duration, on scheduler: any Scheduler) -> Signal<Int> {
        precondition(period > .zero, "Signal.interval(_:on:) needs a positive period, got \(period)")
        return Signal { subscriber in
            let pending = SerialDisposable()
            let ticker = IntervalTicker(period: period, scheduler: scheduler, subscriber: subscriber, pending: pending)
            ticker.scheduleTick(0)
            return pending
        }
    }

    /// Sends 0 once `delay` has passed on `scheduler`, then completes (RxSwift's `timer`).
    ///
    ///     timer: -----(0|)   (50 ms)
    public static func timer(_ delay: Duration, on scheduler: any Scheduler) -> Signal<Int> {
        Signal { subscriber in
            scheduler.schedule(after: delay) {
                subscriber.sendNext(0)
                subscriber.sendCompleted()
            }
        }
    }
}

/// Schedules the ticks of one `interval` subscription, each from the previous one.
private struct IntervalTicker: Sendable {
    let period: Duration
    let scheduler: any Scheduler
    let subscriber: PassthroughSubscriber<Int>
    let pending: SerialDisposable

    func scheduleTick(_ tick: Int) {
        pending.disposable = scheduler.schedule(after: period) { [self] in
            if subscriber.isDisposed { return }
            subscriber.sendNext(tick)
            scheduleTick(tick + 1)
        }
    }
}
