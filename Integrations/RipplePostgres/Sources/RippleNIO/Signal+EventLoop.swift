import NIOCore
import Ripple

extension SignalProtocol where Value: Sendable {
    /// Subscribes with closures that run on `loop`'s thread, in order, whatever code subscribes.
    ///
    /// `deliver(on: loop)` decides which thread delivers to a subscription; a subscription made
    /// in actor-isolated code (`@MainActor` code, an actor's method) then runs its closures on
    /// that actor, because Swift treats those closures as the actor's — running them on the
    /// loop would be a data race on the actor's state. So in `@MainActor` code
    /// `signal.deliver(on: onLoop).subscribeNext { … }` delivers on the main actor, not on the
    /// loop (RxSwift's `observe(on:)` and Combine's `receive(on:)` would run the closure on the
    /// scheduler: they predate Swift's isolation checking).
    ///
    /// This method is the way to run callbacks on the loop from anywhere: its closures are
    /// `@Sendable` and nonisolated, so they run on the loop, and the compiler rejects one that
    /// touches an actor's state (hop to the actor yourself, or keep the state on the loop).
    /// Events arrive as through `deliver(on: EventLoopScheduler(loop))` with its defaults
    /// (a buffer of 1,024 values, `.wait` when full).
    ///
    ///     @MainActor func start(_ orders: Subject<Order>, loop: any EventLoop, channel: any Channel) {
    ///         orders.subscribe(onLoop: loop, next: { order in
    ///             loop.assertInEventLoop()                  // holds, although start is @MainActor
    ///             channel.writeAndFlush(order, promise: nil)
    ///         })
    ///     }
    @discardableResult
    public func subscribe(
        onLoop loop: any EventLoop,
        next: (@Sendable (Value) -> Void)? = nil,
        error: (@Sendable (any Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> any Disposable {
        deliver(on: EventLoopScheduler(loop)).subscribe(isolation: nil, next: next, error: error, completed: completed)
    }
}
