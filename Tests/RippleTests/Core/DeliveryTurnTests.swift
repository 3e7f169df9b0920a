import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// When a send returns, who delivers it, and in what order waiting senders are served.
@Suite(.leakChecked, .offThePool) struct DeliveryTurnTests {
    /// Holds the delivery of `-1` inside its callback until `release` is signalled.
    final class Gate: @unchecked Sendable {
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let delivered = Box<[Int]>([])
        func callback(_ value: Int) {
            if value == -1 {
                entered.signal()
                release.wait()
            }
            delivered.mutate { $0.append(value) }
        }
    }

    /// How many events wait in the turn's queue of a subject of any kind.
    static func queued(in subject: any SignalProtocol<Int>) -> Int {
        DeliveryTurnContentionTests.queued(in: subject)
    }

    /// How many events wait in `subscriber`'s turn queue.
    static func queued(in subscriber: Subscriber<Int>) -> Int {
        subscriber.state.withLock { $0.machine.queue.count }
    }

    /// Starts a thread that sends `value` and records, when its send returns, what was delivered.
    func sendOnAThread(_ value: Int, _ send: @escaping @Sendable (Int) -> Void, gate: Gate) -> Box<[Int]?> {
        let seenOnReturn = Box<[Int]?>(nil)
        Thread {
            send(value)
            seenOnReturn.value = gate.delivered.value
        }.start()
        return seenOnReturn
    }

    @Test(arguments: SubjectKind.allCases)
    func aSendThatFindsAnotherThreadDeliveringReturnsOnlyOnceItsValueWasDelivered(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let gate = Gate()
        let subscription = signal.subscribeNext { gate.callback($0) }
        Thread { input.sendNext(-1) }.start()
        gate.entered.wait()  // that thread now holds the turn, inside a callback
        let seen = sendOnAThread(1, { input.sendNext($0) }, gate: gate)
        #expect(waitUntil { Self.queued(in: signal) == 1 }, "the send never queued behind the delivering thread")
        usleep(20_000)  // time for a call that wrongly returns to do so
        #expect(seen.value == nil, "the send returned before its value was delivered")
        gate.release.signal()
        #expect(waitUntil { seen.value != nil })
        #expect(seen.value?.contains(1) == true, "its value was delivered when the send returned")
        subscription.dispose()
    }

    /// `takeSoon`, a subject sender's bounded spin before it queues: it takes a free turn, and
    /// gives up without taking it when it holds the turn itself (a send from a callback), when a
    /// thread is queued (the turn goes to the queue first), and when the holder never lets go.
    @Test func aSpinningSenderTakesAFreeTurnButNeverItsOwnNorOneAThreadIsQueuedFor() {
        let turn = DeliveryTurn()
        let me = TurnIdentity.current, other = me &+ 16
        var looks = 0
        let count = { looks += 1 }
        let tookFree = turn.takeSoon(me, relax: count)
        #expect(tookFree && looks == 0, "a free turn is taken at the first look")
        var holder = turn.holder
        #expect(holder == me)
        let tookOwn = turn.takeSoon(me, relax: count)
        #expect(!tookOwn)
        #expect(looks == 0, "a holder spun for its own turn, which cannot come free")
        let released = turn.releaseUnasked(me)
        #expect(released)
        turn.publish(TurnMachine<Never>.asking(other))
        let overtook = turn.takeSoon(me, relax: count)
        #expect(!overtook)
        #expect(looks == 0, "a spinner went on spinning for a turn a thread is queued for")
        let word = turn.word.load(ordering: .relaxed)
        #expect(word == TurnMachine<Never>.asking(other))
        turn.publish(other)
        let tookHeld = turn.takeSoon(me, rounds: 10, relax: count)
        #expect(!tookHeld, "a spin is bounded: a holder that never lets go sends it to the queue")
        #expect(looks == 10)
        holder = turn.holder
        #expect(holder == other)
    }

    /// `awaitRelease`, a history subject's wait before its locked arrival: the same bounds, and
    /// it never takes the turn.
    @Test func awaitingAReleaseIsBoundedAndStopsForTheQueueAndForItsOwnTurn() {
        let turn = DeliveryTurn()
        let me = TurnIdentity.current, other = me &+ 16
        var looks = 0
        turn.publish(other)
        turn.awaitRelease(me, rounds: 10) { looks += 1 }
        #expect(looks == 10)
        turn.publish(TurnMachine<Never>.asking(other))
        turn.awaitRelease(me, rounds: 10) { looks += 1 }
        #expect(looks == 10, "it went on waiting for a turn a thread is queued for")
        turn.publish(me)
        turn.awaitRelease(me, rounds: 10) { looks += 1 }
        #expect(looks == 10, "it waited for its own turn")
        turn.publish(other)
        turn.awaitRelease(me, rounds: 10) {
            looks += 1
            _ = turn.releaseUnasked(other)
        }
        #expect(looks == 11, "it went on after the turn came free")
        let word = turn.word.load(ordering: .relaxed)
        #expect(word == 0, "awaitRelease took the turn")
    }

    /// The spin takes a turn that its holder gives up while it looks (scripted: the holder
    /// releases between the spinner's third and fourth look), and with no look to spare.
    @Test func aSpinningSenderTakesTheTurnItsHolderGivesUpMeanwhile() {
        let turn = DeliveryTurn()
        let me = TurnIdentity.current, other = me &+ 16
        turn.publish(other)
        var looks = 0
        let took = turn.takeSoon(me, rounds: 4) {
            looks += 1
            if looks == 3 { _ = turn.releaseUnasked(other) }
        }
        #expect(took)
        #expect(looks == 3)
        let holder = turn.holder
        #expect(holder == me)
    }

    /// A `StackGuard` continuation thread acts as the thread it continues, which may be the
    /// holder: the spin gives up at once, so a re-entrant send from a continued callback queues
    /// without spinning for its own turn.
    @Test func aContinuationThreadDoesNotSpinForTheTurnOfTheThreadItContinues() {
        let turn = DeliveryTurn()
        let continued = TurnIdentity.current &+ 16
        turn.publish(continued)
        var looks = 0
        let took = WaitGraph.acting(as: continued) {
            turn.takeSoon(TurnIdentity.current, rounds: 1_000) { looks += 1 }
        }
        #expect(!took)
        #expect(looks == 0, "a continuation spun for a turn its own thread holds")
    }

    @Test func aSubscriberSendThatFindsAnotherThreadDeliveringReturnsOnlyOnceDelivered() {
        let gate = Gate()
        let subscriber = Subscriber<Int>(next: { gate.callback($0) })
        Thread { subscriber.sendNext(-1) }.start()
        gate.entered.wait()
        let seen = sendOnAThread(1, { subscriber.sendNext($0) }, gate: gate)
        #expect(waitUntil { Self.queued(in: subscriber) == 1 }, "the send never queued behind the delivering thread")
        usleep(20_000)  // time for a call that wrongly returns to do so
        #expect(seen.value == nil)
        gate.release.signal()
        #expect(waitUntil { seen.value != nil })
        #expect(seen.value == [-1, 1])
        subscriber.dispose()
    }

    @Test func aSendFromInsideACallbackReturnsAtOnceAndIsDeliveredAfterTheCallback() {
        let subject = Subject<Int>()
        let log = Box<[String]>([])
        let subscription = subject.subscribeNext { value in
            log.mutate { $0.append("begin \(value)") }
            if value == 1 {
                subject.sendNext(2)
                log.mutate { $0.append("sent 2") }
            }
            log.mutate { $0.append("end \(value)") }
        }
        subject.sendNext(1)
        #expect(log.value == ["begin 1", "sent 2", "end 1", "begin 2", "end 2"])
        subscription.dispose()
    }

    @Test(arguments: SubjectKind.allCases)
    func waitingSendersAreServedFirstComeFirstServed(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let gate = Gate()
        let subscription = signal.subscribeNext { gate.callback($0) }
        Thread { input.sendNext(-1) }.start()
        gate.entered.wait()
        var seen: [Box<[Int]?>] = []
        for value in 1...4 {
            seen.append(sendOnAThread(value, { input.sendNext($0) }, gate: gate))
            // Each sender is queued before the next one starts, however long its thread waits for a core.
            #expect(waitUntil { Self.queued(in: signal) == value }, "sender \(value) never queued")
        }
        gate.release.signal()
        #expect(waitUntil { seen.allSatisfy { $0.value != nil } })
        #expect(gate.delivered.value.filter { $0 > 0 } == [1, 2, 3, 4])
        subscription.dispose()
    }

    @Test func aSubscribeThatFindsAnotherThreadDeliveringReturnsOnlyOnceItsReplayWasDelivered() {
        let replay = ReplaySubject<Int>()
        let gate = Gate()
        let first = replay.subscribeNext { gate.callback($0) }
        Thread { replay.sendNext(-1) }.start()
        gate.entered.wait()
        let replayed = Box<[Int]>([])
        let returned = Box<[Int]?>(nil)
        let second = Box<(any Disposable)?>(nil)
        Thread {
            second.value = replay.subscribeNext { value in replayed.mutate { $0.append(value) } }
            returned.value = replayed.value
        }.start()
        #expect(waitUntil { Self.queued(in: replay) == 1 }, "the subscribe never queued behind the delivering thread")
        usleep(20_000)  // time for a call that wrongly returns to do so
        #expect(returned.value == nil, "subscribe returned before its replay was delivered")
        gate.release.signal()
        #expect(waitUntil { returned.value != nil })
        #expect(returned.value == [-1])
        first.dispose()
        second.value?.dispose()
    }

    /// A forwarder's sender enqueues under its operator's lock and drains later; when the holder
    /// delivered its event for it in between, `drain()` must still take that wake, or the
    /// thread's next wait — here a contended send to a subscriber — would return before its
    /// value was delivered.
    @Test func aWakeForAForwarderEventDeliveredBeforeItsSenderDrainedIsNotLeftForTheNextWait() {
        let forwarderGate = Gate()
        let forwarder = SerialForwarder<Int>(Subscriber(next: { forwarderGate.callback($0) }))
        Thread { forwarder.send(.next(-1)) }.start()
        forwarderGate.entered.wait()  // that thread holds the forwarder's turn, inside a callback
        let subscriberGate = Gate()
        let subscriber = Subscriber<Int>(next: { subscriberGate.callback($0) })
        let enqueued = DispatchSemaphore(value: 0), drainNow = DispatchSemaphore(value: 0)
        let seen = Box<[Int]?>(nil)
        Thread {
            forwarder.enqueue(.next(1))  // owned by this thread: the holder will deliver it for it
            enqueued.signal()
            drainNow.wait()
            forwarder.drain()
            subscriber.sendNext(2)  // contended below: must return only once delivered
            seen.value = subscriberGate.delivered.value
        }.start()
        enqueued.wait()
        forwarderGate.release.signal()  // the holder delivers 1 for the other thread, and wakes it
        #expect(waitUntil { forwarderGate.delivered.value == [-1, 1] })
        Thread { subscriber.sendNext(-1) }.start()
        subscriberGate.entered.wait()  // now the subscriber's turn is held, inside a callback
        drainNow.signal()
        #expect(waitUntil { Self.queued(in: subscriber) == 1 || seen.value != nil }, "the send neither queued nor returned")
        usleep(20_000)  // time for a call that wrongly returns to do so
        #expect(seen.value == nil, "the send returned before its value was delivered")
        subscriberGate.release.signal()
        #expect(waitUntil { seen.value != nil })
        #expect(seen.value == [-1, 2])
        subscriber.dispose()
    }
}
