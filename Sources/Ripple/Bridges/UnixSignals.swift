import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Signal where Value == Int32 {
    /// The POSIX signals `signals` as they arrive, as a cold signal (a `DispatchSourceSignal` per signal).
    ///
    /// Values are the signal numbers, delivered on a private serial queue; it never completes.
    /// Subscribing returns once the sources are registered, so a signal sent after that is seen.
    ///
    /// Any number of subscriptions to one signal coexist, and each sees every delivery of it.
    /// While at least one is live the process survives the signal (its disposition is taken
    /// over); disposing the last one restores, before `dispose()` returns, the disposition that
    /// was in place before the first: `SIG_DFL`, `SIG_IGN` or the process's own handler. A later
    /// subscription takes over again and hears the signal again. `dispose()` waits only for the
    /// sources to be unregistered, never for a callback, so it may be called from anywhere, a
    /// callback included. Changing the disposition of a signal yourself while a subscription to
    /// it is live is not supported.
    ///
    ///     let stop = Signal.unixSignals(SIGTERM, SIGINT).subscribeNext { _ in shutDown() }
    ///     let reload = Signal.unixSignals(SIGHUP).subscribeNext { _ in reloadConfiguration() }
    ///     reload.dispose()   // SIGHUP's old disposition is back; SIGTERM and SIGINT still arrive
    ///
    /// - Parameter signals: The signal numbers to watch (not `SIGKILL` or `SIGSTOP`).
    /// - Returns: A signal of the numbers of the signals received.
    public static func unixSignals(_ signals: Int32...) -> Signal<Int32> {
        Signal { subscriber in
            // The sources run only Ripple's bookkeeping on `sources`, never user code, so
            // `dispose()` can wait for them from any thread, a callback on `delivery` included.
            let delivery = DispatchQueue(label: "ripple.unix-signals")
            let sourceQueue = DispatchQueue(label: "ripple.unix-signals.sources")
            let registered = DispatchGroup(), cancelled = DispatchGroup()
            let sources = signals.map { number -> any DispatchSourceSignal in
                SignalDispositions.shared.retain(number)
                let source = DispatchSource.makeSignalSource(signal: number, queue: sourceQueue)
                source.setEventHandler { delivery.async { subscriber.sendNext(number) } }
                registered.enter()
                cancelled.enter()
                source.setRegistrationHandler { registered.leave() }
                // Runs once the source is unregistered (its signalfd no longer takes the signal),
                // so the last one restores a disposition nothing of libdispatch's overrides.
                source.setCancelHandler {
                    SignalDispositions.shared.release(number)
                    cancelled.leave()
                }
                source.resume()
                return source
            }
            // libdispatch installs its forwarding handler while registering a signal's first
            // source in the process; learn it, to put it back after a restore. Registration
            // takes a turn of dispatch's manager thread, which a busy machine may delay for
            // seconds: `subscribe` waits for it, so a signal sent once it returns is received.
            registered.wait()
            for number in signals { SignalDispositions.shared.learnDispatchHandler(from: number) }
            return ActionDisposable {
                for source in sources { source.cancel() }
                cancelled.wait()
            }
        }
    }
}

/// The process-wide bookkeeping behind `unixSignals`: for each signal number, how many of its
/// dispatch sources are live and the disposition in place before the first of them.
///
/// On Linux a dispatch signal source reads a `signalfd`; the signal reaches it only if no thread
/// consumes it first. libdispatch therefore installs a handler of its own (it forwards the signal
/// to its event thread, which blocks it) — but only when the *first* source for that number in
/// the process registers. Whoever sets the disposition afterwards (`SIG_IGN`, a restore) makes
/// every later source deaf, since libdispatch never installs it again. So the disposition changes
/// only on the first retain and the last release, and the handler libdispatch installed is
/// remembered (`learnDispatchHandler`) and put back by a later first retain.
final class SignalDispositions: Sendable {
    static let shared = SignalDispositions()

    // `sigaction` holds a C function pointer, which Swift does not mark Sendable.
    private struct State: @unchecked Sendable {  // plain data (a C function pointer), read and written only under `state`
        /// Live sources per signal number.
        var counts: [Int32: Int] = [:]
        /// The disposition before the first live source, per signal number with a live source.
        var previous: [Int32: sigaction] = [:]
        /// libdispatch's forwarding handler, once seen; the same function for every signal.
        var dispatchHandler: sigaction?
    }

    /// Guards the counts and every `sigaction` call made here, so a first retain and a last
    /// release never interleave. No user code runs under it.
    private let state = Lock(State())

    /// Counts a new source for `number`; the first one saves the disposition and takes it over
    /// (libdispatch's handler if known, else "ignore" until libdispatch installs its own).
    func retain(_ number: Int32) {
        state.withLock { state in
            state.counts[number, default: 0] += 1
            guard state.counts[number] == 1 else { return }
            var takeover = state.dispatchHandler ?? Self.ignore
            var old = sigaction()
            sigaction(number, &takeover, &old)
            state.previous[number] = old
        }
    }

    /// After `number`'s source registered: remembers the handler libdispatch may have installed.
    func learnDispatchHandler(from number: Int32) {
        state.withLock { state in
            guard state.dispatchHandler == nil, let previous = state.previous[number] else { return }
            var current = sigaction()
            sigaction(number, nil, &current)
            let handler = Self.address(current)
            let ignoreOrDefault = [Self.address(Self.ignore), Int(bitPattern: unsafeBitCast(SIG_DFL, to: UnsafeRawPointer?.self))]
            if !ignoreOrDefault.contains(handler) && handler != Self.address(previous) {
                state.dispatchHandler = current
            }
        }
    }

    /// Uncounts a source for `number` once it is unregistered (from its cancel handler); the last
    /// one restores the disposition saved by the first.
    func release(_ number: Int32) {
        state.withLock { state in
            guard let count = state.counts[number], count > 0 else { return }
            state.counts[number] = count == 1 ? nil : count - 1
            guard count == 1, var previous = state.previous.removeValue(forKey: number) else { return }
            sigaction(number, &previous, nil)
        }
    }

    /// The disposition "ignore".
    private static var ignore: sigaction {
        var action = sigaction()
        setHandler(&action, SIG_IGN)
        sigemptyset(&action.sa_mask)
        return action
    }

    /// The handler (or `SIG_DFL`/`SIG_IGN`) of `action`, as an address.
    private static func address(_ action: sigaction) -> Int {
        #if canImport(Glibc)
        Int(bitPattern: unsafeBitCast(action.__sigaction_handler.sa_handler, to: UnsafeRawPointer?.self))
        #elseif canImport(Musl)
        Int(bitPattern: unsafeBitCast(action.__sa_handler.sa_handler, to: UnsafeRawPointer?.self))
        #else
        Int(bitPattern: unsafeBitCast(action.__sigaction_u.__sa_handler, to: UnsafeRawPointer?.self))
        #endif
    }

    private static func setHandler(_ action: inout sigaction, _ handler: sighandler_t?) {
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = handler
        #elseif canImport(Musl)
        action.__sa_handler.sa_handler = handler
        #else
        action.__sigaction_u.__sa_handler = handler
        #endif
    }
}
