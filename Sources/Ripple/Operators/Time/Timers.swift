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
            let ticker = IntervalTicker(period: period, scheduler: scheduler, subscriber: subscriber)
            ticker.scheduleTick(0)
            return ActionDisposable { ticker.cancel() }
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
///
/// A tick's action can run — and schedule the next tick — before `schedule(after:)` has even
/// returned its disposable to the thread that scheduled it (that thread preempted for longer than
/// the period). So the pending tick is kept with its number and replaced only by a later one: a
/// `SerialDisposable` assigned in call order would put the earlier tick's spent disposable back
/// and dispose the next tick with it, and the interval would stop.
private final class IntervalTicker: Sendable {
    let period: Duration
    let scheduler: any Scheduler
    let subscriber: PassthroughSubscriber<Int>
    /// The latest tick scheduled and its disposable; nil tick once cancelled.
    private let pending = Lock<(tick: Int?, disposable: (any Disposable)?)>((tick: -1, disposable: nil))

    init(period: Duration, scheduler: any Scheduler, subscriber: PassthroughSubscriber<Int>) {
        self.period = period
        self.scheduler = scheduler
        self.subscriber = subscriber
    }

    func scheduleTick(_ tick: Int) {
        let scheduled = scheduler.schedule(after: period) { [self] in
            if subscriber.isDisposed { return }
            subscriber.sendNext(tick)
            scheduleTick(tick + 1)
        }
        // Keep it unless cancelled meanwhile or a later tick is already there (then this one ran).
        let (keep, replaced): (Bool, (any Disposable)?) = pending.withLock { pending in
            guard let latest = pending.tick else { return (false, nil) }
            if latest > tick { return (true, nil) }
            defer { pending = (tick, scheduled) }
            return (true, pending.disposable)
        }
        _ = replaced  // a spent tick's disposable, released after unlocking
        if !keep { scheduled.dispose() }
    }

    /// Disposes the pending tick; later ticks are disposed as they are scheduled.
    func cancel() {
        let last = pending.withLock { pending in
            defer { pending = (nil, nil) }
            return pending.disposable
        }
        last?.dispose()
    }
}
