/// How long `retry(upTo:backoff:on:)` waits before each retry.
///
/// The delay before retry k (1 for the first) is a base delay, reduced by jitter:
///
/// - `.exponential(initial:multiplier:maximum:jitter:)`: the base grows geometrically,
///   `initial × multiplierᵏ⁻¹`, and stays at `maximum` once it gets there.
/// - `.constant(_:jitter:)`: the base is the same before every retry.
/// - `.immediate`: no wait (the retry still starts from the scheduler).
///
/// Jitter spreads the retries of many clients that failed together: with a jitter `j` between
/// 0 and 1, the delay is `base × (1 − j × r)`, with `r` drawn uniformly from `0..<1` for each
/// retry. So `jitter: 0` waits exactly the base (the default, and what a test uses), `jitter: 0.5`
/// waits between half the base and the base ("equal jitter"), and `jitter: 1` anywhere from
/// zero to the base ("full jitter"). Jitter never makes a delay longer than the base, so
/// `maximum` stays a bound. `random` draws `r`; pass a fixed sequence to make jittered delays
/// reproducible.
///
///     let backoff = RetryBackoff.exponential(initial: .milliseconds(100), multiplier: 2,
///                                            maximum: .seconds(5), jitter: 0.5)
///     // bases 100 ms, 200 ms, 400 ms, … 5 s, 5 s; each delay somewhere in its upper half
public struct RetryBackoff: Sendable {
    private enum Growth: Sendable {
        case constant(Duration)
        case exponential(initial: Duration, multiplier: Double, maximum: Duration)
    }

    private let growth: Growth
    private let jitter: Double
    private let random: @Sendable () -> Double

    private init(_ growth: Growth, jitter: Double, random: @escaping @Sendable () -> Double) {
        precondition((0...1).contains(jitter), "RetryBackoff: jitter must be between 0 and 1, got \(jitter)")
        self.growth = growth
        self.jitter = jitter
        self.random = random
    }

    /// Delays that grow geometrically from `initial` by `multiplier`, up to `maximum`.
    ///
    ///     .exponential(initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(50), jitter: 0)
    ///     // 10 ms, 20 ms, 40 ms, 50 ms, 50 ms, …
    ///
    /// - Parameters:
    ///   - initial: The delay before the first retry (before jitter); zero or more.
    ///   - multiplier: The growth from one delay to the next; 1 or more, and finite.
    ///   - maximum: The longest delay; at least `initial`.
    ///   - jitter: The share of each delay that is random, from 0 (none) to 1 (full jitter).
    ///   - random: Draws a fraction in `0..<1` for the jitter (a draw outside it is clamped into
    ///     it, NaN counts as 0); the system's generator unless given.
    /// - Returns: The backoff.
    /// - Precondition: `initial` is zero or more, `multiplier` finite and 1 or more, `maximum` at
    ///   least `initial`, and `jitter` between 0 and 1.
    public static func exponential(
        initial: Duration, multiplier: Double = 2, maximum: Duration, jitter: Double = 0,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) -> RetryBackoff {
        precondition(initial >= .zero, "RetryBackoff.exponential: initial must not be negative, got \(initial)")
        precondition(multiplier.isFinite, "RetryBackoff.exponential: multiplier must be a finite number, got \(multiplier)")
        precondition(multiplier >= 1, "RetryBackoff.exponential: multiplier must be 1 or more, got \(multiplier)")
        precondition(maximum >= initial, "RetryBackoff.exponential: maximum (\(maximum)) must be at least initial (\(initial))")
        return RetryBackoff(.exponential(initial: initial, multiplier: multiplier, maximum: maximum), jitter: jitter, random: random)
    }

    /// The same delay before every retry (ReactiveSwift's `retry(upTo:interval:on:)`).
    ///
    ///     .constant(.seconds(1))   // 1 s, 1 s, 1 s, …
    ///
    /// - Parameters:
    ///   - delay: The delay before each retry (before jitter); zero or more.
    ///   - jitter: The share of each delay that is random, from 0 (none) to 1 (full jitter).
    ///   - random: Draws a fraction in `0..<1` for the jitter (a draw outside it is clamped into
    ///     it, NaN counts as 0); the system's generator unless given.
    /// - Returns: The backoff.
    /// - Precondition: `delay` is zero or more, and `jitter` between 0 and 1.
    public static func constant(
        _ delay: Duration, jitter: Double = 0,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) -> RetryBackoff {
        precondition(delay >= .zero, "RetryBackoff.constant: the delay must not be negative, got \(delay)")
        return RetryBackoff(.constant(delay), jitter: jitter, random: random)
    }

    /// No wait between attempts: each retry is scheduled at once.
    ///
    ///     source.retry(upTo: 3, backoff: .immediate, on: queue)   // retries hop onto `queue`
    public static var immediate: RetryBackoff { .constant(.zero) }

    /// The delay before retry `retry` (1 for the first), jitter included.
    ///
    ///     RetryBackoff.exponential(initial: .seconds(1), maximum: .seconds(8)).delay(beforeRetry: 3)   // 4 s
    ///
    /// Takes a few steps whatever `retry` is: `delay(beforeRetry: .max)` is `maximum` (before
    /// jitter) at once. A draw of `random` outside `0..<1` is clamped into it, and a NaN draw
    /// counts as 0 (no jitter taken off).
    ///
    /// - Parameter retry: Which retry: 1 for the first.
    /// - Returns: How long to wait before it.
    /// - Precondition: `retry` is 1 or more.
    public func delay(beforeRetry retry: Int) -> Duration {
        precondition(retry >= 1, "RetryBackoff.delay(beforeRetry:): retries count from 1, got \(retry)")
        let base: Duration
        switch growth {
        case .constant(let delay):
            base = delay
        case .exponential(let initial, let multiplier, let maximum):
            base = Self.grown(initial, by: multiplier, steps: retry - 1, upTo: maximum)
        }
        if jitter == 0 { return base }
        let draw = random()  // user code
        let fraction = draw.isNaN ? 0 : min(max(draw, 0), Double(1).nextDown)
        return base * (1 - jitter * fraction)  // a factor in (0, 1]: never past `base`
    }

    /// `initial × multiplier^steps`, or `maximum` if that is at least `maximum`.
    ///
    /// The factor is raised by squaring (at most 2 × 63 multiplications) and compared with
    /// `maximum / initial` before any `Duration` is multiplied, so nothing overflows, however
    /// many steps; whole multipliers give exact factors (below 2⁵³). A factor below the ratio
    /// makes a product below `maximum` (up to rounding, which `min` absorbs).
    private static func grown(_ initial: Duration, by multiplier: Double, steps: Int, upTo maximum: Duration) -> Duration {
        guard steps > 0, multiplier > 1, initial > .zero, initial < maximum else { return initial }
        let ratio = maximum / initial  // > 1
        var factor = 1.0
        var power = multiplier  // multiplier^(2^i): grows, may reach infinity (then the factor does too)
        var remaining = steps
        while remaining > 0 {
            if remaining & 1 == 1 {
                factor *= power
                // Every later power is 1 or more: the factor only grows from here.
                if factor >= ratio { return maximum }
            }
            remaining >>= 1
            if remaining > 0 { power *= power }
        }
        return min(initial * factor, maximum)
    }
}
