/// What one `retry(upTo:backoff:on:)` subscription decides under its lock, as a pure state
/// machine: which phase it is in, how many retries it made, the timer of the wait, and whether
/// a thread is running the attempt loop.
///
///     attempting ──attemptFailed()──▶ waiting(g) ──timerFired(g)──▶ attempting
///          │                              │
///          └── limit reached, completed ──┴── dispose() ──▶ finished
///
/// Invariants:
/// 1. At most one attempt is live: a new one starts only from `waiting` (`timerFired`), or as
///    the first attempt.
/// 2. `retries` never exceeds `limit`; the failure after the last retry is forwarded.
/// 3. The timer kept is the one of the current wait (`keep(_:for:)` checks the generation): a
///    timer that fired, or belongs to an older wait, is never kept, and `dispose()` hands back
///    the one pending, for the caller to cancel — nothing stays scheduled after a dispose.
/// 4. At most one thread loops (`isLooping`); an attempt requested while it loops
///    (`mustAttempt`) is started by that thread, so an attempt that fails at once, with a
///    scheduler that runs the retry at once, never nests a subscribe in another.
struct BackoffRetryState: Sendable {
    let limit: Int

    enum Phase: Equatable, Sendable {
        /// An attempt is live (or about to start).
        case attempting
        /// The attempt failed; the retry waits for the timer of wait `generation`.
        case waiting(generation: Int)
        /// The result ended: completed, failed, or disposed.
        case finished
    }

    private(set) var phase = Phase.attempting
    /// Retries made so far (invariant 2).
    private(set) var retries = 0
    /// The number of the latest wait.
    private(set) var generation = 0
    /// The pending timer of the current wait (invariant 3).
    private var timer: (any Disposable)?
    private(set) var isLooping = false
    private var mustAttempt = false

    init(limit: Int) {
        self.limit = limit
    }

    /// What to do with an attempt's error.
    enum Failure: Equatable, Sendable {
        /// The result has ended: drop it.
        case ignore
        /// No retries are left: forward it.
        case forward
        /// Wait the backoff's delay before retry number `retry`, then retry (timer of wait
        /// `generation`).
        case wait(retry: Int, generation: Int)
    }

    mutating func attemptFailed() -> Failure {
        guard phase == .attempting else { return .ignore }
        guard retries < limit else {
            phase = .finished
            return .forward
        }
        retries += 1
        generation += 1
        phase = .waiting(generation: generation)
        return .wait(retry: retries, generation: generation)
    }

    /// An attempt completed: true if it is to be forwarded.
    mutating func attemptCompleted() -> Bool {
        guard phase == .attempting else { return false }
        phase = .finished
        return true
    }

    /// The timer of wait `generation` was scheduled: keeps it if that wait is still on, else
    /// hands it back to be disposed (it fired already, or the result ended meanwhile).
    mutating func keep(_ scheduled: any Disposable, for generation: Int) -> (any Disposable)? {
        guard phase == .waiting(generation: generation) else { return scheduled }
        timer = scheduled
        return nil
    }

    /// The timer of wait `generation` fired: true if the retry is to start. Hands back the
    /// timer's disposable, to be released after unlocking.
    mutating func timerFired(_ generation: Int) -> (retry: Bool, fired: (any Disposable)?) {
        guard phase == .waiting(generation: generation) else { return (false, nil) }
        phase = .attempting
        defer { timer = nil }
        return (true, timer)
    }

    /// The result is disposed: hands back the pending timer, to be cancelled after unlocking.
    mutating func dispose() -> (any Disposable)? {
        phase = .finished
        mustAttempt = false
        defer { timer = nil }
        return timer
    }

    /// An attempt is due: true if the calling thread is to run the loop, false if the thread
    /// running it will start the attempt (invariant 4).
    mutating func requestAttempt() -> Bool {
        mustAttempt = true
        if isLooping { return false }
        isLooping = true
        return true
    }

    /// The looper's next step: true to start an attempt, false to end the loop.
    mutating func nextAttempt() -> Bool {
        if mustAttempt, phase == .attempting {
            mustAttempt = false
            return true
        }
        mustAttempt = false
        isLooping = false
        return false
    }
}
