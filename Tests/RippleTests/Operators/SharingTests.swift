import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked, .offThePool) struct SharingTests {
    /// A finite cold source that counts how often it runs.
    private func countedSource(_ runs: Box<Int>) -> Signal<Int> {
        Signal { s in
            runs.mutate { $0 += 1 }
            s.sendNext(1); s.sendNext(2); s.sendNext(3)
            s.sendCompleted()
            return nil
        }
    }

    @Test func multicastSubscribesTheSourceOnceOnConnectAndConnectIsIdempotent() {
        let source = Subject<Int>()
        let subscriptions = Box(0)
        let connection = source.onSubscribe { subscriptions.mutate { $0 += 1 } }.multicast(Subject())
        let a = Recorder<Int>(), b = Recorder<Int>()
        connection.signal.subscribe(a)
        connection.subscribe(b)
        source.sendNext(0)
        let first = connection.connect()
        let second = connection.connect()
        #expect(first === second)
        #expect(subscriptions.value == 1)
        source.sendNext(1)
        #expect(a.values == [1])
        #expect(b.values == [1])
        first.dispose()
        source.sendNext(2)
        #expect(a.values == [1])
        connection.connect()
        source.sendNext(3)
        #expect(a.values == [1, 3])
        #expect(subscriptions.value == 2)
    }

    @Test func autoconnectConnectsOnTheFirstSubscriberAndDisconnectsAtZero() {
        let source = Subject<Int>()
        let live = Box(0)
        let shared = source
            .onSubscribe { live.mutate { $0 += 1 } }
            .onDispose { live.mutate { $0 -= 1 } }
            .publish().autoconnect()
        #expect(live.value == 0)
        let a = shared.subscribe(Recorder<Int>())
        let b = shared.subscribe(Recorder<Int>())
        #expect(live.value == 1)
        a.dispose()
        #expect(live.value == 1)
        b.dispose()
        #expect(live.value == 0)
        let c = shared.subscribe(Recorder<Int>())
        #expect(live.value == 1)  // a new subscriber connects again
        c.dispose()
    }

    @Test func autoconnectKeepsAGivenSubjectSoALateSubscriberToAFinishedSourceGetsItsEnd() {
        let runs = Box(0)
        let shared = countedSource(runs).multicast(Subject<Int>()).autoconnect()
        let first = Recorder<Int>(), late = Recorder<Int>()
        shared.subscribe(first)
        shared.subscribe(late)
        #expect(first.events == [.next(1), .next(2), .next(3), .completed])
        #expect(late.events == [.completed])
        #expect(runs.value == 1)
    }

    @Test func shareResetsSoALateSubscriberToAFinishedSourceRunsItAgain() {
        let runs = Box(0)
        let shared = countedSource(runs).share()
        let first = Recorder<Int>(), late = Recorder<Int>()
        shared.subscribe(first)
        shared.subscribe(late)
        #expect(first.events == [.next(1), .next(2), .next(3), .completed])
        #expect(late.events == first.events)
        #expect(runs.value == 2)
    }

    @Test func shareSharesOneSubscriptionAmongCurrentSubscribers() {
        let source = Subject<Int>()
        let subscriptions = Box(0)
        let shared = source.onSubscribe { subscriptions.mutate { $0 += 1 } }.share()
        let a = Recorder<Int>(), b = Recorder<Int>()
        let da = shared.subscribe(a)
        let db = shared.subscribe(b)
        source.sendNext(1)
        #expect(subscriptions.value == 1)
        #expect(a.values == [1] && b.values == [1])
        da.dispose(); db.dispose()
        let dc = shared.subscribe(Recorder<Int>())
        #expect(subscriptions.value == 2)
        dc.dispose()  // a live share keeps its connection, and the connection the share, until then
    }

    @Test func replayConnectsAtOnceAndReplaysEverything() {
        let runs = Box(0)
        let replayed = countedSource(runs).replay()
        #expect(runs.value == 1)
        let late = Recorder<Int>()
        replayed.subscribe(late)
        #expect(late.events == [.next(1), .next(2), .next(3), .completed])
        #expect(runs.value == 1)
    }

    @Test func replayLastConnectsAtOnceAndReplaysTheLatestValue() {
        let runs = Box(0)
        let replayed = countedSource(runs).replayLast()
        #expect(runs.value == 1)
        let late = Recorder<Int>()
        replayed.subscribe(late)
        #expect(late.events == [.next(3), .completed])
    }

    @Test func replayLazilyConnectsOnTheFirstSubscriberAndKeepsTheConnection() {
        let runs = Box(0)
        let replayed = countedSource(runs).replayLazily(capacity: 2)
        #expect(runs.value == 0)
        let first = Recorder<Int>(), late = Recorder<Int>()
        replayed.subscribe(first)
        #expect(runs.value == 1)
        replayed.subscribe(late)
        #expect(first.events == [.next(1), .next(2), .next(3), .completed])
        #expect(late.events == [.next(2), .next(3), .completed])
        #expect(runs.value == 1)
    }

    @Test func replayLazilyKeepsTheSourceSubscribedWhenSubscribersLeave() {
        let source = Subject<Int>()
        let live = Box(0)
        let replayed = source.onSubscribe { live.mutate { $0 += 1 } }.onDispose { live.mutate { $0 -= 1 } }.replayLazily()
        replayed.subscribe(Recorder<Int>()).dispose()
        #expect(live.value == 1)
        source.sendNext(5)
        let late = Recorder<Int>()
        replayed.subscribe(late)
        #expect(late.values == [5])
    }

    /// A source whose subscribe and dispose are slow, counting its live upstream subscriptions.
    private func slowCountedSource(_ upstream: Subject<Int>, live: Box<Int>, mostLive: Box<Int>) -> Signal<Int> {
        Signal { subscriber in
            let now = live.mutate { $0 += 1; return $0 }
            mostLive.mutate { $0 = max($0, now) }
            usleep(200)  // widens the window between counting and connecting
            let inner = upstream.subscribe(subscriber)
            return ActionDisposable {
                inner.dispose()
                usleep(200)  // and between disconnecting and the count reaching zero
                live.mutate { $0 -= 1 }
            }
        }
    }

    @Test(arguments: ["autoconnect", "share"])
    func aReconnectionWaitsForTheDisconnectSoTwoUpstreamSubscriptionsNeverOverlap(_ kind: String) {
        let upstream = Subject<Int>()
        let live = Box(0), mostLive = Box(0)
        let source = slowCountedSource(upstream, live: live, mostLive: mostLive)
        let shared = kind == "share" ? source.share() : source.publish().autoconnect()
        let finished = runConcurrently(threads: 4) { _ in
            for _ in 0..<Workload.size(200) {
                shared.subscribe(next: { _ in }).dispose()
            }
        }
        #expect(finished)
        #expect(mostLive.value == 1, "two upstream subscriptions fed the shared subject at once")
        #expect(live.value == 0)
    }

    @Test(arguments: ["autoconnect", "share"])
    func aSubscriberArrivingWhileAnotherThreadConnectsReturnsConnected(_ kind: String) {
        for _ in 0..<Workload.size(100) {
            let upstream = Subject<Int>()
            let live = Box(0), mostLive = Box(0)
            let source = slowCountedSource(upstream, live: live, mostLive: mostLive)
            let shared = kind == "share" ? source.share() : source.publish().autoconnect()
            let seen = Box<[Int]>([])
            let subscriptions = Box<[any Disposable]>([])
            let finished = runConcurrently(threads: 2) { thread in
                let subscription = shared.subscribe(next: { value in seen.mutate { $0.append(value) } })
                subscriptions.mutate { $0.append(subscription) }
                upstream.sendNext(thread)  // connected by now, whoever connected
            }
            #expect(finished)
            // Each thread sent after its own subscribe returned: at least its own subscriber got it.
            let values = seen.value
            #expect(values.contains(0) && values.contains(1), "a value sent after subscribe returned was lost: \(values)")
            for subscription in subscriptions.value { subscription.dispose() }
            #expect(live.value == 0)
        }
    }

    @Test func aSubscriberArrivingFromACallbackWhoseTurnTheConnectingSourceNeedsDoesNotDeadlock() {
        // B subscribes to share() from inside x's callback (holding x's turn) while A connects;
        // A's source then sends a value that B's subscriber forwards into x: A needs x's turn.
        let x = Subject<Int>()
        let aConnecting = DispatchSemaphore(value: 0)
        let bReceived = Box(false)
        let source = Signal<Int> { subscriber in
            aConnecting.signal()
            // Still connecting: sends until B, which joins meanwhile, has a value (however long
            // B's thread waits for a core), so the value that needs x's turn reaches B.
            let giveUp = Date().addingTimeInterval(Workload.hangLimit)  // the test has failed by then
            while !bReceived.value, Date() < giveUp {
                subscriber.sendNext(1)
                usleep(1_000)
            }
            return nil
        }
        let shared = source.share()
        let keep = Box<[any Disposable]>([])
        let forwarded = Box<[Int]>([])
        let xSubscription = x.subscribeNext { value in
            forwarded.mutate { $0.append(value) }
            if value == 0 {
                aConnecting.wait()
                let subscription = shared.subscribeNext { w in  // not under keep's lock
                    bReceived.value = true
                    x.sendNext(w + 100)
                }
                keep.mutate { $0.append(subscription) }
            }
        }
        let a = Thread {
            let subscription = shared.subscribeNext { _ in }
            keep.mutate { $0.append(subscription) }
        }
        a.start()
        let finished = finishes("a subscriber waiting for a connect that waits for its turn") { x.sendNext(0) }
        #expect(finished)
        #expect(waitUntil { forwarded.value.contains(101) }, "the value A's source sent reached B and x: \(forwarded.value)")
        for subscription in keep.value { subscription.dispose() }
        xSubscription.dispose()
    }

    @Test func everyAutoconnectOfOneConnectionSharesOneCount() {
        let upstream = Subject<Int>()
        let connection = upstream.multicast(Subject<Int>())
        let a = connection.autoconnect(), b = connection.autoconnect()
        let got = Box<[Int]>([])
        let da = a.subscribeNext { _ in }
        let db = b.subscribeNext { value in got.mutate { $0.append(value) } }
        da.dispose()  // b's subscriber is still there: still connected
        upstream.sendNext(7)
        #expect(got.value == [7])
        db.dispose()
        upstream.sendNext(8)
        #expect(got.value == [7])
        #expect(upstream.storage.subscriberCount == 0, "the last subscriber disconnected")
    }

    /// An error whose `deinit` runs `action` (user code run wherever the error dies).
    final class DeinitError: Error, @unchecked Sendable {  // `action` is immutable
        let action: @Sendable () -> Void
        init(_ action: @escaping @Sendable () -> Void) { self.action = action }
        deinit { action() }
    }

    @Test func theLastSubscriberLeavingReleasesTheEndedConnectionAfterUnlocking() {
        // The source fails at once with an error whose deinit subscribes to the same share()
        // from another thread: it must not find the share's lock held by the leaving thread.
        let shared = Box<Signal<Int>?>(nil)
        let armed = Box(true)
        let deinitRan = Box(false), blocked = Box(false)
        let signal = Signal<Int> { subscriber in
            if armed.mutate({ armed in defer { armed = false }; return armed }) {
                subscriber.sendError(DeinitError {
                    deinitRan.value = true
                    let joined = DispatchSemaphore(value: 0)
                    Thread {
                        shared.value?.subscribe(next: { _ in }, error: { _ in }, completed: {}).dispose()
                        joined.signal()
                    }.start()
                    // Held by the leaving thread, the lock would keep that subscribe waiting for
                    // good: past the hang limit, it was held.
                    if joined.wait(timeout: .now() + Workload.hangLimit) == .timedOut { blocked.value = true }
                })
            } else {
                subscriber.sendCompleted()
            }
            return nil
        }.share()
        shared.value = signal
        signal.subscribe(next: { _ in }, error: { _ in }, completed: {}).dispose()
        #expect(waitUntil { deinitRan.value })
        #expect(!blocked.value, "the error's deinit ran while the share's lock was held")
        shared.value = nil
    }

    @Test func aSubscriberWaitingForAConnectIsNotWokenByAnOlderDisconnect() {
        // Generation 1's upstream dispose re-subscribes and disposes (generation 2), lets Z
        // connect generation 3 and D join it; when generation 1's dispose ends, D must still
        // wait for Z's connect.
        let calls = Box(0)
        let connected = Box(false)
        let zInSource = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), dDone = DispatchSemaphore(value: 0)
        let sharedBox = Box<Signal<Int>?>(nil)
        let keep = Box<[any Disposable]>([])
        let held = Box<[PassthroughSubscriber<Int>]>([])
        let signal = Signal<Int> { subscriber in
            held.mutate { $0.append(subscriber) }
            switch calls.mutate({ calls in calls += 1; return calls }) {
            case 1:
                return ActionDisposable {
                    guard let shared = sharedBox.value else { return }
                    shared.subscribe(next: { _ in }).dispose()  // generation 2, from inside the dispose
                    Thread { let z = shared.subscribe(next: { _ in }); keep.mutate { $0.append(z) } }.start()
                    zInSource.wait()
                    Thread {
                        let d = shared.subscribe(next: { _ in })
                        keep.mutate { $0.append(d) }
                        dDone.signal()
                    }.start()
                    usleep(200_000)  // D joins and waits for Z's connect
                }
            case 2:
                return nil
            default:
                zInSource.signal()
                release.wait()
                connected.value = true
                return nil
            }
        }.share()
        sharedBox.value = signal
        signal.subscribe(next: { _ in }).dispose()
        let early = dDone.wait(timeout: .now() + 1) == .success
        release.signal()
        if !early { dDone.wait() }
        #expect(!early, "a subscriber returned before the connect it joined had ended")
        for subscription in keep.value { subscription.dispose() }
        held.value = []
        sharedBox.value = nil
    }
}
