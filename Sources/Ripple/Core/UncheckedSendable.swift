/// Carries a value across a `@Sendable` boundary that Ripple serializes itself.
///
/// Ripple takes user closures and values that are not `Sendable` (a test may capture a
/// local `var`) and hands them to schedulers; the event grammar and the per-subscription
/// serialization are what make that safe, not the type system. This box is the one place
/// that says so.
struct UncheckedSendable<Wrapped>: @unchecked Sendable {  // the escape hatch itself: the caller vouches, as above
    var value: Wrapped
    init(_ value: Wrapped) { self.value = value }
}
