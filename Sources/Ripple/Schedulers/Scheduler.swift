#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decides where and when work runs: at once, on a serial queue, in the background, or on virtual time.
///
/// Disposing the returned disposable before the action starts means it never runs.
/// Recursive scheduling (an action that schedules the next one) never grows the stack.
///
///     let d = scheduler.schedule(after: .milliseconds(100)) { print("later") }
///     d.dispose()   // cancelled: nothing is printed
public protocol Scheduler: AnyObject, Sendable {
    /// Runs `action` as soon as the scheduler allows.
    @discardableResult
    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable
    /// Runs `action` once `delay` has passed on the scheduler's clock.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable
    /// The scheduler's clock: the time since a fixed origin. `TestScheduler` answers its
    /// virtual time; the others default to a monotonic clock. Used for ages (`maxAge`).
    var now: Duration { get }
    /// Whether the scheduler runs actions on threads of its own, without being told to: then a
    /// thread that is not one of them may block until an action it scheduled has run.
    /// `deliver(on:)`'s `.wait` overflow policy blocks a sender only on such schedulers.
    /// `SerialQueueScheduler` and `BackgroundScheduler` do; `ImmediateScheduler` (runs on the
    /// caller) and `TestScheduler` (runs when advanced) do not. Defaults to `false`.
    var runsActionsOnItsOwnThreads: Bool { get }
    /// Whether the calling code is running this scheduler's work, so that an action scheduled
    /// now cannot start before it returns: `deliver(on:)`'s `.wait` never blocks such a sender.
    ///
    /// Defaults to `Schedulers.current === self` (inside one of the scheduler's actions).
    /// `SerialQueueScheduler` also answers `true` for any code running on its queue, such as a
    /// block you `async` onto it yourself or an action of another scheduler on the same queue.
    ///
    ///     let db = SerialQueueScheduler(label: "db")
    ///     db.queue.async { db.isCurrent }   // true
    var isCurrent: Bool { get }
}

extension Scheduler {
    /// Defaults to `false`: a sender never blocks waiting for this scheduler to run an action.
    public var runsActionsOnItsOwnThreads: Bool { false }

    /// Defaults to whether the calling code runs inside one of this scheduler's actions.
    public var isCurrent: Bool { Schedulers.current === self }

    /// A monotonic clock shared by the real-time schedulers: time since Ripple first read it.
    public var now: Duration {
        ContinuousClock.now - monotonicOrigin
    }
}

private let monotonicOrigin = ContinuousClock.now

/// Where the current code is running.
public enum Schedulers {
    /// The scheduler running the current action, or nil outside any scheduler's action.
    ///
    /// Set for the duration of every action a Ripple scheduler runs, including
    /// `ImmediateScheduler`'s; it is per thread.
    ///
    ///     SerialQueueScheduler(label: "db").schedule {
    ///         Schedulers.current   // that scheduler
    ///     }
    public static var current: (any Scheduler)? {
        guard let pointer = pthread_getspecific(currentSchedulerKey) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue() as? any Scheduler
    }

    /// Runs `body` with `scheduler` as `Schedulers.current` on this thread, then restores the previous one.
    ///
    /// The hook for schedulers written outside Ripple: call it around every action your scheduler
    /// runs, so that `Schedulers.current` and the default `isCurrent` know the action is yours —
    /// `deliver(on:)` and `subscribe(on:)` use it to run inline instead of hopping again, and
    /// `.wait` never blocks a sender that runs on the scheduler it waits for. Nests: the previous
    /// scheduler is restored when `body` returns or throws.
    ///
    ///     final class LoopScheduler: Scheduler {
    ///         func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
    ///             loop.execute { Schedulers.run(as: self) { action() } }
    ///             …
    ///         }
    ///     }
    public static func run<T>(as scheduler: any Scheduler, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(currentSchedulerKey)
        pthread_setspecific(currentSchedulerKey, Unmanaged.passUnretained(scheduler as AnyObject).toOpaque())
        defer { pthread_setspecific(currentSchedulerKey, previous) }
        return try body()
    }
}

/// The thread-specific slot holding the running scheduler, unretained: the scheduler
/// outlives the action it runs.
let currentSchedulerKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "Ripple: pthread_key_create failed with \(status)")
    return key
}()

extension Duration {
    /// The duration in whole nanoseconds, clamped to 0 and to `Int.max`.
    var clampedNanoseconds: Int {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds >= Int64(Int.max / 1_000_000_000) { return Int.max }
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}
