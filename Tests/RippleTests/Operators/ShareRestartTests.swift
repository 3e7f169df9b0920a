import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// Once a shared source ends, `share()` and `publish().autoconnect()` reset their connection
/// before forwarding the terminal event: a subscriber arriving from that terminal callback
/// (a `retry`, say) or afterwards starts a fresh run of the source, even while subscribers of
/// the ended run are still attached.
@Suite(.leakChecked) struct ShareRestartTests {
    /// The two ways to share a run among counted subscribers.
    static let kinds = ["share", "publish.autoconnect"]

    private func shared(_ source: Signal<Int>, _ kind: String) -> Signal<Int> {
        kind == "share" ? source.share() : source.publish().autoconnect()
    }

    /// A cold source whose run `k` (from 1) is `scripted[k - 1]`; a run past those sends `k`
    /// and completes at once. `runs` counts the runs.
    private func scriptedSource(_ scripted: [Subject<Int>], runs: Box<Int>) -> Signal<Int> {
        Signal { subscriber in
            let run = runs.mutate { runs -> Int in runs += 1; return runs }
            guard run <= scripted.count else {
                subscriber.sendNext(run)
                subscriber.sendCompleted()
                return nil
            }
            return scripted[run - 1].subscribe(subscriber)
        }
    }

    @Test(arguments: kinds)
    func retryStartsAFreshRunWhileAnotherSubscriberIsAttached(_ kind: String) {
        // `request.share().retry(3)` subscribed twice, beside a subscriber without a retry; the
        // first two runs fail, later runs succeed at once.
        let attempts = [Subject<Int>(), Subject<Int>()]
        let runs = Box(0)
        let shared = shared(scriptedSource(attempts, runs: runs), kind)
        let first = Recorder<Int>(), second = Recorder<Int>(), other = Recorder<Int>()
        let d1 = shared.retry(3).subscribe(first)
        let d2 = shared.retry(3).subscribe(second)
        let d3 = shared.subscribe(other)
        #expect(runs.value == 1)
        attempts[0].sendError(TestError("run 1"))
        // `first`'s retry starts run 2 before the error reaches `second`, whose retry joins it.
        #expect(runs.value == 2, "a retry joined the ended run instead of running the source again")
        #expect(other.events == [.error(TestError("run 1"))])
        attempts[1].sendError(TestError("run 2"))
        // `first`'s retry runs the source a third time (it succeeds at once); `second`'s, a fourth.
        #expect(runs.value == 4)
        #expect(first.events == [.next(3), .completed])
        #expect(second.events == [.next(4), .completed])
        #expect(other.events == [.error(TestError("run 1"))], "the subscriber without a retry got its terminal event once")
        d1.dispose(); d2.dispose(); d3.dispose()
    }

    @Test(arguments: kinds)
    func aSubscribeFromACompletedCallbackRunsAColdSourceAgain(_ kind: String) {
        let first = Subject<Int>()
        let runs = Box(0)
        let shared = shared(scriptedSource([first], runs: runs), kind)
        let again = Recorder<Int>(), other = Recorder<Int>()
        let keep = Box<[any Disposable]>([])
        let a = shared.subscribe(completed: {
            let subscription = shared.subscribe(again)
            keep.mutate { $0.append(subscription) }
        })
        let o = shared.subscribe(other)
        first.sendNext(1)
        first.sendCompleted()
        #expect(runs.value == 2)
        #expect(again.events == [.next(2), .completed])
        #expect(other.events == [.next(1), .completed])
        a.dispose(); o.dispose()
        for subscription in keep.value { subscription.dispose() }
    }

    @Test(arguments: kinds)
    func aSubscriberArrivingAfterTheSourceEndedStartsAFreshRun(_ kind: String) {
        let first = Subject<Int>()
        let runs = Box(0)
        let shared = shared(scriptedSource([first], runs: runs), kind)
        let a = Recorder<Int>(), late = Recorder<Int>()
        let da = shared.subscribe(a)
        first.sendCompleted()
        let dl = shared.subscribe(late)
        #expect(a.events == [.completed])
        #expect(late.events == [.next(2), .completed])
        #expect(runs.value == 2)
        da.dispose(); dl.dispose()
    }

    @Test(arguments: kinds)
    func subscribersOfTheEndedRunLeavingDoNotDisconnectTheFreshRun(_ kind: String) {
        // Run 1 ends; `a`, subscribed first, subscribes again from its error callback (run 2),
        // then `b` and `c` get run 1's error and leave: run 2's one subscriber must keep it.
        let attempts = [Subject<Int>(), Subject<Int>()]
        let runs = Box(0)
        let shared = shared(scriptedSource(attempts, runs: runs), kind)
        let again = Recorder<Int>()
        let keep = Box<[any Disposable]>([])
        let a = shared.subscribe(error: { _ in
            let subscription = shared.subscribe(again)
            keep.mutate { $0.append(subscription) }
        })
        let b = Recorder<Int>(), c = Recorder<Int>()
        let db = shared.subscribe(b), dc = shared.subscribe(c)
        attempts[0].sendError(TestError("run 1"))
        #expect(b.events == [.error(TestError("run 1"))] && c.events == b.events)
        #expect(runs.value == 2)
        #expect(attempts[1].storage.subscriberCount == 1, "run 2 was disconnected by run 1's subscribers leaving")
        attempts[1].sendNext(7)
        #expect(again.values == [7])
        let d = Recorder<Int>()
        shared.subscribe(d).dispose()  // joins run 2 and leaves: `again` still holds it
        attempts[1].sendNext(8)
        #expect(again.values == [7, 8])
        for subscription in keep.value { subscription.dispose() }
        #expect(attempts[1].storage.subscriberCount == 0, "run 2's last subscriber leaving disconnects it")
        a.dispose(); db.dispose(); dc.dispose()
    }

    @Test(arguments: kinds)
    func aSourceEndingDuringItsOwnSubscribeLetsTheTerminalCallbackRunItAgain(_ kind: String) {
        // Every run of `Signal.from` ends inside the first subscriber's connect.
        let runs = Box(0)
        let source = Signal<Int> { subscriber in
            let run = runs.mutate { runs -> Int in runs += 1; return runs }
            subscriber.sendNext(run)
            subscriber.sendCompleted()
            return nil
        }
        let shared = shared(source, kind)
        let seen = Box<[Int]>([])
        let keep = Box<[any Disposable]>([])
        let subscribes = Box(0)
        let resubscribe = Box<(() -> Void)?>(nil)
        resubscribe.value = {
            guard subscribes.mutate({ count -> Bool in count += 1; return count <= 3 }) else { return }
            let subscription = shared.subscribe(next: { value in seen.mutate { $0.append(value) } },
                                                completed: { resubscribe.value?() })
            keep.mutate { $0.append(subscription) }
        }
        resubscribe.value?()
        #expect(seen.value == [1, 2, 3])
        #expect(runs.value == 3)
        resubscribe.value = nil
        for subscription in keep.value { subscription.dispose() }
    }

    @Test func publishConnectsAFreshSubjectAfterTheSourceEnded() {
        let first = Subject<Int>()
        let runs = Box(0)
        let connection = scriptedSource([first], runs: runs).publish()
        let a = Recorder<Int>(), b = Recorder<Int>()
        let da = connection.signal.subscribe(a)
        connection.connect()
        first.sendNext(1)
        first.sendCompleted()
        #expect(a.events == [.next(1), .completed])
        let db = connection.signal.subscribe(b)
        #expect(b.events.isEmpty, "a subscriber after the end waits for the next connect")
        connection.connect()
        #expect(b.events == [.next(2), .completed])
        #expect(runs.value == 2)
        da.dispose(); db.dispose()
    }

    @Test func multicastOfAGivenSubjectKeepsItsEndAndDoesNotRunTheSourceAgain() {
        let first = Subject<Int>()
        let runs = Box(0)
        let connection = scriptedSource([first], runs: runs).multicast(Subject<Int>())
        let shared = connection.autoconnect()
        let a = Recorder<Int>(), late = Recorder<Int>(), fromCallback = Recorder<Int>()
        let keep = Box<[any Disposable]>([])
        let da = shared.subscribe(completed: {
            let subscription = shared.subscribe(fromCallback)
            keep.mutate { $0.append(subscription) }
        })
        let db = shared.subscribe(a)
        first.sendCompleted()
        let dl = shared.subscribe(late)
        #expect(fromCallback.events == [.completed])
        #expect(a.events == [.completed] && late.events == [.completed])
        #expect(connection.connect().isDisposed)
        #expect(runs.value == 1)
        da.dispose(); db.dispose(); dl.dispose()
        for subscription in keep.value { subscription.dispose() }
    }

    @Test(arguments: kinds)
    func theLateEndOfARunDisposedBeforeItEndedDoesNotReachTheNextRun(_ kind: String) {
        // A source that keeps its subscribers stands in for the race: its first run's end
        // arrives after that run was disposed and a second run started.
        let source = KeepingSource()
        let shared = kind == "share" ? source.share() : source.publish().autoconnect()
        let first = shared.subscribe(next: { _ in }, error: { _ in }, completed: {})
        first.dispose()  // the last subscriber leaves: the first run is disposed
        let second = Recorder<Int>()
        let subscription = shared.subscribe(second)
        #expect(source.subscribers.count == 2, "a second run started")
        source.subscribers[0].sendCompleted()  // the first run's late end
        source.subscribers[1].sendNext(7)
        #expect(second.events == [.next(7)], "the second run goes on, unended")
        subscription.dispose()
    }

    /// Two threads subscribe (some leave at once, some subscribe again from their completed
    /// callback) while a third ends every run it finds: every subscriber kept gets exactly one
    /// terminal event, and every upstream subscription is disposed.
    @Test(.offThePool, arguments: kinds)
    func subscribersArrivingAndLeavingWhileTheSourceEndsEachGetOneTerminalEventAndNoRunLeaks(_ kind: String) {
        let live = Box(0)
        let pending = Box<[PassthroughSubscriber<Int>]>([])
        let source = Signal<Int> { subscriber in
            live.mutate { $0 += 1 }
            pending.mutate { $0.append(subscriber) }
            return ActionDisposable { live.mutate { $0 -= 1 } }
        }
        let shared = shared(source, kind)
        let terminals = Box<[Int]>([])  // per kept subscriber: how many terminal events it got
        let keep = Box<[any Disposable]>([])
        @Sendable func endPendingRuns() -> Bool {
            let runs = pending.mutate { runs -> [PassthroughSubscriber<Int>] in defer { runs = [] }; return runs }
            for run in runs {
                run.sendNext(1)
                run.sendCompleted()
            }
            return !runs.isEmpty
        }
        @Sendable func subscribeKept(resubscribing: Bool) {
            let index = terminals.mutate { terminals -> Int in terminals.append(0); return terminals.count - 1 }
            let subscription = shared.subscribe(
                error: { _ in terminals.mutate { $0[index] += 1 } },
                completed: {
                    terminals.mutate { $0[index] += 1 }
                    if resubscribing { subscribeKept(resubscribing: false) }
                })
            keep.mutate { $0.append(subscription) }
        }
        let rounds = Workload.size(2_000)
        let finished = runConcurrently(threads: 3) { thread in
            for round in 0..<rounds {
                switch thread {
                case 0: _ = endPendingRuns()
                default:
                    if round % 3 == 0 {
                        shared.subscribe(next: { _ in }).dispose()
                    } else {
                        subscribeKept(resubscribing: round % 3 == 1)
                    }
                }
            }
        }
        #expect(finished)
        while endPendingRuns() {}  // the runs left, and those started from completed callbacks
        let counts = terminals.value
        let wrong = counts.enumerated().filter { $0.element != 1 }
        #expect(wrong.isEmpty, "\(wrong.count) of \(counts.count) kept subscribers did not get exactly one terminal event: \(wrong.prefix(5))")
        #expect(live.value == 0, "\(live.value) upstream subscriptions were never disposed")
        for subscription in keep.value { subscription.dispose() }
        pending.value = []
    }
}

/// A source that keeps every subscriber it is given, so a test can send into a run after the
/// run was disposed.
final class KeepingSource: SignalProtocol, @unchecked Sendable {  // used by one thread in one test
    private(set) var subscribers: [any SubscriberProtocol<Int>] = []

    func subscribe(_ subscriber: any SubscriberProtocol<Int>) -> any Disposable {
        subscribers.append(subscriber)
        return ActionDisposable {}
    }
}
