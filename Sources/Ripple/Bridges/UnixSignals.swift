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
    /// Subscribing sets each signal's disposition to "ignore" (so the process survives it and
    /// the dispatch source sees it) and starts a source; disposing cancels the sources and
    /// restores the default disposition. Values are the signal numbers, delivered on a
    /// private serial queue; it never completes.
    ///
    ///     Signal.unixSignals(SIGTERM, SIGINT).subscribeNext { _ in shutDown() }
    public static func unixSignals(_ signals: Int32...) -> Signal<Int32> {
        Signal { subscriber in
            let queue = DispatchQueue(label: "ripple.unix-signals")
            let sources = signals.map { number -> any DispatchSourceSignal in
                _ = signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { subscriber.sendNext(number) }
                source.resume()
                return source
            }
            return ActionDisposable {
                for source in sources { source.cancel() }
                for number in signals { _ = signal(number, SIG_DFL) }
            }
        }
    }
}
