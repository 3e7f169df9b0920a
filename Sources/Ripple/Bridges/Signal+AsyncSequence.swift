extension SignalProtocol where Value: Sendable {
    /// The signal's values as an `AsyncThrowingStream`: subscribes when iteration starts
    /// (when the stream is created), finishes on completion, throws the signal's error.
    ///
    /// Cancelling the iterating task, or dropping the stream, disposes the subscription.
    /// The stream ends exactly once whatever races between completion, error and
    /// cancellation; values are buffered without bound until consumed.
    ///
    ///     for try await value in signal.values { print(value) }
    ///
    /// Values must be `Sendable`: they cross into the iterating task.
    public var values: AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream()
        let subscription = subscribe(
            next: { continuation.yield($0) },
            error: { continuation.finish(throwing: $0) },
            completed: { continuation.finish() })
        continuation.onTermination = { _ in subscription.dispose() }
        return stream
    }
}

extension Signal where Value: Sendable {
    /// A cold signal that iterates `sequence` in a new task for each subscription, sending
    /// each element, then completion (or the error it throws).
    ///
    /// Disposing cancels the task.
    ///
    ///     Signal(sequence: AsyncStream { … })
    public convenience init<S: AsyncSequence & Sendable>(sequence: S) where S.Element == Value {
        self.init { subscriber in
            let task = Task {
                do {
                    for try await element in sequence {
                        if Task.isCancelled || subscriber.isDisposed { return }
                        subscriber.sendNext(element)
                    }
                    if !Task.isCancelled { subscriber.sendCompleted() }
                } catch {
                    subscriber.sendError(error)
                }
            }
            return ActionDisposable { task.cancel() }
        }
    }
}
