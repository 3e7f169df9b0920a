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
public enum RippleDebug {
    /// Subscriptions alive now (created and not yet deinitialized).
    public static var liveSubscriptions: Int { liveSubscriptionCount.load(ordering: .relaxed) }

    @inlinable
    static func subscriptionCreated() { liveSubscriptionCount.add(1, ordering: .relaxed) }

    @inlinable
    static func subscriptionDestroyed() { liveSubscriptionCount.subtract(1, ordering: .relaxed) }
}

@usableFromInline
let liveSubscriptionCount = Atomic<Int>(0)
