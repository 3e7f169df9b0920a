import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Contended delivery turns, seen from outside: bounded work for a thread that joins or sends to
/// an owner others flood, a terminal event delivered once and last while another thread delivers,
/// a conformer of the user's called serially, and a cycle of two subjects that must not deadlock.
@Suite(.leakChecked, .offThePool) struct DeliveryTurnContentionTests {
    /// A thread subscribing to a subject that another thread floods must not take the delivery
    /// turn and then deliver the sender's values forever (with a queue growing without bound).
    @Test(arguments: ["behavior", "replay"])
    func subscribingWhileAnotherThreadFloodsTheSubjectReturnsPromptly(kind: String) {
        for round in 0..<10 {
            let subject: any SignalProtocol<Int> & SubscriberProtocol<Int> & Sendable =
                kind == "behavior" ? BehaviorSubject(0) : ReplaySubject<Int>(capacity: 16)
            let stop = Atomic<Bool>(false)
            let subscribed = Progress()
            let sender = Thread {
                var value = 0
                while !stop.load(ordering: .relaxed) {
                    value &+= 1
                    subject.sendNext(value)
                }
            }
            sender.start()
            let subscriptions = Box<[any Disposable]>([])
            let mostQueued = Atomic<Int>(0)
            let returned = finishes("round \(round): subscribing 25 listeners", progress: subscribed) {
                for _ in 0..<25 {
                    let subscription = subject.subscribeNext { _ in }
                    subscriptions.mutate { $0.append(subscription) }
                    subscribed.advance()
                    let queued = Self.queued(in: subject)
                    if queued > mostQueued.load(ordering: .relaxed) { mostQueued.store(queued, ordering: .relaxed) }
                    usleep(300)
                }
            }
            stop.store(true, ordering: .relaxed)
            _ = waitUntil { subscribed.steps == 25 }  // a trapped thread drains once the sender stops
            for subscription in subscriptions.value { subscription.dispose() }
            let most = mostQueued.load(ordering: .relaxed)
            #expect(most <= 2, "round \(round): \(most) events queued with two threads")
            if !returned { break }
        }
    }

    /// How many events wait in the delivery turn's queue of `subject` (any kind of subject).
    static func queued(in subject: any SignalProtocol<Int>) -> Int {
        switch subject {
        case let plain as Subject<Int>: return plain.storage.state.withLock { $0.machine.queue.count }
        case let behavior as BehaviorSubject<Int>: return behavior.storage.state.withLock { $0.machine.queue.count }
        case let replay as ReplaySubject<Int>: return replay.storage.state.withLock { $0.machine.queue.count }
        default: return 0
        }
    }

    /// The same for a cold subscriber: whoever holds its turn must not deliver every other
    /// sender's queued values for as long as they keep sending.
    @Test func aSendToASubscriberThatOthersFloodReturnsAfterBoundedWork() {
        let stop = Atomic<Bool>(false)
        let subscriber = Subscriber<Int>(next: { _ in
            let start = DispatchTime.now().uptimeNanoseconds
            while DispatchTime.now().uptimeNanoseconds - start < 50_000 {}  // a 50 µs callback
        })
        let flooders = (0..<3).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) { subscriber.sendNext(1) }
            }
        }
        flooders.forEach { $0.start() }
        let sends = Progress()
        let mostQueued = Atomic<Int>(0)
        finishes("200 single sends among three flooding threads", progress: sends) {
            for _ in 0..<200 {
                subscriber.sendNext(2)
                sends.advance()
                let queued = subscriber.state.withLock { $0.machine.queue.count }
                if queued > mostQueued.load(ordering: .relaxed) { mostQueued.store(queued, ordering: .relaxed) }
            }
        }
        stop.store(true, ordering: .relaxed)
        let most = mostQueued.load(ordering: .relaxed)
        #expect(most <= 3, "\(most) events queued with four sending threads")
        subscriber.dispose()
    }

    /// A terminal event sent while another thread delivers is queued, and must not be dropped
    /// when the passthrough disposes the subscription right after forwarding it.
    @Test(arguments: ["completed", "error"])
    func aTerminalEventSentWhileAnotherThreadDeliversArrivesExactlyOnce(terminal: String) {
        for round in 0..<20 {
            let recorder = CompletenessRecorder()
            let accepted = Box<[[Int]]>(Array(repeating: [], count: 5))
            let finished = DispatchGroup()
            let subscription = Signal<Int> { subscriber in
                for thread in 0..<5 {
                    finished.enter()
                    Thread {
                        for i in 0..<300 {
                            if subscriber.isDisposed { break }
                            let value = thread * 1_000 + i
                            subscriber.sendNext(value)
                            accepted.mutate { $0[thread].append(value) }
                            if thread == 0, i == 150 {
                                if terminal == "error" { subscriber.sendError(TestError()) } else { subscriber.sendCompleted() }
                                break
                            }
                        }
                        finished.leave()
                    }.start()
                }
                return nil
            }.subscribe(next: { value in recorder.next(value); usleep(5) },
                        error: { _ in recorder.terminal() },
                        completed: { recorder.terminal() })
            #expect(finished.wait(timeout: .now() + Workload.hangLimit) == .success, "round \(round): producers stuck")
            #expect(waitUntil { recorder.terminalCount > 0 }, "round \(round): the \(terminal) event was lost")
            #expect(recorder.terminalCount == 1, "round \(round)")
            // Values sent while the terminal event raced may or may not be accepted; every one
            // delivered was sent, at most once, before the terminal event, never overlapping.
            let received = recorder.received
            #expect(Set(received).count == received.count, "round \(round): a value arrived twice")
            #expect(Set(received).isSubset(of: Set(accepted.value.flatMap { $0 })), "round \(round)")
            subscription.dispose()
            if recorder.terminalCount != 1 { break }
        }
    }

    /// A user's own `SubscriberProtocol` conformer must get no overlapping calls, and no values
    /// after the terminal event, when the producer sends on several threads.
    @Test func aCustomSubscriberIsCalledSeriallyAndNeverAfterItsTerminalEvent() {
        final class Probe: SubscriberProtocol, @unchecked Sendable {
            let recorder = CompletenessRecorder()
            func sendNext(_ value: Int) { recorder.next(value); usleep(2) }
            func sendError(_ error: any Error) { recorder.terminal() }
            func sendCompleted() { recorder.terminal() }
        }
        for round in 0..<10 {
            let probe = Probe()
            let finished = DispatchGroup()
            let sent = Box<[[Int]]>(Array(repeating: [], count: 3))
            let subscription = Signal<Int> { subscriber in
                for thread in 0..<3 {
                    finished.enter()
                    Thread {
                        for i in 0..<200 {
                            let value = thread * 1_000 + i
                            subscriber.sendNext(value)
                            sent.mutate { $0[thread].append(value) }
                        }
                        finished.leave()
                    }.start()
                }
                Thread {
                    finished.wait()
                    subscriber.sendCompleted()
                }.start()
                return nil
            }.subscribe(probe)
            #expect(finished.wait(timeout: .now() + Workload.hangLimit) == .success)
            #expect(waitUntil { probe.recorder.terminalCount == 1 }, "round \(round): completion lost")
            probe.recorder.expectComplete(sent: sent.value, terminated: true)
            subscription.dispose()
        }
    }

    /// Two subjects whose callbacks feed each other, driven from two threads at once: thread A
    /// holds X's turn and sends to Y while thread B holds Y's turn and sends to X. Waiting would
    /// deadlock; the send that closes the cycle is queued instead, and nothing is lost.
    @Test func twoSubjectsFeedingEachOtherOnTwoThreadsNeitherDeadlockNorLoseAnything() {
        struct Hop: Sendable { let tag: Int, left: Int }
        let x = Subject<Hop>(), y = Subject<Hop>()
        let deliveries = Atomic<Int>(0)
        let a = x.subscribeNext { hop in
            deliveries.add(1, ordering: .relaxed)
            if hop.left > 0 { y.sendNext(Hop(tag: hop.tag, left: hop.left - 1)) }
        }
        let b = y.subscribeNext { hop in
            deliveries.add(1, ordering: .relaxed)
            if hop.left > 0 { x.sendNext(Hop(tag: hop.tag, left: hop.left - 1)) }
        }
        let count = 300, bounces = 6
        let done = DispatchGroup()
        for (index, subject) in [x, y].enumerated() {
            done.enter()
            Thread {
                for tag in 0..<count { subject.sendNext(Hop(tag: index * count + tag, left: bounces)) }
                done.leave()
            }.start()
        }
        let returned = finishes("two threads sending into two subjects that feed each other") { done.wait() }
        #expect(returned)
        if returned {
            #expect(deliveries.load(ordering: .relaxed) == 2 * count * (bounces + 1), "every hop delivered exactly once")
        }
        a.dispose()
        b.dispose()
    }
}
