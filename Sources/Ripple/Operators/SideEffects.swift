extension SignalProtocol {
    /// Runs `action` for each value, before forwarding it (RAC's `doNext:`).
    ///
    ///     signal.onNext { print("about to send \($0)") }
    public func onNext(_ action: @escaping (Value) -> Void) -> Signal<Value> {
        lift { downstream in
            .relay(to: downstream, next: { value in
                action(value)
                downstream.sendNext(value)
            })
        }
    }

    /// Runs `action` with the error, before forwarding it (RAC's `doError:`).
    public func onError(_ action: @escaping (any Error) -> Void) -> Signal<Value> {
        lift { downstream in
            .relay(to: downstream, next: { downstream.sendNext($0) }, error: { error in
                action(error)
                downstream.sendError(error)
            })
        }
    }

    /// Runs `action` on completion, before forwarding it (RAC's `doCompleted:`).
    public func onCompleted(_ action: @escaping () -> Void) -> Signal<Value> {
        lift { downstream in
            .relay(to: downstream, next: { downstream.sendNext($0) }, completed: {
                action()
                downstream.sendCompleted()
            })
        }
    }

    /// Runs `action` for each subscription, before subscribing upstream (RAC's `initially:`).
    public func onSubscribe(_ action: @escaping () -> Void) -> Signal<Value> {
        Signal { downstream in
            action()
            // Linked before the upstream's producer runs (`subscribe(_:linking:)`): ending this
            // subscription while a synchronous upstream sends stops it at once.
            self.subscribe(downstream, linkingInto: downstream.disposable)
            return nil
        }
    }

    /// Runs `action` once per subscription when it ends, however it ends: completion,
    /// error or disposal (RAC's `finally:`, run on dispose as ReactiveSwift's `on(disposed:)`).
    ///
    ///     request.onDispose { spinner.stop() }
    public func onDispose(_ action: @escaping () -> Void) -> Signal<Value> {
        Signal { downstream in
            // The upstream subscription, then the action, join this subscription before the
            // upstream's producer runs (`subscribe(_:linking:)`): ending it while a synchronous
            // upstream sends stops that upstream at once and runs the action after it.
            self.subscribe(downstream, linking: { upstream in
                downstream.disposable.add(upstream)
                downstream.disposable.add(ActionDisposable(action))
            })
            return nil
        }
    }
}
