extension SignalProtocol {
    /// Prints every event of every subscription with `name`, in full (RAC's `logAll`).
    ///
    /// Lines read `[name] next(1)`, `[name] error(…)`, `[name] completed`; values are
    /// printed with `String(describing:)`, never truncated. Pass `output` to send the lines
    /// elsewhere (a test, a logger); the default prints to standard output.
    ///
    ///     signal.log("clicks").subscribe()
    ///     signal.log("clicks", output: { logger.debug($0) })
    public func log(_ name: String, output: @escaping (String) -> Void = { print($0) }) -> Signal<Value> {
        lift { downstream in
            .relay(
                to: downstream,
                next: { value in
                    output("[\(name)] next(\(value))")
                    downstream.sendNext(value)
                },
                error: { error in
                    output("[\(name)] error(\(error))")
                    downstream.sendError(error)
                },
                completed: {
                    output("[\(name)] completed")
                    downstream.sendCompleted()
                })
        }
    }
}
