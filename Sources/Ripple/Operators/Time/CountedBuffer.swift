extension SignalProtocol {
    /// Sends the values of each window as one array, when the window holds `count` values or
    /// when `timeSpan` has passed since it opened, whichever comes first (RxSwift's
    /// `buffer(timeSpan:count:scheduler:)`).
    ///
    ///     source: -1-23------4---|
    ///     buffer: ----a---------b|     (3, 50 ms: a = [1,2,3], full at 40 ms; b = [4], at 140 ms)
    ///
    /// The first window opens at subscription; each window's end opens the next, so a window
    /// filled by `count` restarts the time span, as in RxSwift (above: the window after `a`
    /// runs from 40 to 90 ms, and `b`'s from 90 to 140 ms). A window that ends with no
    /// values sends nothing and opens the next, as `buffer(timeSpan:on:)` does (RxSwift sends
    /// an empty array). Completion sends what is waiting, then completes; an error drops it.
    /// Arrays filled by `count` are sent at once on the source's thread, those ended by time on
    /// `scheduler`; disposing cancels the window's timer. On ``ImmediateScheduler`` the windows
    /// never let subscribe return: each window's end re-arms the next inside the scheduler's
    /// trampoline, for as long as the subscription lasts. Use a scheduler that waits instead (a
    /// ``SerialQueueScheduler``, ``BackgroundScheduler`` or ``TestScheduler``).
    ///
    ///     events.buffer(timeSpan: .seconds(1), count: 100, on: scheduler)
    ///         .subscribeNext { batch in database.insert(batch) }   // at most 100 rows, at most 1 s late
    ///
    /// - Parameters:
    ///   - timeSpan: The longest a window stays open; above zero.
    ///   - count: The most values a window holds; at least 1.
    ///   - scheduler: The clock that times the windows.
    /// - Returns: A signal of arrays of at most `count` values.
    public func buffer(timeSpan: Duration, count: Int, on scheduler: any Scheduler) -> Signal<[Value]> where Value: Sendable {
        precondition(timeSpan > .zero, "buffer(timeSpan:count:on:) needs a positive time span, got \(timeSpan)")
        precondition(count >= 1, "buffer(timeSpan:count:on:) needs a count of at least 1, got \(count)")
        return Signal { downstream in
            let driver = CountedBufferDriver<Value>(timeSpan: timeSpan, count: count, scheduler: scheduler, downstream: downstream)
            // The driver (its window's timer) joins this subscription before anything runs, then
            // the source's subscription before its producer runs (`subscribe(linking:)`): ending
            // this subscription while a synchronous source sends stops it at once.
            downstream.disposable.add(driver)
            driver.openWindow(CountedBufferState<Value>.firstWindow)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.append($0) },
                error: { driver.finish(.error($0)) },
                completed: { driver.finish(.completed) })
            return nil
        }
    }
}

/// What `buffer(timeSpan:count:on:)` decides under its lock, as a pure state machine: the
/// values of the open window, which window it is, and that window's timer.
///
///     append(v)         ── v joins the window; at `count` values the window is sent, the next opens
///     windowEnded(w)    ── window w's time is up: it is sent (if not empty), the next opens
///     timerScheduled(…) ── the timer of window w exists: kept if w is still open, else dropped
///     finish()          ── the stream ends (completion sends the window first); nothing opens
///     takeTimer()       ── once ended: the last timer, handed over once to be disposed
///
/// Invariants:
/// 1. `window` counts the windows opened; `timer` is the latest window's timer scheduled (the
///    open one's, or the one just ended until the next replaces it), and a timer of an older
///    window finds `window` changed and does nothing.
/// 2. Nothing changes after `finished`: no window opens, no new timer is kept (the last one
///    stays until `takeTimer()` hands it over, exactly once).
/// 3. Every transition that replaces or drops a timer returns it, for the driver to dispose
///    after unlocking (disposing a scheduler's action is user code).
struct CountedBufferState<Value: Sendable>: Sendable {
    /// The number of the window opened at subscription.
    static var firstWindow: Int { 0 }

    let count: Int
    private(set) var values: [Value] = []
    /// The open window's number (invariant 1).
    private(set) var window = CountedBufferState.firstWindow
    /// The open window's timer, once scheduled.
    private(set) var timer: (any Disposable)?
    private(set) var finished = false

    init(count: Int) { self.count = count }

    /// What a transition asks the driver to do after unlocking.
    struct Action {
        /// The array to send (already handed to the forwarder under the lock, or nil).
        var sent: [Value]?
        /// The window to schedule a timer for.
        var open: Int?
        /// A timer to dispose.
        var cancel: (any Disposable)?
    }

    /// A value arrives.
    mutating func append(_ value: Value) -> Action {
        if finished { return Action() }
        values.append(value)
        guard values.count == count else { return Action() }
        return closeWindow()
    }

    /// Window `ended`'s time is up.
    mutating func windowEnded(_ ended: Int) -> Action {
        guard !finished, ended == window else { return Action() }
        return closeWindow()
    }

    /// A timer for window `opened` was scheduled.
    mutating func timerScheduled(_ scheduled: any Disposable, for opened: Int) -> Action {
        guard !finished, opened == window else { return Action(cancel: scheduled) }
        defer { timer = scheduled }
        return Action(cancel: timer)
    }

    /// The stream ends (completion, an error, or a dispose): returns the values still waiting
    /// (sent first on completion), or nil if it had already ended. The timer stays until
    /// `takeTimer()`: the subscription's end (a dispose) cancels it while the terminal event is
    /// still being delivered.
    mutating func finish() -> [Value]? {
        if finished { return nil }
        finished = true
        defer { values = [] }
        return values
    }

    /// Once finished: hands over the last window's timer to dispose (nil if already handed over).
    mutating func takeTimer() -> (any Disposable)? {
        guard finished else { return nil }
        defer { timer = nil }
        return timer
    }

    /// Ends the open window: its values go, the next window opens (invariant 1). The ended
    /// window's timer stays in `timer` until the next one replaces it (`timerScheduled`), so a
    /// dispose during the delivery of this window's values still finds and cancels it; firing
    /// meanwhile, it finds `window` changed.
    private mutating func closeWindow() -> Action {
        let full = values
        values = []
        window += 1
        return Action(sent: full.isEmpty ? nil : full, open: window)
    }
}

/// One `buffer(timeSpan:count:on:)` subscription: runs `CountedBufferState` behind its lock,
/// schedules and cancels the windows' timers, and sends through a `SerialForwarder`.
final class CountedBufferDriver<Value: Sendable>: Disposable, Sendable {
    private let timeSpan: Duration
    private let scheduler: any Scheduler
    private let forwarder: SerialForwarder<[Value]>
    private let state: Lock<CountedBufferState<Value>>

    init(timeSpan: Duration, count: Int, scheduler: any Scheduler, downstream: any SubscriberProtocol<[Value]>) {
        self.timeSpan = timeSpan
        self.scheduler = scheduler
        forwarder = SerialForwarder(downstream)
        state = Lock(CountedBufferState(count: count))
    }

    var isDisposed: Bool { state.withLock { $0.finished } }

    /// The subscription ended (a dispose, or the terminal event's delivery): the window's timer
    /// is cancelled, its values dropped.
    func dispose() {
        let (dropped, timer) = state.withLock { state in (state.finish(), state.takeTimer()) }
        timer?.dispose()
        _ = dropped  // released outside the lock: their deinit is user code
    }

    func append(_ value: Value) {
        act(state.withLock { state in
            let action = state.append(value)
            if let sent = action.sent { forwarder.enqueue(.next(sent)) }
            return action
        })
    }

    func finish(_ event: Event<[Value]>) {
        let ended: [Value]? = state.withLock { state in
            guard let values = state.finish() else { return nil }
            if case .completed = event, !values.isEmpty { forwarder.enqueue(.next(values)) }
            forwarder.enqueue(event)
            return values
        }
        guard let ended else { return }
        forwarder.drain()
        // After delivering: nothing runs between the forwarder's enqueue and drain (a scheduler's
        // disposable and a value's deinit are user code). A timer firing meanwhile finds `finished`;
        // the delivery's end of the subscription (`dispose()`) has most likely taken the timer already.
        state.withLock { $0.takeTimer() }?.dispose()
        _ = ended
    }

    /// Schedules the timer of window `window` and hands it to the state.
    func openWindow(_ window: Int) {
        let timer = scheduler.schedule(after: timeSpan) { [self] in windowEnded(window) }
        act(state.withLock { $0.timerScheduled(timer, for: window) })
    }

    private func windowEnded(_ window: Int) {
        act(state.withLock { state in
            let action = state.windowEnded(window)
            if let sent = action.sent { forwarder.enqueue(.next(sent)) }
            return action
        })
    }

    /// Carries out a transition's action after unlocking: delivers, cancels, opens.
    private func act(_ action: CountedBufferState<Value>.Action) {
        if action.sent != nil { forwarder.drain() }
        action.cancel?.dispose()
        if let window = action.open { openWindow(window) }
    }
}
