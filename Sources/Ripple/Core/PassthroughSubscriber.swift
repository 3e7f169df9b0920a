import Synchronization

/// The subscriber handed to a cold signal's subscribe closure (RAC's passthrough subscriber).
///
/// It forwards to the real subscriber only while the subscription's compound disposable
/// is not disposed, and a terminal event disposes that compound, which runs the
/// closure's cleanup and stops anything still sending. `isDisposed` lets a long-running
/// producer stop early.
final class PassthroughSubscriber<Value>: SubscriberProtocol, @unchecked Sendable {
    private let inner: any SubscriberProtocol<Value>
    private let disposable: CompoundDisposable
    /// Set by the first terminal event, so exactly one is forwarded.
    private let terminated = Atomic<Bool>(false)

    init(forwardingTo inner: any SubscriberProtocol<Value>, disposable: CompoundDisposable) {
        self.inner = inner
        self.disposable = disposable
    }

    /// True once the subscription is disposed, a terminal event was sent, or the real
    /// subscriber stopped taking events.
    var isDisposed: Bool {
        disposable.isDisposed || terminated.load(ordering: .acquiring) || inner.isDisposed
    }

    func sendNext(_ value: Value) {
        if disposable.isDisposed || terminated.load(ordering: .acquiring) { return }
        inner.sendNext(value)
    }

    func sendError(_ error: any Error) {
        guard beginTermination() else { return }
        inner.sendError(error)
        disposable.dispose()
    }

    func sendCompleted() {
        guard beginTermination() else { return }
        inner.sendCompleted()
        disposable.dispose()
    }

    private func beginTermination() -> Bool {
        if disposable.isDisposed { return false }
        return !terminated.exchange(true, ordering: .acquiringAndReleasing)
    }
}
