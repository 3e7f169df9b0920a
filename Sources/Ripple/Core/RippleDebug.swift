import CRippleThread
import Synchronization

/// Counters for finding leaks, present in every build.
///
/// `liveSubscriptions` counts the subscriptions that exist right now — every `Subscriber`
/// and every subject subscription (closure or subscriber) — from creation to deinit. After a
/// test or a request disposes or completes everything it started and drops its references,
/// the count returns to where it was. Counting costs two relaxed atomic additions per
/// subscription, none per event.
///
///     let before = RippleDebug.liveSubscriptions
///     runScenario()
///     assert(RippleDebug.liveSubscriptions == before)
///
/// The global count mixes everything the process does. To count only what one piece of
/// work creates while other work runs beside it (tests running in parallel, requests in a
/// service), run it inside `RippleDebug.counting(in:)` with a `Scope`.
public enum RippleDebug {
    /// Subscriptions alive now (created and not yet deinitialized).
    public static var liveSubscriptions: Int { liveSubscriptionCount.load(ordering: .relaxed) }

    /// A count of the live subscriptions created while it was the current scope.
    ///
    /// A subscription is counted in the scope that was current (a task-local value) on the
    /// task that created it, and leaves that count when it is deinitialized, on whatever
    /// thread. Subscriptions created on a scheduler's thread or a thread of your own belong
    /// to no scope (they still count in `liveSubscriptions`).
    ///
    ///     let scope = RippleDebug.Scope()
    ///     RippleDebug.counting(in: scope) {
    ///         let subscription = subject.subscribe(next: { print($0) })
    ///         // scope.liveSubscriptions == 1
    ///         subscription.dispose()
    ///     }
    ///     // scope.liveSubscriptions == 0: nothing this work started is still alive
    public final class Scope: Sendable {
        @usableFromInline let count = Atomic<Int>(0)

        /// Creates a scope with nothing counted.
        public init() {
            scopesExist.store(true, ordering: .releasing)
        }

        /// Subscriptions created in this scope and alive now.
        public var liveSubscriptions: Int { count.load(ordering: .relaxed) }
    }

    /// The scope new subscriptions are counted in, or nil.
    @TaskLocal public static var currentScope: Scope?

    /// Runs `body` with `scope` as the current scope, so the subscriptions it creates count there.
    public static func counting<R>(in scope: Scope, _ body: () throws -> R) rethrows -> R {
        try $currentScope.withValue(scope, operation: body)
    }

    /// Runs the asynchronous `body` with `scope` as the current scope (child tasks inherit it).
    public static func counting<R>(
        in scope: Scope, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async rethrows -> R {
        try await $currentScope.withValue(scope, operation: body, isolation: isolation)
    }

    /// Counts a new subscription; returns the scope it belongs to, to pass to `subscriptionDestroyed`.
    @inlinable
    static func subscriptionCreated() -> Scope? {
        liveSubscriptionCount.add(1, ordering: .relaxed)
        // Reading the task-local costs a call into the concurrency runtime per subscription: a
        // process that never made a `Scope` skips it (a scope must exist before it is current;
        // its creation happens before any task that has it current runs).
        let scope = scopesExist.load(ordering: .acquiring) ? currentScope : nil
        scope?.count.add(1, ordering: .relaxed)
        return scope
    }

    @inlinable
    static func subscriptionDestroyed(in scope: Scope?) {
        liveSubscriptionCount.subtract(1, ordering: .relaxed)
        scope?.count.subtract(1, ordering: .relaxed)
    }
}

@usableFromInline
let liveSubscriptionCount = Atomic<Int>(0)

/// How many `.wait` sends stopped waiting at `DeliveryOverflow.waitLimit` (`RippleDebug.deliveryWaitsTimedOut`).
@usableFromInline
let timedOutWaits = Atomic<Int>(0)

/// Set once the first `RippleDebug.Scope` is made: until then no subscription can belong to one.
@usableFromInline
let scopesExist = Atomic<Bool>(false)

extension RippleDebug {
    /// How many `deliver(on:)` sends gave up waiting for room after `DeliveryOverflow.waitLimit`
    /// and let their value into the buffer beyond its bound (since the process started).
    ///
    /// A nonzero count means a drain was held up for a second: by code the wait-for graph
    /// cannot see (a plain block on the scheduler's queue waiting for the sender, say), or by a
    /// scheduler that slow — a callback that takes seconds, or a machine too busy to run it.
    ///
    ///     if RippleDebug.deliveryWaitsTimedOut > 0 { log.warning("deliver(on:) waits ran out") }
    public static var deliveryWaitsTimedOut: Int { timedOutWaits.load(ordering: .relaxed) }

    /// The lock-discipline check (debug builds): stops with a message naming `what` if the
    /// calling thread holds a Ripple `Lock`, or owes a wait for an entry it queued (the owed-wake
    /// rule, `TurnWaiter.currentThreadOwesAWait`). Called wherever Ripple is about to run user code —
    /// a callback, a subscribe closure, `==` — since user code under a lock deadlocks as soon as
    /// it re-enters. Compiles to nothing in release builds.
    @inlinable @inline(__always)
    static func checkNoLockHeld(_ what: @autoclosure () -> String) {
        #if DEBUG
        let held = ripple_locks_held_add(0)
        precondition(held == 0, "Ripple: \(what()) called while this thread holds \(held) Ripple lock(s): user code must never run under a lock")
        precondition(!TurnWaiter.currentThreadOwesAWait, "Ripple: \(what()) called between queueing an owned entry and waiting for it: user code must not run while a wake is owed")
        #endif
    }
}
