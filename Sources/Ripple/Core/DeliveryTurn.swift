import CRippleThread
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who may deliver right now: the atomic word at the heart of `Subscriber`, the subjects and
/// `SerialForwarder` (the storage of a `TurnMachine`).
///
/// `0` when free; else the holder's `TurnIdentity` with bit 0, the *look* flag, set when the
/// holder must take the owner's lock before giving the turn up. Taking a free turn
/// (`takeFree`) and giving it back when nobody asked (`releaseUnasked`) are single
/// compare-and-swaps, so an uncontended send takes no lock. Everything else happens under the
/// owner's lock: `fence` first pins the word (takes a free turn, or sets the look flag so the
/// holder cannot leave without the lock), then a `TurnMachine` transition decides, and
/// `publish` stores its result. Acquire on taking and release on giving up order everything
/// the holder owns (a subject's subscriber list, a subscriber's closures) from one holder to the next.
@usableFromInline
struct DeliveryTurn: ~Copyable, Sendable {
    @usableFromInline let word = Atomic<UInt>(0)

    @inlinable init() {}

    /// `takeFree`: takes the turn if it is free.
    @inlinable
    func takeFree(_ me: UInt) -> Bool {
        word.compareExchange(expected: 0, desired: me, ordering: .acquiring).exchanged
    }

    /// How many times `takeSoon` and `awaitRelease` look at the word before giving up, with a
    /// CPU spin hint (`ripple_cpu_relax`) between looks: on x86-64 a `pause`, some 10 to 140
    /// cycles depending on the core, so up to about 3 µs in all (a few hundred nanoseconds on
    /// older cores) — about the time a holder takes to deliver one value to a few dozen
    /// subscribers; on AArch64 (`yield`) less.
    @inlinable static var spinRounds: Int { 64 }

    /// `takeFree`, for a sender that found the turn taken: waits a moment for the holder to give
    /// it up and takes it then — what a lock's adaptive spin does, and far cheaper than queueing
    /// behind the holder and sleeping until it delivers for this thread.
    ///
    /// Gives up (false; the caller queues as before) without spinning when the holder is this
    /// thread, directly or as the thread a `StackGuard` continuation continues (a send from a
    /// callback: the turn cannot come free), and as soon as the look flag is set (a thread is queued,
    /// or the holder has removals to tidy: the turn goes to the queue first, so a spinner never
    /// overtakes a waiter); else after `rounds` looks. Bounded: a send still returns after
    /// bounded work. A holder blocked on a turn this thread holds (the wait-for graph's cycle
    /// case) cannot let go either; the spin then costs its `rounds` and the send queues.
    ///
    /// - Parameters:
    ///   - rounds: How many looks at most (`spinRounds`).
    ///   - relax: Runs between looks (the CPU hint; tests count or script it).
    @usableFromInline
    func takeSoon(_ me: UInt, rounds: Int = spinRounds, relax: () -> Void = { ripple_cpu_relax() }) -> Bool {
        spin(me, rounds: rounds, relax: relax, whenFree: { takeFree(me) })
    }

    /// Waits a moment (as `takeSoon`, without taking it) for a turn held by another thread that
    /// nobody queued for to come free, so that the caller's locked arrival finds it free.
    @usableFromInline
    func awaitRelease(_ me: UInt, rounds: Int = spinRounds, relax: () -> Void = { ripple_cpu_relax() }) {
        _ = spin(me, rounds: rounds, relax: relax, whenFree: { true })
    }

    /// The spin of `takeSoon` and `awaitRelease`: looks at the word up to `rounds` times; a free
    /// word ends it if `whenFree` says so (true is returned); a word with the look flag, or held by
    /// this thread, ends it at once (false). Whether a holder is this thread, through a
    /// continuation's alias, is asked once per holder seen: that question takes the wait-for
    /// graph's lock.
    @inlinable
    func spin(_ me: UInt, rounds: Int, relax: () -> Void, whenFree: () -> Bool) -> Bool {
        var judged: UInt = 0  // the last holder found to be another thread
        for _ in 0..<rounds {
            let current = word.load(ordering: .relaxed)
            if current == 0 {
                if whenFree() { return true }
                continue
            }
            if current & 1 != 0 { return false }
            let holder = TurnMachine<Never>.holder(of: current)
            if holder != judged {
                if holder == me || (WaitGraph.hasAliases && TurnIdentity.isCurrent(holder)) { return false }
                judged = holder
            }
            relax()
        }
        return false
    }

    /// `releaseUnasked`: gives the turn up if nobody asked the holder to look; false means: look first.
    @inlinable
    func releaseUnasked(_ me: UInt) -> Bool {
        word.compareExchange(expected: me, desired: 0, ordering: .releasing).exchanged
    }

    /// Under the owner's lock: takes the turn if it is free (returns `me`), else sets the look
    /// flag on the holder's word and returns it. Afterwards the word changes only under the lock.
    @inlinable
    func fence(_ me: UInt) -> UInt {
        var current = word.load(ordering: .acquiring)
        while true {
            let desired = current == 0 ? me : TurnMachine<Never>.asking(current)
            if desired == current { return current }
            let (exchanged, original) = word.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return desired }
            current = original
        }
    }

    /// Under the owner's lock: stores what a transition decided.
    @inlinable
    func publish(_ value: UInt) { word.store(value, ordering: .releasing) }

    /// The holder's identity, or 0 when free.
    @inlinable
    var holder: UInt { TurnMachine<Never>.holder(of: word.load(ordering: .acquiring)) }

    /// Whether some thread holds the turn (acquire: see the last holder's writes).
    @inlinable
    var isHeld: Bool { word.load(ordering: .acquiring) != 0 }

    // MARK: Running the machine (each under the owner's lock)

    /// `TurnMachine.arrive` for a sender that found the turn taken: fence, decide, publish.
    @inlinable
    func arrive<Work>(
        _ work: Work, by me: UInt, in machine: inout TurnMachine<Work>, owner: any TurnOwner
    ) -> TurnMachine<Work>.Arrival {
        var word = fence(me)
        let arrival = machine.arrive(
            work, by: me, word: &word, isMe: TurnIdentity.isCurrent, waiter: TurnWaiter.ofCurrentThread,
            mayWait: { WaitGraph.startWaiting($1, for: owner, heldBy: $0) })
        publish(word)
        return arrival
    }

    /// `TurnMachine.enqueue` for a forwarder's sender: fence, decide, publish.
    @inlinable
    func enqueue<Work>(
        _ work: Work, by me: UInt, in machine: inout TurnMachine<Work>, owner: any TurnOwner
    ) -> TurnMachine<Work>.Enqueued {
        var word = fence(me)
        let enqueued = machine.enqueue(
            work, by: me, word: &word, isMe: TurnIdentity.isCurrent, waiter: TurnWaiter.ofCurrentThread,
            mayWait: { WaitGraph.startWaiting($1, for: owner, heldBy: $0) })
        publish(word)
        return enqueued
    }

    /// `TurnMachine.look` for the holder: read the word, decide, publish.
    @inlinable
    func look<Work>(
        by me: UInt, in machine: inout TurnMachine<Work>, needsTidy: Bool, combined: Int
    ) -> TurnMachine<Work>.Look {
        var word = word.load(ordering: .acquiring)
        let look = machine.look(by: me, word: &word, needsTidy: needsTidy, combined: combined)
        publish(word)
        return look
    }

    /// The holder's loop after its own delivery: `look` (under the owner's lock) decides, this
    /// acts after unlocking — delivers (its own, ownerless, or for a waiting thread, waking it
    /// after its last entry), tidies, hands the turn on, or stops when it is free.
    ///
    /// - Parameters:
    ///   - releasesLockFree: After a delivery, try `releaseUnasked` before looking again.
    ///   - look: Runs `look(by:in:needsTidy:combined:)` under the owner's lock.
    ///   - deliver: Delivers one entry's work.
    ///   - tidy: The owner's own tidying (removals, a disposal).
    @inlinable
    func runHolder<Work>(
        _ me: UInt, releasesLockFree: Bool,
        look: (_ combined: Int) -> TurnMachine<Work>.Look,
        deliver: (Work) -> Void, tidy: () -> Void
    ) {
        var combined = 0
        while true {
            switch look(combined) {
            case .deliver(let work):
                deliver(work)
            case .deliverFor(let waiter, let work, let last):
                deliver(work)
                combined += 1
                if last { waiter.done() }
            case .tidy:
                tidy()
                continue
            case .handOff(let waiter):
                waiter.handOff()
                return
            case .released:
                return
            }
            if releasesLockFree, releaseUnasked(me) { return }
        }
    }
}

/// A thread blocked until a delivery turn is handed to it (`TurnMachine.Arrival.wait`).
///
/// One per thread, made on its first contended send and reused: a thread waits for one turn
/// at a time, and every hand-off to it is matched by exactly one `wait`. A waiter spins a
/// little before it sleeps, since a turn is usually handed over within a callback's time; a
/// `DispatchSemaphore` alone would put every contended send through a futex sleep and wake.
@usableFromInline
final class TurnWaiter: @unchecked Sendable {  // `identity` is immutable, `state` atomic, the semaphore thread-safe, `expectsWake` thread-confined
    @usableFromInline let identity: UInt
    /// Set when this thread queued an entry it owns, cleared by `wait`: the thread must wait
    /// for the wake that entry will bring, even if the holder delivered it before the thread
    /// got to `wait` (a forwarder's sender enqueues under its operator's lock and waits later).
    /// Read and written only by this waiter's own thread.
    @usableFromInline var expectsWake = false
    /// The wake word. Transitions (W: the waiting thread, K: a waker, one wake per wait):
    ///
    /// | from | to | by | when |
    /// |---|---|---|---|
    /// | 0 waiting | 1 handed / 3 delivered | K | `handOff` / `done` before W sleeps |
    /// | 0 waiting | 2 asleep | W | spinning ran out; W sleeps on `handed` |
    /// | 2 asleep | 1 / 3 | K | K also signals `handed` |
    /// | 1 / 3 | 0 | W | W consumes the wake (`wait`, `wait(until:)`, `finishTimedWait`) |
    /// | 2 asleep | 0 | W | a timed wait withdrawn before any waker took it (`withdraw`) |
    private let state = Atomic<Int>(0)
    private let handed = DispatchSemaphore(value: 0)

    init(_ identity: UInt) { self.identity = identity }

    /// The calling thread's waiter.
    @usableFromInline
    static var ofCurrentThread: TurnWaiter {
        if let pointer = pthread_getspecific(waiterKey) {
            return Unmanaged<TurnWaiter>.fromOpaque(pointer).takeUnretainedValue()
        }
        let waiter = TurnWaiter(TurnIdentity.current)
        pthread_setspecific(waiterKey, Unmanaged.passRetained(waiter).toOpaque())
        return waiter
    }

    /// Blocks until the holder delivered this thread's entry for it (`done`: returns false) or
    /// handed it the turn (`handOff`: returns true; the caller now holds the turn and its entry
    /// heads the queue). Either way the thread has left the wait-for graph.
    @usableFromInline
    func wait() -> Bool {
        expectsWake = false
        defer { WaitGraph.stopWaiting(identity) }
        return awaitWake(until: nil) == Self.handedTurn
    }

    /// Spins for a wake, then sleeps on `handed` until it comes or `deadline` passes (nil: no
    /// deadline). Returns the wake consumed (`handedTurn` or `delivered`), or nil at the
    /// deadline, the word still saying *asleep*.
    private func awaitWake(until deadline: DispatchTime?) -> Int? {
        for round in 0..<1_000 {
            if state.compareExchange(expected: Self.handedTurn, desired: 0, ordering: .acquiring).exchanged { return Self.handedTurn }
            if state.compareExchange(expected: Self.delivered, desired: 0, ordering: .acquiring).exchanged { return Self.delivered }
            if round >= 100 { sched_yield() }
        }
        if state.compareExchange(expected: 0, desired: Self.asleep, ordering: .acquiringAndReleasing).exchanged {
            if let deadline {
                if handed.wait(timeout: deadline) == .timedOut { return nil }
            } else {
                handed.wait()
            }
        }
        return consumeWake()
    }

    /// Takes the wake the word holds (the hand-off or the delivery, which also woke a sleeper).
    /// Acquire pairs with the waker's release, so what the holder wrote is visible.
    private func consumeWake() -> Int { state.exchange(0, ordering: .acquiring) }

    /// What a bounded wait (`wait(until:)`) ended with.
    @usableFromInline
    enum TimedWake {
        /// Woken by `handOff`.
        case handedTurn
        /// Woken by `done`.
        case delivered
        /// Not woken by the deadline: the word still says *asleep*. The caller takes the waiter out
        /// of its owner's waiters (under the owner's lock) and calls `withdraw()`, or, if a waker
        /// had already taken it, `finishTimedWait()`.
        case timedOut
    }

    /// Like `wait()`, but sleeps no later than `deadline` (a `deliver(on:)` sender waiting for
    /// room: the safety net for holders the wait-for graph cannot see).
    ///
    /// On `.timedOut` the word still says *asleep*: a waker that took this waiter before the
    /// caller could withdraw it will still signal, and `finishTimedWait()` consumes that wake,
    /// so no stale wake is left for this thread's next wait. The thread has not left the
    /// wait-for graph yet: `withdraw()` and `finishTimedWait()` do that.
    @usableFromInline
    func wait(until deadline: DispatchTime) -> TimedWake {
        expectsWake = false
        guard let wake = awaitWake(until: deadline) else { return .timedOut }
        WaitGraph.stopWaiting(identity)
        return wake == Self.handedTurn ? .handedTurn : .delivered
    }

    /// After `.timedOut`, once the caller took this waiter out of its owner's waiters under the
    /// owner's lock (so no waker has it, or can find it): the word goes back to idle and the
    /// thread leaves the wait-for graph.
    @usableFromInline
    func withdraw() {
        let withdrawn = state.compareExchange(expected: Self.asleep, desired: 0, ordering: .acquiringAndReleasing).exchanged
        precondition(withdrawn, "Ripple: a withdrawn TurnWaiter was woken")
        WaitGraph.stopWaiting(identity)
    }

    /// After `.timedOut`, when a waker had already taken this waiter (it will wake it: it stores
    /// its news and, the word being *asleep*, signals): waits for that wake, which comes right
    /// after the waker unlocks, and consumes it. So every waker of a timed wait must wake the
    /// waiters it took before it runs any user code: this wait has no bound of its own.
    @usableFromInline
    func finishTimedWait() -> TimedWake {
        handed.wait()
        WaitGraph.stopWaiting(identity)
        return consumeWake() == Self.handedTurn ? .handedTurn : .delivered
    }

    /// Whether the calling thread queued an entry it owns and has not waited for it yet
    /// (`expectsWake`), without making a waiter for a thread that has none. The owed-wake rule:
    /// between queueing an owned entry (under an owner's or an operator's lock) and waiting for
    /// it, a thread runs no user code — user code could send again and wait for something else,
    /// with the wake it owes still to come. The lock-discipline check enforces it in debug builds.
    @usableFromInline
    static var currentThreadOwesAWait: Bool {
        guard let pointer = pthread_getspecific(waiterKey) else { return false }
        return Unmanaged<TurnWaiter>.fromOpaque(pointer).takeUnretainedValue().expectsWake
    }

    /// `handOff`: wakes the waiter, which now holds the turn.
    @usableFromInline
    func handOff() { wake(with: Self.handedTurn) }

    /// `combine`: wakes the waiter, whose entries the holder has delivered: its send returns.
    @usableFromInline
    func done() { wake(with: Self.delivered) }

    /// The waker's side of the word. A wake lands on a waiter that has not yet consumed the
    /// previous one only if the protocol broke (two wakes owed for one wait): the model checks
    /// that it never happens (`turn.pml`), and debug builds stop here if it does.
    private func wake(with news: Int) {
        let previous = state.exchange(news, ordering: .acquiringAndReleasing)
        assert(previous == 0 || previous == Self.asleep, "Ripple: a TurnWaiter was woken twice for one wait (state \(previous))")
        if previous == Self.asleep { handed.signal() }
    }

    private static var handedTurn: Int { 1 }
    private static var asleep: Int { 2 }
    private static var delivered: Int { 3 }
}

/// The thread-specific slot holding each thread's `TurnWaiter` (+1, released when the thread exits).
private let waiterKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
        #if os(Linux)
        guard let pointer else { return }
        #endif
        Unmanaged<TurnWaiter>.fromOpaque(pointer).release()
    }
    precondition(status == 0, "Ripple: pthread_key_create failed with \(status)")
    return key
}()

/// Who a thread is, for the delivery turn: its thread pointer, or, on a continuation thread
/// that `StackGuard` started for a deep chain, the thread it continues (which waits for it).
@usableFromInline
enum TurnIdentity {
    /// The calling thread's raw identity: nonzero and even (the thread pointer, an aligned
    /// address; one instruction, where `pthread_self()` is a call on every uncontended send).
    @inlinable
    static var current: UInt {
        UInt(ripple_thread_pointer())
    }

    /// Whether `holder` is the calling thread, directly or through a continuation alias.
    @inlinable
    static func isCurrent(_ holder: UInt) -> Bool {
        let me = current
        if holder == me { return true }
        return WaitGraph.hasAliases && WaitGraph.canonical(holder) == WaitGraph.canonical(me)
    }
}

/// The wait-for graph: which thread waits for which owner's turn, and the continuation aliases.
///
/// A thread that would block for a turn checks here first, under the graph's lock, whether
/// the holder it would wait for waits (directly or along a chain) for a turn this thread holds;
/// if so, waiting would deadlock, and the event is queued ownerless instead (`queueCycle`).
/// Threads on a chain are blocked and keep their turns, so the chain cannot change while it is
/// checked; new waits are checked one at a time under the lock. Only contended sends come here.
@usableFromInline
enum WaitGraph {
    /// An owner whose turn holder the graph can read. Held strongly; the waiting thread keeps
    /// the owner alive too, and `stopWaiting` releases the edge after unlocking, so the graph
    /// never runs an owner's deinit under its lock.
    @usableFromInline
    struct Edge: Sendable {
        @usableFromInline let owner: any TurnOwner
        @inlinable init(_ owner: any TurnOwner) { self.owner = owner }
    }

    struct State: Sendable {
        /// Canonical thread identity → the owner it waits for.
        var waiting: [UInt: Edge] = [:]
        /// Continuation thread → the thread it continues (canonical).
        var aliases: [UInt: UInt] = [:]
    }

    static let state = Lock(State())
    /// How many aliases exist: lets `TurnIdentity.isCurrent` skip the lock when there are none.
    @usableFromInline static let aliasCount = Atomic<Int>(0)

    @inlinable static var hasAliases: Bool { aliasCount.load(ordering: .acquiring) != 0 }

    /// The thread `identity` acts as.
    @usableFromInline
    static func canonical(_ identity: UInt) -> UInt {
        state.withLock { $0.aliases[identity] ?? identity }
    }

    /// Registers `waiter` as waiting for `owner`, whose turn `holder` holds — unless that would
    /// close a cycle; returns whether it registered (may wait).
    @usableFromInline
    static func startWaiting(_ waiter: TurnWaiter, for owner: any TurnOwner, heldBy holder: UInt) -> Bool {
        state.withLock { state in register(waiter, for: owner, heldBy: holder, in: &state) }
    }

    /// `startWaiting(_:for:heldBy:)` for an owner whose holder can change without the owner's
    /// lock (a `deliver(on:)` relay whose scheduled drain is held by its queue's occupant, a
    /// shared connection's phase): the holder is read here, under the graph's lock, so a
    /// thread that started waiting meanwhile is seen in the chain.
    @usableFromInline
    static func startWaiting(_ waiter: TurnWaiter, for owner: any TurnOwner) -> Bool {
        state.withLock { state in
            let holder = TurnMachine<Never>.holder(of: owner.turnWord)
            return register(waiter, for: owner, heldBy: holder, in: &state)
        }
    }

    /// The cycle check and the new edge, under the graph's lock.
    private static func register(_ waiter: TurnWaiter, for owner: any TurnOwner, heldBy holder: UInt, in state: inout State) -> Bool {
        let me = state.aliases[waiter.identity] ?? waiter.identity
        var thread = state.aliases[holder] ?? holder
        var steps = 0
        while steps <= state.waiting.count {
            if thread == me { return false }  // the chain leads back: waiting would deadlock
            guard let edge = state.waiting[thread] else { break }  // `thread` runs
            let next = TurnMachine<Never>.holder(of: edge.owner.turnWord)
            if next == 0 { break }
            let nextThread = state.aliases[next] ?? next
            if nextThread == thread { break }  // handed the turn, not yet awake: it runs
            thread = nextThread
            steps += 1
        }
        precondition(state.waiting.index(forKey: me) == nil, "Ripple: a thread started waiting twice without stopping")
        state.waiting[me] = Edge(owner)
        return true
    }

    /// Removes the calling waiter's edge once it holds the turn.
    @usableFromInline
    static func stopWaiting(_ identity: UInt) {
        let edge = state.withLock { state in
            let me = state.aliases[identity] ?? identity
            return state.waiting.removeValue(forKey: me)
        }
        _ = edge  // released here, after unlocking
    }

    /// Runs `body` with the calling thread acting as `continued` (a `StackGuard` continuation).
    static func acting<T>(as continued: UInt, _ body: () -> T) -> T {
        let me = TurnIdentity.current
        state.withLock { $0.aliases[me] = $0.aliases[continued] ?? continued }
        aliasCount.add(1, ordering: .releasing)
        defer {
            state.withLock { $0.aliases[me] = nil }
            aliasCount.subtract(1, ordering: .releasing)
        }
        return body()
    }
}

/// An object with a delivery turn (read by the wait-for graph).
@usableFromInline
protocol TurnOwner: AnyObject, Sendable {
    /// The current turn word.
    var turnWord: UInt { get }
}
