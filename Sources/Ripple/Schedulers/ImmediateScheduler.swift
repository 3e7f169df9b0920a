import Foundation

/// Runs actions synchronously on the calling thread (RAC's immediate scheduler).
///
/// `schedule(after:)` blocks the caller for the delay, then runs the action.
/// An action scheduled from inside another action of this scheduler on the same thread
/// is queued and runs as soon as the outer action returns (a trampoline), so recursive
/// scheduling never grows the stack: a million recursive steps run in constant stack.
///
///     ImmediateScheduler.shared.schedule { print("now") }   // prints before returning
public final class ImmediateScheduler: Scheduler {
    /// The one immediate scheduler.
    public static let shared = ImmediateScheduler()

    private init() {}

    /// Schedules `action` to run on the calling thread, before this call returns
    /// (after the running action, when called from inside one: the trampoline keeps recursion flat).
    ///
    /// Disposing the returned disposable before the action starts means it never runs, and
    /// releases the closure at once.
    ///
    ///     ImmediateScheduler.shared.schedule { print("now") }   // prints before returning
    ///
    /// - Parameter action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        enqueue(nil, action)
    }

    /// Schedules `action` to run on the calling thread once `delay` has passed,
    /// blocking the caller meanwhile.
    ///
    /// The time is measured on this scheduler's clock (``Scheduler/now``). Disposing the returned
    /// disposable before the action starts cancels it and releases the closure at once.
    ///
    ///     ImmediateScheduler.shared.schedule(after: .milliseconds(10)) { print("now") }   // prints before returning
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running the action.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        enqueue(delay, action)
    }

    private func enqueue(_ delay: Duration?, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let trampoline = Trampoline.forCurrentThread()
        if trampoline.isRunning {
            let scheduled = ScheduledAction(action)
            trampoline.queue.append((delay, scheduled))
            return scheduled
        }
        trampoline.isRunning = true
        defer { trampoline.isRunning = false }
        Schedulers.run(as: self) {
            Self.run(delay, action)
            while let (delay, scheduled) = trampoline.queue.popFirst() {
                if let action = scheduled.take() { Self.run(delay, action) }
            }
        }
        return DisposedDisposable.shared
    }

    private static func run(_ delay: Duration?, _ action: () -> Void) {
        if let delay, delay > .zero {
            Thread.sleep(forTimeInterval: Double(delay.clampedNanoseconds) / 1e9)
        }
        action()
    }
}

/// The per-thread queue of actions scheduled from inside an immediate action.
///
/// It is confined to its thread, so it needs no lock; it lives in thread-specific
/// storage and is released when the thread exits.
private final class Trampoline {
    var isRunning = false
    var queue = FIFOQueue<(Duration?, ScheduledAction)>()

    static func forCurrentThread() -> Trampoline {
        if let pointer = pthread_getspecific(trampolineKey) {
            return Unmanaged<Trampoline>.fromOpaque(pointer).takeUnretainedValue()
        }
        let trampoline = Trampoline()
        pthread_setspecific(trampolineKey, Unmanaged.passRetained(trampoline).toOpaque())
        return trampoline
    }
}

let trampolineKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
        if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
    }
    precondition(status == 0, "Ripple: pthread_key_create failed with \(status)")
    return key
}()
