import Testing
@testable import Ripple
import RippleTestSupport

/// The delivery turn's transitions, driven with plain values: no threads, no atomics.
@Suite(.leakChecked) struct TurnMachineTests {
    typealias Machine = TurnMachine<String>
    let holder: UInt = 0x100, me: UInt = 0x200, other: UInt = 0x300

    /// `arrive` after `DeliveryTurn.fence`: a free word becomes the sender's, a held one gets the look flag.
    func arrive(_ machine: inout Machine, _ work: String, by thread: UInt, word: inout UInt,
                reentrant: Bool = false, cycle: Bool = false) -> Machine.Arrival {
        word = word == 0 ? thread : word | 1
        return machine.arrive(work, by: thread, word: &word, isMe: { _ in reentrant },
                       waiter: TurnWaiter(thread), mayWait: { _, _ in !cycle })
    }

    @Test func aSenderThatFoundTheTurnFreeDeliversItself() {
        var machine = Machine(), word: UInt = 0
        guard case .deliver = arrive(&machine, "a", by: me, word: &word) else { Issue.record("not delivered"); return }
        #expect(word == me)
        #expect(machine.queue.isEmpty)
    }

    @Test func aReentrantSendIsQueuedOwnerlessAndAsksTheHolderToLook() {
        var machine = Machine(), word = holder
        guard case .queued = arrive(&machine, "a", by: holder, word: &word, reentrant: true) else { Issue.record("not queued"); return }
        #expect(word == holder | 1)
        #expect(machine.queue.first?.waiter == nil && machine.queue.first?.work == "a")
    }

    @Test func aSenderFindingAnotherHolderWaitsWithItsOwnEntry() {
        var machine = Machine(), word = holder
        guard case .wait(let waiter) = arrive(&machine, "a", by: me, word: &word) else { Issue.record("not waiting"); return }
        #expect(waiter.identity == me)
        #expect(word == holder | 1)
        #expect(machine.queue.first?.waiter === waiter && machine.queue.first?.work == "a")
    }

    @Test func aSenderWhoseWaitWouldCloseACycleQueuesOwnerless() {
        var machine = Machine(), word = holder
        guard case .queued = arrive(&machine, "a", by: me, word: &word, cycle: true) else { Issue.record("not queued"); return }
        #expect(machine.queue.first?.waiter == nil && machine.queue.first?.work == "a")
    }

    @Test func theHolderDeliversOwnerlessEntriesThenHandsTheTurnToTheFirstWaiterOnceItsBudgetIsSpent() {
        var machine = Machine(), word = holder
        _ = arrive(&machine, "r1", by: holder, word: &word, reentrant: true)
        _ = arrive(&machine, "w", by: me, word: &word)
        _ = arrive(&machine, "r2", by: holder, word: &word, reentrant: true)
        let spent = Machine.combiningBudget
        guard case .deliver("r1") = machine.look(by: holder, word: &word, needsTidy: false, combined: spent) else { Issue.record("r1"); return }
        #expect(word == holder | 1, "more is queued: the next release goes through look")
        guard case .handOff(let waiter) = machine.look(by: holder, word: &word, needsTidy: false, combined: spent) else { Issue.record("hand-off"); return }
        #expect(waiter.identity == me)
        #expect(word == me | 1, "the turn is the waiter's, its entry still heads the queue")
        guard case .deliver("w") = machine.look(by: me, word: &word, needsTidy: false),
              case .deliver("r2") = machine.look(by: me, word: &word, needsTidy: false) else { Issue.record("w, r2"); return }
        #expect(word == me)
        guard case .released = machine.look(by: me, word: &word, needsTidy: false) else { Issue.record("released"); return }
        #expect(word == 0)
    }

    @Test func withBudgetLeftTheHolderDeliversAWaitersEntryForItAndTellsWhenItWasItsLast() {
        var machine = Machine(), word = holder
        _ = arrive(&machine, "w1", by: me, word: &word)
        guard case .deliverFor(let waiter, "w1", last: true) = machine.look(by: holder, word: &word, needsTidy: false, combined: 0) else {
            Issue.record("not combined"); return
        }
        #expect(waiter.identity == me)
        #expect(word == holder, "the holder keeps the turn; nothing more is queued")
    }

    @Test func aHolderDeliversAtMostItsBudgetForOthersThenHandsOn() {
        var machine = Machine(), word = holder
        let threads = (0..<(Machine.combiningBudget + 2)).map { UInt(0x1000 + $0 * 0x10) }
        for thread in threads { _ = arrive(&machine, "v\(thread)", by: thread, word: &word) }
        var combined = 0
        while case .deliverFor = machine.look(by: holder, word: &word, needsTidy: false, combined: combined) { combined += 1 }
        #expect(combined == Machine.combiningBudget)
        #expect(word == threads[Machine.combiningBudget] | 1, "the next waiter got the turn")
    }

    @Test func tidyingComesBeforeAnyDeliveryAndKeepsTheTurn() {
        var machine = Machine(), word = holder | 1
        guard case .tidy = machine.look(by: holder, word: &word, needsTidy: true) else { Issue.record("tidy"); return }
        #expect(word == holder | 1)
    }

    @Test func disposalDropsOwnerlessEntriesButKeepsWaitersSoTheyReturn() {
        var machine = Machine(), word = holder
        _ = arrive(&machine, "r", by: holder, word: &word, reentrant: true)
        _ = arrive(&machine, "w", by: me, word: &word)
        #expect(machine.dropOwnerless() == ["r"])
        guard case .handOff(let waiter) = machine.look(by: holder, word: &word, needsTidy: false) else { Issue.record("hand-off"); return }
        #expect(waiter.identity == me)
        guard case .deliver("w") = machine.look(by: me, word: &word, needsTidy: false) else { Issue.record("w"); return }
    }

    @Test func aForwarderSenderDeliversItsOwnConsecutiveEntriesInOneTurn() {
        var machine = Machine(), word = holder | 1
        let waiter = TurnWaiter(me)
        func enqueue(_ work: String, by thread: UInt) -> Machine.Enqueued {
            machine.enqueue(work, by: thread, word: &word, isMe: { $0 == thread }, waiter: waiter, mayWait: { _, _ in true })
        }
        guard case .waiting = enqueue("a", by: me), case .waiting = enqueue("b", by: me) else { Issue.record("not waiting"); return }
        #expect(machine.hasEntries(ownedBy: me))
        guard case .handOff(let handed) = machine.look(by: holder, word: &word, needsTidy: false) else { Issue.record("hand-off"); return }
        #expect(handed === waiter)
        #expect(word == me | 1, "the forwarder's entries stay for their sender")
        guard case .deliver("a") = machine.look(by: me, word: &word, needsTidy: false),
              case .deliver("b") = machine.look(by: me, word: &word, needsTidy: false),
              case .released = machine.look(by: me, word: &word, needsTidy: false) else { Issue.record("a, b, released"); return }
    }

    @Test func aForwarderSenderWhoseFirstEntryTheHolderTookLeavesItsSecondToTheHolder() {
        // zip's value + completion, `enqueueEnd`, buffer: two entries in one critical section of
        // the operator. Between them the holder took the first and will wake the sender once; a
        // second owned entry would owe a second wake that the sender never waits for.
        var machine = Machine(), word = holder | 1
        let waiter = TurnWaiter(me)
        func enqueue(_ work: String) -> Machine.Enqueued {
            machine.enqueue(work, by: me, word: &word, isMe: { _ in false }, waiter: waiter, mayWait: { _, _ in true })
        }
        guard case .waiting = enqueue("a") else { Issue.record("not waiting"); return }
        guard case .deliverFor(let owner, "a", last: true) = machine.look(by: holder, word: &word, needsTidy: false, combined: 0) else {
            Issue.record("the holder did not combine the sender's entry"); return
        }
        #expect(owner === waiter)
        guard case .queued = enqueue("b") else { Issue.record("the second entry is owned: a second wake is owed"); return }
        #expect(machine.queue.first?.waiter == nil && machine.queue.first?.work == "b")
        #expect(!machine.hasEntries(ownedBy: me), "the sender waits for exactly the one wake it is owed")
    }

    /// A sequential simulation of threads driving one owner through the transitions, in a random
    /// interleaving per seed: every event is delivered exactly once, each sender's events in its
    /// order, deliveries never overlap, the queue stays bounded, a holder delivers at most its
    /// budget for others, and every thread finishes.
    @Test(arguments: 0..<200)
    func randomInterleavingsDeliverEverythingOnceInOrderWithBoundedQueues(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        let threads = 4, perThread = 5
        /// `holding(nil)`: handed the turn, about to look.
        enum Phase { case idle, holding(String?), waiting }
        var phase = [Phase](repeating: .idle, count: threads)
        var sent = [Int](repeating: 0, count: threads)
        var machine = Machine(), word: UInt = 0
        var delivered: [String] = [], reentrantSent = 0, maxQueue = 0
        func id(_ t: Int) -> UInt { UInt(t + 1) << 4 }
        var waiters: [UInt: Int] = [:]
        var combined = [Int](repeating: 0, count: threads)
        var steps = 0
        while phase.indices.contains(where: { if case .idle = phase[$0] { return sent[$0] < perThread } else { return true } }) {
            steps += 1
            if steps > 10_000 { Issue.record("seed \(seed): no progress (livelock)"); return }
            let t = Int.random(in: 0..<threads, using: &random)
            switch phase[t] {
            case .idle where sent[t] < perThread:
                let work = "\(t).\(sent[t])"
                sent[t] += 1
                combined[t] = 0
                if word == 0 { word = id(t); phase[t] = .holding(work); continue }  // takeFree
                switch arrive(&machine, work, by: id(t), word: &word) {
                case .deliver: phase[t] = .holding(work)
                case .queued: Issue.record("seed \(seed): a plain sender was queued")
                case .wait(let waiter): waiters[waiter.identity] = t; phase[t] = .waiting
                }
            case .holding(let work):
                if let work {
                    delivered.append(work)
                    if Bool.random(using: &random), reentrantSent < 6 {  // the callback sends re-entrantly
                        reentrantSent += 1
                        _ = arrive(&machine, "r\(reentrantSent)", by: id(t), word: &word, reentrant: true)
                    }
                }
                maxQueue = max(maxQueue, machine.queue.count)
                if work != nil, word == id(t) { word = 0; phase[t] = .idle; continue }  // releaseUnasked
                var next: Phase = .idle
                lookLoop: while true {
                    switch machine.look(by: id(t), word: &word, needsTidy: false, combined: combined[t]) {
                    case .deliver(let queued): next = .holding(queued); break lookLoop
                    case .deliverFor(let waiter, let queued, let last):
                        delivered.append(queued)
                        combined[t] += 1
                        #expect(combined[t] <= Machine.combiningBudget, "seed \(seed): unbounded work for others")
                        #expect(last, "seed \(seed): one entry per waiting sender")
                        let w = waiters.removeValue(forKey: waiter.identity)!
                        guard case .waiting = phase[w] else { Issue.record("seed \(seed): delivered for a non-waiter"); return }
                        phase[w] = .idle
                        if word == id(t) { word = 0; break lookLoop }  // releaseUnasked
                    case .handOff(let waiter):
                        let w = waiters.removeValue(forKey: waiter.identity)!
                        guard case .waiting = phase[w] else { Issue.record("seed \(seed): handed to a non-waiter"); return }
                        phase[w] = .holding(nil)  // it looks: its own entry heads the queue
                        combined[w] = 0
                        break lookLoop
                    case .released: break lookLoop
                    case .tidy: continue
                    }
                }
                phase[t] = next
                if case .idle = next { combined[t] = 0 }
                #expect(word != 0 || machine.queue.isEmpty, "seed \(seed): a free turn with queued work")
            default:
                continue
            }
            #expect(machine.queue.isEmpty || word & 1 == 1, "seed \(seed): queued work without the look flag")
        }
        let values = delivered.filter { !$0.hasPrefix("r") }
        #expect(values.count == threads * perThread && Set(values).count == values.count, "seed \(seed): lost or doubled")
        #expect(delivered.filter { $0.hasPrefix("r") } == (0..<reentrantSent).map { "r\($0 + 1)" }, "seed \(seed): re-entrant order")
        for t in 0..<threads {
            let mine = values.filter { $0.hasPrefix("\(t).") }
            #expect(mine == (0..<perThread).map { "\(t).\($0)" }, "seed \(seed): sender \(t)'s order")
        }
        #expect(maxQueue <= threads - 1 + reentrantSent, "seed \(seed): queue grew to \(maxQueue)")
        #expect(word == 0 && machine.queue.isEmpty)
    }
}
