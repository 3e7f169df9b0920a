#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sizes and time limits of the heavy tests, scaled for sanitizer passes.
///
/// Sanitizer runtimes are found in the running process (no build flag: a plain
/// `swift test --sanitize=thread` or `--sanitize=address` is detected). Their runtimes
/// multiply time and memory several times over, and ThreadSanitizer's runtime cannot keep
/// books on millions of short-lived synchronized objects (it failed an internal CHECK while
/// resetting its clocks, in the million-element tests). There every heavy workload runs at a
/// tenth of its size — still far past any stack or list limit it probes — and timing limits
/// are five times looser. Plain `swift test` runs everything at full size.
///
///     let depth = Workload.size(100_000)   // 10,000 under a sanitizer
public enum Workload {
    /// True when ThreadSanitizer's or AddressSanitizer's runtime is in the process.
    public static let isSanitized: Bool = ["__tsan_init", "__asan_init"].contains { (name: String) in
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil
    }

    /// `full`, or a tenth of it under a sanitizer.
    public static func size(_ full: Int) -> Int {
        isSanitized ? full / 10 : full
    }

    /// A time limit in seconds: `seconds`, or five times it under a sanitizer.
    public static func timeLimit(_ seconds: Double) -> Double {
        isSanitized ? seconds * 5 : seconds
    }

    /// How long a test waits for something that must happen before it calls it a hang: two
    /// minutes (ten under a sanitizer).
    ///
    /// A guard against hangs, never a measure of speed. On a machine shared with other builds a
    /// thread, a timer, the main queue or Swift's pool can wait many seconds for a core, so no
    /// test may fail because something took seconds: every wait for an event, a thread or a
    /// child process uses this limit, and what must be prompt is proved by counting (steps,
    /// queued events, waits), not by a clock.
    public static let hangLimit: Double = timeLimit(120)
}
