extension SignalProtocol {
    /// Shifts values and completion later by `interval` on `scheduler`; errors pass at once
    /// and drop what is still waiting (RAC's `delay:`).
    ///
    ///     source: -1-2-|
    ///     delay:  ---1-2-|   (20 ms)
    ///
    /// Events keep their order on any scheduler, even `BackgroundScheduler`. Disposing the
    /// subscription cancels every timer still pending and drops the events waiting for them.
    public func delay(_ interval: Duration, on scheduler: any Scheduler) -> Signal<Value> where Value: Sendable {
        Signal { downstream in
            let driver = DelayDriver<Value>(downstream, interval: interval, scheduler: scheduler)
            // The driver's part joins this subscription before anything runs, then the source's
            // subscription before its producer runs (`subscribe(linking:)`): ending this
            // subscription while a synchronous source sends stops it at once.
            downstream.disposable.add(driver)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.hold(.next($0)) },
                error: { driver.fail($0) },
                completed: { driver.hold(.completed) })
            return nil
        }
    }
}

/// Holds delayed events in order, with the timer of each; each timer that fires releases the
/// oldest event, so timers that fire out of order on a concurrent scheduler cannot reorder
/// events. Disposing cancels the timers not yet fired, so nothing of the subscription stays
/// captured in the scheduler's queue.
final class DelayDriver<Value>: Disposable, @unchecked Sendable {  // state behind its lock; only delay(_:on:) makes one, and it requires Sendable values
    // @unchecked: `state` guards the mutable state; the rest is immutable.
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // events leave only as values handed out after unlocking
        var held = FIFOQueue<Event<Value>>()
        /// The timers not yet fired, by ticket: `.some(nil)` while `schedule(after:)` has not returned.
        var timers: [UInt64: (any Disposable)?] = [:]
        var nextTicket: UInt64 = 0
        var isDisposed = false
        /// An error was forwarded: nothing more is held.
        var isFailed = false

        /// Hands out the pending timers, to be cancelled after unlocking.
        mutating func takeTimers() -> [(any Disposable)?] {
            defer { timers = [:] }
            return Array(timers.values)
        }
    }

    private let interval: Duration
    private let scheduler: any Scheduler
    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())

    init(_ downstream: any SubscriberProtocol<Value>, interval: Duration, scheduler: any Scheduler) {
        self.interval = interval
        self.scheduler = scheduler
        forwarder = SerialForwarder(downstream)
    }

    var isDisposed: Bool { state.withLock { $0.isDisposed } }

    func dispose() {
        let (dropped, timers) = state.withLock { state in
            state.isDisposed = true
            return (state.held.removeAll(), state.takeTimers())
        }
        Self.cancel(timers)
        _ = dropped  // released here, outside the lock
    }

    /// Holds `event` and schedules the timer that releases it.
    func hold(_ event: Event<Value>) {
        let ticket: UInt64? = state.withLock { state in
            if state.isDisposed || state.isFailed { return nil }
            state.held.append(event)
            let ticket = state.nextTicket
            state.nextTicket += 1
            state.timers[ticket] = .some(nil)
            return ticket
        }
        guard let ticket else { return }
        let timer = scheduler.schedule(after: interval) { [self] in fire(ticket) }
        let isStale = state.withLock { state in
            // Disposed meanwhile (the timer was not in the table to cancel), or already fired.
            guard !state.isDisposed, !state.isFailed, state.timers.index(forKey: ticket) != nil else { return true }
            state.timers[ticket] = timer
            return false
        }
        if isStale { timer.dispose() }
    }

    private func fire(_ ticket: UInt64) {
        var released: Event<Value>?
        let timer = state.withLock { state in
            let timer = state.timers.removeValue(forKey: ticket)
            released = state.held.popFirst()
            if let released { forwarder.enqueue(released) }
            return timer
        }
        forwarder.drain()
        _ = (timer, released)  // released here, after delivering
    }

    func fail(_ error: any Error) {
        let dropped = state.withLock { state in
            state.isFailed = true
            forwarder.enqueue(.error(error))
            return state.held.removeAll()
        }
        forwarder.drain()
        // After delivering (no user code between enqueue and drain); the timers stay in the table
        // until now, so a dispose during the delivery cancels them at once.
        let timers = state.withLock { $0.takeTimers() }
        Self.cancel(timers)
        _ = dropped
    }

    private static func cancel(_ timers: [(any Disposable)?]) {
        for case let timer? in timers { timer.dispose() }
    }
}
