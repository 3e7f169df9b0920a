/// Sizes and time limits of the heavy tests, scaled for sanitizer passes.
///
/// `.ci/run` builds its sanitizer passes with `-DRIPPLE_TSAN` or `-DRIPPLE_ASAN`. Their runtimes
/// multiply time and memory several times over, and ThreadSanitizer's runtime cannot keep
/// books on millions of short-lived synchronized objects (it failed an internal CHECK while
/// resetting its clocks, in the million-element tests). There every heavy workload runs at a
/// tenth of its size — still far past any stack or list limit it probes — and timing limits
/// are five times looser. Plain `swift test` runs everything at full size.
///
///     let depth = Workload.size(100_000)   // 10,000 under a sanitizer
public enum Workload {
    /// True in a build made for a sanitizer pass.
    public static var isSanitized: Bool {
        #if RIPPLE_TSAN || RIPPLE_ASAN
        return true
        #else
        return false
        #endif
    }

    /// `full`, or a tenth of it under a sanitizer.
    public static func size(_ full: Int) -> Int {
        isSanitized ? full / 10 : full
    }

    /// A time limit in seconds: `seconds`, or five times it under a sanitizer.
    public static func timeLimit(_ seconds: Double) -> Double {
        isSanitized ? seconds * 5 : seconds
    }
}
