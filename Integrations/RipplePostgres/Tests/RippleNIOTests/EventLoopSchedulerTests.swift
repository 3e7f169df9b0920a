import Dispatch
import NIOCore
import NIOPosix
import Ripple
import RippleNIO
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Synchronization
import Testing

private func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

@Suite struct EventLoopSchedulerTests {
    let group = MultiThreadedEventLoopGroup.singleton

    @Test func actionsRunOnTheLoopInOrderAsTheCurrentScheduler() async {
        let loop = group.next()
        let scheduler = EventLoopScheduler(loop)
        let seen = NIOLockedValueBox<[Int]>([])
        let wrong = Atomic(0)
        for i in 0..<1_000 {
            scheduler.schedule {
                if !loop.inEventLoop || Schedulers.current !== scheduler || !scheduler.isCurrent {
                    wrong.add(1, ordering: .relaxed)
                }
                seen.withLockedValue { $0.append(i) }
            }
        }
        #expect(await eventually { seen.withLockedValue { $0.count } == 1_000 })
        #expect(seen.withLockedValue { $0 } == Array(0..<1_000))
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(!scheduler.isCurrent)
        #expect(Schedulers.current == nil)
    }

    @Test func aDelayedActionWaitsItsDelay() async throws {
        let scheduler = EventLoopScheduler(group.next())
        let start = ContinuousClock.now
        let ranAt = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
        scheduler.schedule(after: .milliseconds(50)) { ranAt.withLockedValue { $0 = .now } }
        #expect(await eventually { ranAt.withLockedValue { $0 } != nil })
        #expect(try #require(ranAt.withLockedValue { $0 }) - start >= .milliseconds(50))
    }

    @Test func disposingBeforeTheStartCancelsTheLoopsTimerAndReleasesTheAction() async throws {
        let loop = group.next()
        let scheduler = EventLoopScheduler(loop)
        final class Token: Sendable {}
        weak var weakToken: Token?
        let ran = Atomic(false)
        let disposable: any Disposable = {
            let token = Token()
            weakToken = token
            return scheduler.schedule(after: .seconds(3_600)) { _ = token; ran.store(true, ordering: .relaxed) }
        }()
        #expect(weakToken != nil)
        disposable.dispose()
        #expect(disposable.isDisposed)
        #expect(weakToken == nil, "the action is released on dispose, not when the hour is up")
        // The loop runs no timer of ours: a task scheduled after it runs, and nothing else does.
        try await loop.submit {}.get()
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)

        let immediate = Atomic(false)
        // Dispose an immediate action while the loop is busy, before it starts.
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let busy = loop.submit { started.signal(); release.wait() }
        started.wait()
        let d = scheduler.schedule { immediate.store(true, ordering: .relaxed) }
        d.dispose()
        release.signal()
        try await busy.get()
        try await loop.submit {}.get()
        let immediateRan = immediate.load(ordering: .relaxed)
        #expect(d.isDisposed && !immediateRan)
    }

    @Test func deliverOnTheLoopRunsSubscribersThereAndNeverBlocksASenderOnTheLoop() async throws {
        let loop = group.next()
        let scheduler = EventLoopScheduler(loop)
        let subject = Subject<Int>()
        let onLoop = Atomic(0)
        let values = NIOLockedValueBox<[Int]>([])
        let completed = Atomic(0)
        _ = subject.deliver(on: scheduler).subscribe(
            next: { value in
                if loop.inEventLoop { onLoop.add(1, ordering: .relaxed) }
                values.withLockedValue { $0.append(value) }
            },
            completed: { completed.add(1, ordering: .relaxed) })
        for i in 0..<100 { subject.sendNext(i) }
        subject.sendCompleted()
        #expect(await eventually { completed.load(ordering: .relaxed) == 1 })
        #expect(values.withLockedValue { $0 } == Array(0..<100))
        #expect(onLoop.load(ordering: .relaxed) == 100)

        // A sender on the loop itself never waits for the loop (it would wait forever): with a
        // buffer of 1 and `.wait`, 100 sends from the loop return, and all 100 values arrive.
        let fromLoop = NIOLockedValueBox<[Int]>([])
        let s = Subject<Int>()
        let d = s.deliver(on: scheduler, bufferSize: 1, whenFull: .wait).subscribeNext { value in
            fromLoop.withLockedValue { $0.append(value) }
        }
        try await loop.submit { for i in 0..<100 { s.sendNext(i) } }.get()
        #expect(await eventually { fromLoop.withLockedValue { $0.count } == 100 })
        #expect(fromLoop.withLockedValue { $0 } == Array(0..<100))
        d.dispose()
    }

    @Test func timedOperatorsRunOnTheLoop() async throws {
        let loop = group.next()
        let scheduler = EventLoopScheduler(loop)
        let got = NIOLockedValueBox<[Int]>([])
        let onLoop = Atomic(true)
        _ = Signal<Int>.timer(.milliseconds(10), on: scheduler).subscribeNext { value in
            if !loop.inEventLoop { onLoop.store(false, ordering: .relaxed) }
            got.withLockedValue { $0.append(value) }
        }
        #expect(await eventually { got.withLockedValue { $0.count } == 1 })
        let allOnLoop = onLoop.load(ordering: .relaxed)
        #expect(allOnLoop)
    }

    /// From `@MainActor` code, `deliver(on:)` then `subscribe` delivers on the main actor (the
    /// closures are the actor's), and `subscribe(onLoop:)` delivers on the loop.
    @MainActor @Test func fromMainActorCodeDeliverOnHopsToTheActorAndSubscribeOnLoopStaysOnTheLoop() async {
        let loop = group.next()
        let subject = Subject<Int>()
        let onMain = NIOLockedValueBox<[Int]>([])
        let viaDeliver = subject.deliver(on: EventLoopScheduler(loop)).subscribeNext { value in
            MainActor.assertIsolated()
            onMain.withLockedValue { $0.append(value) }
        }
        let onLoop = NIOLockedValueBox<[Int]>([])
        let offLoop = Atomic(0)
        let viaLoop = subject.subscribe(onLoop: loop, next: { value in
            if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
            onLoop.withLockedValue { $0.append(value) }
        })
        await Task.detached { for i in 0..<50 { subject.sendNext(i) } }.value
        let arrived = await eventually { @Sendable in onMain.withLockedValue { $0.count } == 50 && onLoop.withLockedValue { $0.count } == 50 }
        #expect(arrived)
        #expect(onMain.withLockedValue { $0 } == Array(0..<50))
        #expect(onLoop.withLockedValue { $0 } == Array(0..<50))
        #expect(offLoop.load(ordering: .relaxed) == 0)
        viaDeliver.dispose()
        viaLoop.dispose()
    }
}
