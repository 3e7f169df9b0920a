import NIOCore
import Ripple
import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A Ripple scheduler over a SwiftNIO `EventLoop`: actions run on the loop's thread, in order.
///
/// For code that lives on event loops (postgres-nio, the NIO HTTP servers): `deliver(on:)`,
/// `subscribe(on:)` and the timed operators run on the loop, so a subscriber may touch the
/// loop's state without a hop of its own. Actions run in the order they were scheduled
/// (`EventLoop.execute`), delayed ones through `scheduleTask(in:)`; `Schedulers.current` is this
/// scheduler inside them, and any code running on the loop counts as current (`isCurrent`), so
/// `deliver(on:)`'s `.wait` never blocks a sender that runs on the loop (it would wait for itself).
///
/// Disposing a scheduled action before it starts releases it at once and cancels the loop's
/// timer for a delayed one: nothing of it stays scheduled. An action scheduled on a loop that has
/// shut down never runs.
///
///     let loop = MultiThreadedEventLoopGroup.singleton.next()
///     let onLoop = EventLoopScheduler(loop)
///     subject.deliver(on: onLoop).subscribeNext { value in
///         loop.assertInEventLoop()   // holds
///     }
public final class EventLoopScheduler: Scheduler {
    /// The loop actions run on.
    public let eventLoop: any EventLoop

    /// Creates a scheduler running its actions on `eventLoop`.
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// True: the loop runs actions on its own thread, whether or not anyone waits
    /// (an `EmbeddedEventLoop`, run by hand, is the exception: do not `.wait` on one).
    public var runsActionsOnItsOwnThreads: Bool { true }

    /// Whether the calling code runs on the loop's thread: in one of this scheduler's actions
    /// or in any other work the loop runs.
    public var isCurrent: Bool { eventLoop.inEventLoop || Schedulers.current === self }

    /// Runs `action` on the loop, after the work already submitted to it.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = LoopAction(action)
        eventLoop.execute { [self] in scheduled.run(as: self) }
        return scheduled
    }

    /// Runs `action` on the loop once `delay` has passed (a negative delay counts as zero).
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = LoopAction(action)
        let nanoseconds = delay <= .zero ? 0 : delay.wholeNanoseconds
        let task = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in scheduled.run(as: self) }
        scheduled.attach(task)
        return scheduled
    }
}

/// One scheduled action: runs at most once, and disposing it first releases the action and
/// cancels the loop's timer. The action and the timer are handed out of the lock before they are
/// run or cancelled.
final class LoopAction: Disposable, Sendable {
    private struct State {
        var action: (@Sendable () -> Void)?
        var timer: Scheduled<Void>?
        var isDisposed = false
    }

    private let state: NIOLockedValueBox<State>

    init(_ action: @escaping @Sendable () -> Void) {
        state = NIOLockedValueBox(State(action: action))
    }

    var isDisposed: Bool { state.withLockedValue { $0.isDisposed } }

    /// Records the loop's timer for a delayed action; cancels it at once if already disposed.
    func attach(_ timer: Scheduled<Void>) {
        let cancelNow = state.withLockedValue { state -> Bool in
            if state.isDisposed || state.action == nil { return true }
            state.timer = timer
            return false
        }
        if cancelNow { timer.cancel() }
    }

    /// Runs the action (called on the loop), unless disposed.
    func run(as scheduler: EventLoopScheduler) {
        let action = state.withLockedValue { state -> (@Sendable () -> Void)? in
            defer { state.action = nil; state.timer = nil }
            return state.action
        }
        guard let action else { return }
        Schedulers.run(as: scheduler, action)
    }

    func dispose() {
        let (action, timer) = state.withLockedValue { state -> ((@Sendable () -> Void)?, Scheduled<Void>?) in
            state.isDisposed = true
            defer { state.action = nil; state.timer = nil }
            return (state.action, state.timer)
        }
        timer?.cancel()
        _ = action  // released here, outside the lock: its captures' deinits are user code
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`'s range.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : sum
    }
}
