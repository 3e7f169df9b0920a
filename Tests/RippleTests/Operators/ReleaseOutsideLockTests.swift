import CRippleThread
import Testing
@testable import Ripple
import RippleTestSupport

/// Runs `action` when deinitialized: user code that runs wherever an operator lets go of the
/// last copy of a value holding it.
final class DeinitAction: @unchecked Sendable {  // `action` is immutable and run once, by deinit
    private let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
    deinit { action() }
}

/// A value type with a class payload, whose release runs user code.
struct Tracked: @unchecked Sendable {  // see `DeinitAction`
    let id: Int
    let onRelease: DeinitAction?
    init(_ id: Int, onRelease: (() -> Void)? = nil) {
        self.id = id
        self.onRelease = onRelease.map(DeinitAction.init)
    }
}

/// User code under locks: an operator that replaced or dropped a value inside its
/// lock ran the value's deinit there; a deinit that re-enters the operator (through another
/// source, a sampler or the operator's clock) then deadlocked on that lock. Each test lets a
/// value's release re-enter the operator that releases it, under a watchdog.
@Suite(.leakChecked, .offThePool) struct ReleaseOutsideLockTests {
    @Test func combineLatestReleasesAReplacedValueOutsideItsLock() {
        let ids = Box<[[Int]]>([])
        finishes("combineLatest releasing a replaced value whose deinit sends into the other source") {
            let a = Subject<Tracked>(), b = Subject<Tracked>()
            let subscription = a.combineLatest(b).subscribeNext { pair in ids.mutate { $0.append([pair.0.id, pair.1.id]) } }
            a.sendNext(Tracked(1) { b.sendNext(Tracked(9)) })
            b.sendNext(Tracked(2))
            a.sendNext(Tracked(3))  // replaces 1, whose release sends 9 into b
            subscription.dispose()
        }
        #expect(ids.value == [[1, 2], [3, 2], [3, 9]])
    }

    @Test func sampleReleasesAReplacedValueOutsideItsLock() {
        let ids = Box<[Int]>([])
        finishes("sample releasing a replaced value whose deinit sends into the sampler") {
            let source = Subject<Tracked>(), sampler = Subject<Void>()
            let subscription = source.sample(sampler).subscribeNext { value in ids.mutate { $0.append(value.id) } }
            source.sendNext(Tracked(1) { sampler.sendNext(()) })
            source.sendNext(Tracked(2))  // replaces 1, whose release samples
            subscription.dispose()
        }
        #expect(ids.value == [2])
    }

    @Test func withLatestReleasesAReplacedOtherValueOutsideItsLock() {
        let ids = Box<[[Int]]>([])
        finishes("withLatest releasing a replaced value of the other signal whose deinit sends into the source") {
            let source = Subject<Tracked>(), other = Subject<Tracked>()
            let subscription = source.withLatest(from: other).subscribeNext { pair in ids.mutate { $0.append([pair.0.id, pair.1.id]) } }
            other.sendNext(Tracked(1) { source.sendNext(Tracked(9)) })
            source.sendNext(Tracked(2))
            other.sendNext(Tracked(3))  // replaces 1, whose release sends 9 into the source
            subscription.dispose()
        }
        #expect(ids.value == [[2, 1], [9, 3]])
    }

    @Test func sampleWithADefaultReleasesAReplacedValueOutsideItsLock() {
        let ids = Box<[Int]>([])
        finishes("sample(_:default:) releasing a replaced value whose deinit sends into the sampler") {
            let source = Subject<Tracked>(), sampler = Subject<Void>()
            let subscription = source.sample(sampler, default: Tracked(0)).subscribeNext { value in ids.mutate { $0.append(value.id) } }
            sampler.sendNext(())
            source.sendNext(Tracked(1) { sampler.sendNext(()) })
            source.sendNext(Tracked(2))  // replaces 1, whose release samples
            subscription.dispose()
        }
        #expect(ids.value == [0, 2])
    }

    @Test func debounceReleasesAReplacedValueOutsideItsLock() {
        let ids = Box<[Int]>([])
        finishes("debounce releasing a replaced value whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            let subscription = source.debounce(.milliseconds(30), on: clock)
                .subscribeNext { value in ids.mutate { $0.append(value.id) } }
            source.sendNext(Tracked(1) { clock.advance(by: .milliseconds(30)) })
            source.sendNext(Tracked(2))  // replaces 1, whose release runs the timers
            subscription.dispose()
        }
        #expect(ids.value == [2])
    }

    @Test func debounceReleasesTheValueAnErrorDropsOutsideItsLock() {
        let events = Box<[String]>([])
        finishes("debounce dropping a value on error whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            source.debounce(.milliseconds(30), on: clock).subscribe(
                next: { value in events.mutate { $0.append("\(value.id)") } },
                error: { _ in events.mutate { $0.append("#") } })
            source.sendNext(Tracked(1) { clock.advance(by: .milliseconds(30)) })
            source.sendError(TestError())  // drops 1, whose release runs the timers
        }
        #expect(events.value == ["#"])
    }

    @Test func throttleReleasesAReplacedValueOutsideItsLock() {
        let ids = Box<[Int]>([])
        finishes("throttle releasing a replaced value whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            let subscription = source.throttle(.milliseconds(30), on: clock)
                .subscribeNext { value in ids.mutate { $0.append(value.id) } }
            source.sendNext(Tracked(1))
            source.sendNext(Tracked(2) { clock.advance(by: .milliseconds(30)) })
            source.sendNext(Tracked(3))  // replaces 2, whose release ends the window
            subscription.dispose()
        }
        #expect(ids.value == [1, 3])
    }

    @Test func throttleReleasesTheValueAnErrorDropsOutsideItsLock() {
        let events = Box<[String]>([])
        finishes("throttle dropping a value on error whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            source.throttle(.milliseconds(30), on: clock).subscribe(
                next: { value in events.mutate { $0.append("\(value.id)") } },
                error: { _ in events.mutate { $0.append("#") } })
            source.sendNext(Tracked(1))
            source.sendNext(Tracked(2) { clock.advance(by: .milliseconds(30)) })
            source.sendError(TestError())  // drops 2, whose release ends the window
        }
        #expect(events.value == ["1", "#"])
    }

    @Test func timedBufferReleasesTheValuesAnErrorDropsOutsideItsLock() {
        let events = Box<[String]>([])
        finishes("buffer(timeSpan:) dropping values on error whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            source.buffer(timeSpan: .milliseconds(30), on: clock).subscribe(
                next: { values in events.mutate { $0.append("\(values.map(\.id))") } },
                error: { _ in events.mutate { $0.append("#") } })
            source.sendNext(Tracked(1) { clock.advance(by: .milliseconds(30)) })
            source.sendError(TestError())  // drops [1], whose release ticks the buffer's clock
        }
        #expect(events.value == ["#"])
    }

    @Test func timedCountedBufferReleasesTheValuesAnErrorDropsOutsideItsLock() {
        let events = Box<[String]>([])
        finishes("buffer(timeSpan:count:) dropping values on error whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            source.buffer(timeSpan: .milliseconds(30), count: 5, on: clock).subscribe(
                next: { values in events.mutate { $0.append("\(values.map(\.id))") } },
                error: { _ in events.mutate { $0.append("#") } })
            source.sendNext(Tracked(1) { clock.advance(by: .milliseconds(30)) })
            source.sendError(TestError())  // drops [1], whose release runs the window's timer
        }
        #expect(events.value == ["#"])
    }

    @Test func throttleWithoutLatestReleasesADroppedValueOutsideItsLock() {
        let ids = Box<[Int]>([])
        finishes("throttle(latest: false) dropping a value whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            let subscription = source.throttle(.milliseconds(30), latest: false, on: clock)
                .subscribeNext { value in ids.mutate { $0.append(value.id) } }
            source.sendNext(Tracked(1))
            source.sendNext(Tracked(2) { clock.advance(by: .milliseconds(30)) })  // dropped; its release ends the window
            source.sendNext(Tracked(3))
            subscription.dispose()
        }
        #expect(ids.value == [1, 3])
    }

    @Test func delayReleasesTheValuesAnErrorDropsOutsideItsLock() {
        let events = Box<[String]>([])
        finishes("delay dropping values on error whose deinit advances the clock") {
            let clock = TestScheduler()
            let source = Subject<Tracked>()
            source.delay(.milliseconds(30), on: clock).subscribe(
                next: { value in events.mutate { $0.append("\(value.id)") } },
                error: { _ in events.mutate { $0.append("#") } })
            source.sendNext(Tracked(1) { clock.advance(by: .milliseconds(30)) })
            source.sendError(TestError())  // drops 1, whose release runs the timers
        }
        #expect(events.value == ["#"])
    }

    @Test func aReleasedValueMayDisposeItsOwnSubscription() {
        let ids = Box<[Int]>([])
        finishes("operators releasing a value whose deinit disposes the subscription") {
            let clock = TestScheduler()
            let a = Subject<Tracked>(), b = Subject<Tracked>()
            let subscription = SerialDisposable()
            subscription.disposable = a.combineLatest(b).map { $0.0 }
                .debounce(.milliseconds(10), on: clock).throttle(.milliseconds(10), on: clock)
                .subscribeNext { value in ids.mutate { $0.append(value.id) } }
            a.sendNext(Tracked(1) { subscription.dispose() })
            b.sendNext(Tracked(2))
            clock.advance(by: .milliseconds(10))
            a.sendNext(Tracked(3))  // replaces 1 in combineLatest, whose release disposes everything
            clock.run()
        }
        #expect(ids.value == [1])
    }

    /// The Ripple locks the calling thread holds (always 0 in release builds, which do not count).
    static var locksHeld: Int { Int(ripple_locks_held_add(0)) }

    @Test func boundedFlatMapReleasesTheQueuedInnerSignalsAnErrorDropsOutsideItsLock() {
        let locksAtRelease = Box<[Int]>([])
        let events = Box<[String]>([])
        finishes("flatMap(maxConcurrent:) dropping queued inner signals on error, whose release sends into the running one") {
            let outer = Subject<Int>(), running = Subject<Int>()
            outer.flatMap(maxConcurrent: 1) { value -> Signal<Int> in
                if value == 0 { return running.asSignal() }
                let tracked = Tracked(value) {
                    locksAtRelease.mutate { $0.append(Self.locksHeld) }
                    running.sendNext(99)  // re-enters the operator's forwarder, if it still listens
                }
                return Signal { s in
                    s.sendNext(tracked.id)
                    s.sendCompleted()
                    return nil
                }
            }.subscribe(
                next: { value in events.mutate { $0.append("\(value)") } },
                error: { _ in events.mutate { $0.append("#") } })
            outer.sendNext(0)
            outer.sendNext(1)  // queued behind 0
            outer.sendNext(2)
            running.sendNext(7)
            outer.sendError(TestError())  // drops 1 and 2, whose release sends into `running`
        }
        #expect(locksAtRelease.value == [0, 0], "each dropped inner signal is released, outside every lock")
        #expect(events.value == ["7", "#"])
    }

    @Test func boundedFlatMapReleasesTheQueuedInnerSignalsADisposeDropsOutsideItsLock() {
        let locksAtRelease = Box<[Int]>([])
        let events = Box<[String]>([])
        finishes("flatMap(maxConcurrent:) dropping queued inner signals on dispose, whose release sends into the source") {
            let outer = Subject<Int>(), running = Subject<Int>()
            let subscription = outer.flatMap(maxConcurrent: 1) { value -> Signal<Int> in
                if value == 0 { return running.asSignal() }
                let tracked = Tracked(value) {
                    locksAtRelease.mutate { $0.append(Self.locksHeld) }
                    outer.sendNext(0)  // re-enters the operator, if it still listens
                }
                return Signal { s in
                    s.sendNext(tracked.id)
                    s.sendCompleted()
                    return nil
                }
            }.subscribeNext { value in events.mutate { $0.append("\(value)") } }
            outer.sendNext(0)
            outer.sendNext(1)
            outer.sendNext(2)
            subscription.dispose()  // drops 1 and 2
        }
        #expect(locksAtRelease.value == [0, 0])
        #expect(events.value.isEmpty)
    }

    @Test func backoffRetryCancelsAndReleasesItsTimersOutsideItsLock() {
        let locks = Box<[Int]>([])
        let events = Box<[String]>([])
        finishes("retry(upTo:backoff:on:) cancelling and releasing its timers") {
            let clock = TestScheduler()
            let scheduler = TeardownWatchingScheduler(clock) { locks.mutate { $0.append(Self.locksHeld) } }
            let failing = Signal<Int> { s in
                s.sendNext(1)
                s.sendError(TestError())
                return nil
            }
            // One run whose timers fire (each fired timer is released), then one disposed while it waits.
            failing.retry(upTo: 2, backoff: .constant(.milliseconds(10)), on: scheduler).subscribe(
                next: { value in events.mutate { $0.append("\(value)") } },
                error: { _ in events.mutate { $0.append("#") } })
            clock.run()
            let waiting = failing.retry(upTo: 2, backoff: .constant(.milliseconds(10)), on: scheduler)
                .subscribeNext { value in events.mutate { $0.append("\(value)") } }
            waiting.dispose()  // cancels the pending timer
            clock.run()
        }
        #expect(!locks.value.isEmpty, "the timers were released")
        #expect(locks.value.allSatisfy { $0 == 0 }, "a timer released or cancelled under a lock: \(locks.value)")
        #expect(events.value == ["1", "1", "1", "#", "1"])
    }
}

/// A scheduler over a `TestScheduler` whose disposables run `teardown` (user code) when
/// disposed and when released.
final class TeardownWatchingScheduler: Scheduler, @unchecked Sendable {  // `teardown` is immutable; the tests that use it run on one thread
    private let base: TestScheduler
    private let teardown: () -> Void

    init(_ base: TestScheduler, teardown: @escaping () -> Void) {
        self.base = base
        self.teardown = teardown
    }

    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        Watched(base.schedule(action), teardown)
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        Watched(base.schedule(after: delay, action), teardown)
    }

    var now: Duration { base.now }
    var runsActionsOnItsOwnThreads: Bool { false }
    var isCurrent: Bool { base.isCurrent }

    private final class Watched: Disposable, @unchecked Sendable {  // see the scheduler
        private let scheduled: any Disposable
        private let teardown: () -> Void
        init(_ scheduled: any Disposable, _ teardown: @escaping () -> Void) {
            self.scheduled = scheduled
            self.teardown = teardown
        }
        var isDisposed: Bool { scheduled.isDisposed }
        func dispose() {
            teardown()
            scheduled.dispose()
        }
        deinit { teardown() }
    }
}
