/// The delivery turn's transitions, as a pure state machine: who delivers an event, who waits,
/// and to whom the turn goes next.
///
/// An owner (a `Subscriber`, a subject's storage, an operator's `SerialForwarder`) keeps one
/// `TurnMachine` in its locked state and one `DeliveryTurn` word beside it. The machine never
/// touches threads, locks or atomics: the owner reads the word under its lock (`fence`),
/// hands it to a transition as `inout word`, and publishes what the transition left there.
/// So the transitions are testable with plain values, and they are the transitions of the
/// Promela model `Core/Model/turn.pml`, under the same names. The design, its invariants and
/// why it cannot deadlock: the `DeliveryTurn` article of the DocC catalog.
///
/// The word: `0` when the turn is free; else the holder's identity (`TurnIdentity`) with bit 0,
/// the *look* flag, set when the holder must come back to the lock before giving the turn up.
///
/// Invariants, whenever the owner's lock is free:
/// 1. `word == 0` ⇒ `queue` is empty.
/// 2. `queue` is not empty ⇒ the look flag is set.
/// 3. An entry with a waiter belongs to a thread that is blocked (or about to block) until the
///    entry is delivered: by the holder for it (`combine`, at most `combiningBudget` per turn),
///    or by that thread once the turn is handed to it with the entry at the head of the queue.
///    Ownerless entries are delivered by the holder.
@usableFromInline
struct TurnMachine<Work> {
    /// One accepted piece of work waiting for the turn.
    @usableFromInline
    struct Entry {
        @usableFromInline var work: Work
        /// The thread blocked until this entry is delivered, or nil: ownerless, the holder
        /// delivers it (a re-entrant send, or one that would have closed a cycle).
        @usableFromInline var waiter: TurnWaiter?

        @inlinable init(work: Work, waiter: TurnWaiter?) {
            self.work = work
            self.waiter = waiter
        }
    }

    /// What a sender does after `arrive`.
    @usableFromInline
    enum Arrival {
        /// `takeFree`: the turn was free and is now the sender's: deliver, then `look` as the holder.
        case deliver
        /// `queueReentrant` / `queueCycle`: the holder will deliver it; return at once.
        case queued
        /// `wait`: block on the waiter until the holder delivered the entry for it (`combine`) or
        /// handed it the turn (`handOff`: then `look`, which delivers its entry first).
        case wait(TurnWaiter)
    }

    /// What the holder does after `look`.
    @usableFromInline
    enum Look {
        /// Keep the turn and deliver this entry: ownerless, or the holder's own.
        case deliver(Work)
        /// `combine`: keep the turn, deliver a waiting thread's entry for it, then wake it with
        /// `done` when `last` (it has no other entry queued): its send has returned.
        case deliverFor(TurnWaiter, Work, last: Bool)
        /// Keep the turn and tidy up (the owner's own reasons: removals, a disposal), then look again.
        case tidy
        /// `handOff`: the turn now belongs to this waiter, whose entry heads the queue; wake it.
        /// The holder's turn is over.
        case handOff(TurnWaiter)
        /// The queue is empty: the turn is free.
        case released
    }

    /// How many waiting threads' entries a holder delivers for them (`combine`) before it hands
    /// the turn on: the bound on the work a send or subscribe does that is not its own.
    @inlinable static var combiningBudget: Int { 16 }

    /// Accepted entries in order; bounded by the threads blocked on it plus the ownerless
    /// entries running callbacks sent.
    @usableFromInline var queue = FIFOQueue<Entry>()

    @inlinable init() {}

    /// Whether the word names a holder.
    @inlinable static func isHeld(_ word: UInt) -> Bool { word != 0 }
    /// The holder's identity in `word` (without the look flag).
    @inlinable static func holder(of word: UInt) -> UInt { word & ~1 }
    /// `word` with the look flag set.
    @inlinable static func asking(_ word: UInt) -> UInt { word | 1 }

    /// A sender's arrival, under the owner's lock, after `fence` left the word either as the
    /// sender's own (it was free: `takeFree`) or as another holder's with the look flag set.
    ///
    /// - Parameters:
    ///   - work: The accepted work (a value, a terminal event, a replay).
    ///   - me: The sender's identity.
    ///   - word: The fenced word.
    ///   - isMe: Whether a holder identity is the sender's thread (or one it continues, see
    ///     `TurnIdentity`): then the sender is inside one of the owner's callbacks.
    ///   - mayWait: Whether the sender may block for `holder`: false when that would close a
    ///     cycle in the wait-for graph. When true, the call has registered `waiter` as waiting.
    @inlinable
    mutating func arrive(
        _ work: Work, by me: UInt, word: inout UInt,
        isMe: (UInt) -> Bool, waiter: @autoclosure () -> TurnWaiter,
        mayWait: (_ holder: UInt, _ waiter: TurnWaiter) -> Bool
    ) -> Arrival {
        if word == me {  // takeFree (under the lock)
            assert(queue.isEmpty, "Ripple: a free delivery turn had queued work")
            return .deliver
        }
        word = Self.asking(word)
        if let waiter = queue(work, behind: Self.holder(of: word), isMe: isMe, waiter: waiter(), mayWait: mayWait) {
            return .wait(waiter)
        }
        return .queued
    }

    /// Queues `work` behind another holder: ownerless when the sender is inside the holder's
    /// callbacks (`queueReentrant`) or waiting would close a cycle (`queueCycle`), else owned by
    /// the sender's waiter (`wait`), which it returns.
    @inlinable
    mutating func queue(
        _ work: Work, behind holder: UInt,
        isMe: (UInt) -> Bool, waiter: @autoclosure () -> TurnWaiter,
        mayWait: (_ holder: UInt, _ waiter: TurnWaiter) -> Bool
    ) -> TurnWaiter? {
        if isMe(holder) {  // queueReentrant
            queue.append(Entry(work: work, waiter: nil))
            return nil
        }
        let waiter = waiter()
        if mayWait(holder, waiter) {  // wait
            queue.append(Entry(work: work, waiter: waiter))
            waiter.expectsWake = true
            return waiter
        }
        queue.append(Entry(work: work, waiter: nil))  // queueCycle
        return nil
    }

    /// What a forwarder's sender does after `enqueue`.
    @usableFromInline
    enum Enqueued {
        /// The turn was free and is now the sender's (`takeFree`): look, after unlocking.
        case holding
        /// `queueReentrant` / `queueCycle`: the holder will deliver it.
        case queued
        /// `wait`: the entry is the sender's; wait for the hand-off, then look.
        case waiting
    }

    /// Like `arrive`, for an owner whose senders decide under a lock of their own and deliver
    /// after releasing it (`SerialForwarder`): the entry always joins the queue, carrying its
    /// work, owned by the sender unless the holder is to deliver it. The sender then `look`s as
    /// the holder (`.holding`) or waits for the hand-off first (`.waiting`); consecutive
    /// entries of one sender are delivered by it in one turn.
    @inlinable
    mutating func enqueue(
        _ work: Work, by me: UInt, word: inout UInt,
        isMe: (UInt) -> Bool, waiter: @autoclosure () -> TurnWaiter,
        mayWait: (_ holder: UInt, _ waiter: TurnWaiter) -> Bool
    ) -> Enqueued {
        let holder = Self.holder(of: word)
        word = Self.asking(word)
        if holder == me {  // takeFree now, or earlier in this critical section
            queue.append(Entry(work: work, waiter: nil))
            return .holding
        }
        if let last = queue.last, let owner = last.waiter, owner.identity == me {  // this sender's run goes on
            queue.append(Entry(work: work, waiter: owner))
            return .waiting
        }
        let sender = waiter()
        if sender.expectsWake {
            // This sender already owns an entry in this critical section, and the holder has taken
            // it out (it will wake the sender once for it): a second owned entry would owe a second
            // wake that `drain` never waits for. The holder delivers this one.
            queue.append(Entry(work: work, waiter: nil))
            return .queued
        }
        return queue(work, behind: holder, isMe: isMe, waiter: sender, mayWait: mayWait) == nil ? .queued : .waiting
    }

    /// The holder's look, under the owner's lock, when it could not give the turn up
    /// lock-free (`releaseUnasked` failed: the look flag was set).
    ///
    /// Entries are taken in order: ownerless ones and the holder's own are delivered by it; a
    /// waiting thread's entry is delivered for it while `combined` (the count this holder has
    /// delivered for others in this turn) is below `combiningBudget`, else the turn is handed
    /// to that thread.
    ///
    /// - Parameters:
    ///   - me: The holder's identity.
    ///   - word: The word (`me`, possibly with the look flag); left as what to publish.
    ///   - needsTidy: Whether the owner has something of its own to tidy first.
    ///   - combined: How many entries this holder has delivered for waiting threads so far.
    @inlinable
    mutating func look(by me: UInt, word: inout UInt, needsTidy: Bool, combined: Int = Int.max) -> Look {
        if needsTidy {
            word = Self.asking(me)
            return .tidy
        }
        guard let head = queue.first else {
            word = 0
            return .released
        }
        if let waiter = head.waiter, waiter.identity != me {
            if combined >= Self.combiningBudget {  // handOff: the entry stays for its thread
                word = Self.asking(waiter.identity)
                return .handOff(waiter)
            }
            _ = queue.popFirst()  // combine
            word = queue.isEmpty ? me : Self.asking(me)
            return .deliverFor(waiter, head.work, last: !hasEntries(ownedBy: waiter.identity))
        }
        _ = queue.popFirst()
        word = queue.isEmpty ? me : Self.asking(me)
        return .deliver(head.work)
    }

    /// Whether `me` owns queued entries (a forwarder's sender that must wait for its hand-off).
    @inlinable
    func hasEntries(ownedBy me: UInt) -> Bool {
        queue.contains { $0.waiter?.identity == me }
    }

    /// Drops the ownerless entries (a disposal before any terminal event), keeping those whose
    /// threads wait: they are still handed the turn, so they return. Returns what was dropped,
    /// to be released after unlocking.
    @inlinable
    mutating func dropOwnerless() -> [Work] {
        guard !queue.isEmpty else { return [] }
        var dropped: [Work] = []
        var kept = FIFOQueue<Entry>()
        while let entry = queue.popFirst() {
            if entry.waiter == nil { dropped.append(entry.work) } else { kept.append(entry) }
        }
        queue = kept
        return dropped
    }
}
