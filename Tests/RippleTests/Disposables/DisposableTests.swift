import Dispatch
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct DisposableTests {
    @Test func actionDisposableRunsItsActionOnceOnFirstDispose() {
        var runs = 0
        let d = ActionDisposable { runs += 1 }
        #expect(!d.isDisposed)
        d.dispose()
        d.dispose()
        #expect(runs == 1)
        #expect(d.isDisposed)
    }

    @Test func compoundDisposesEveryChildInOrderOnce() {
        var log: [String] = []
        let a = ActionDisposable { log.append("a") }
        let b = ActionDisposable { log.append("b") }
        let compound = CompoundDisposable([a])
        compound.add(b)
        compound.dispose()
        compound.dispose()
        #expect(log == ["a", "b"])
        #expect(a.isDisposed && b.isDisposed && compound.isDisposed)
    }

    @Test func addingToADisposedCompoundDisposesAtOnce() {
        let compound = CompoundDisposable()
        compound.dispose()
        let late = ActionDisposable()
        let kept = compound.add(late)
        #expect(!kept)
        #expect(late.isDisposed)
    }

    @Test func removingFromACompoundDoesNotDisposeTheChild() {
        let child = ActionDisposable()
        let compound = CompoundDisposable([child])
        compound.remove(child)
        compound.dispose()
        #expect(!child.isDisposed)
    }

    /// Children that log their name when disposed.
    static func logged(_ count: Int, into log: Box<[Int]>) -> [ActionDisposable] {
        (0..<count).map { index in ActionDisposable { log.mutate { $0.append(index) } } }
    }

    @Test(arguments: [8, CompoundDisposable.indexedAbove + 1, 1_000])
    func aCompoundDisposesWhatIsLeftInTheOrderAddedWhicheverChildrenWereRemoved(count: Int) {
        let log = Box<[Int]>([])
        let children = Self.logged(count, into: log)
        let compound = CompoundDisposable(Array(children.prefix(count / 2)))
        for child in children.dropFirst(count / 2) { compound.add(child) }
        #expect(compound.isIndexed == (count > CompoundDisposable.indexedAbove))
        // The oldest, the newest, and every third in between.
        let removed = Set([0, count - 1] + Array(stride(from: 1, to: count - 1, by: 3)))
        for index in removed.sorted() { compound.remove(children[index]) }
        compound.remove(ActionDisposable())  // not a child: nothing happens
        #expect(compound.childCount == count - removed.count)
        compound.dispose()
        #expect(log.value == (0..<count).filter { !removed.contains($0) })
        #expect(children.enumerated().allSatisfy { $0.element.isDisposed != removed.contains($0.offset) })
    }

    @Test(arguments: [4, 100])
    func removingAChildAddedTwiceTakesOutTheOccurrenceAddedLast(others: Int) {
        let log = Box<[Int]>([])
        let children = Self.logged(others + 1, into: log)
        let twice = children[others]  // logs `others`
        let compound = CompoundDisposable()
        compound.add(twice)
        for child in children.prefix(others) { compound.add(child) }
        compound.add(twice)
        compound.remove(twice)  // the second occurrence: `twice` is still held first
        #expect(compound.childCount == others + 1)
        compound.remove(children[0])
        compound.dispose()
        #expect(log.value == [others] + Array(1..<others))
    }

    @Test func removingChildrenOldestFirstExaminesLinearlyManySlotsInAll() {
        let n = 20_000
        let children = (0..<n).map { _ in ActionDisposable() }
        let compound = CompoundDisposable(children)
        // A flatMap's inner subscriptions ending in the order they started, new ones starting.
        for child in children.prefix(n / 2) {
            compound.remove(child)
            compound.add(ActionDisposable())
        }
        for child in children.suffix(n / 2) { compound.remove(child) }
        #expect(compound.isIndexed)
        #expect(compound.childCount == n / 2)
        // Compactions only (no child was added twice): each moves at most twice the holes it
        // squeezes out; a search per removal would have examined some 10^8 slots.
        #expect(compound.indexedWork <= 4 * n)
        compound.dispose()
        #expect(!children.contains { $0.isDisposed })
    }

    @Test func disposedByAddsToACompound() {
        let bag = CompoundDisposable()
        let d = ActionDisposable().disposed(by: bag)
        bag.dispose()
        #expect(d.isDisposed)
    }

    @Test func serialDisposableSetDisposesThePreviousOne() {
        let serial = SerialDisposable()
        let first = ActionDisposable(), second = ActionDisposable()
        serial.disposable = first
        serial.disposable = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        #expect(serial.disposable === second)
        serial.dispose()
        #expect(second.isDisposed)
    }

    @Test func serialDisposableSwapDoesNotDisposeThePreviousOne() {
        let serial = SerialDisposable()
        let first = ActionDisposable(), second = ActionDisposable()
        serial.disposable = first
        let previous = serial.swap(second)
        #expect(previous === first)
        #expect(!first.isDisposed)
        #expect(serial.disposable === second)
    }

    @Test func settingADisposedSerialDisposableDisposesTheNewOne() {
        let serial = SerialDisposable()
        serial.dispose()
        let late = ActionDisposable(), swapped = ActionDisposable()
        serial.disposable = late
        #expect(late.isDisposed)
        #expect(serial.swap(swapped) == nil)
        #expect(swapped.isDisposed)
        #expect(serial.disposable == nil)
    }

    @Test func metaDisposableSetIsSerialDisposableSet() {
        let meta = SerialDisposable()
        let first = ActionDisposable()
        meta.set(first)
        meta.set(nil)
        #expect(first.isDisposed)
    }

    @Test func scopedDisposableDisposesOnDeinit() {
        let inner = ActionDisposable()
        do {
            let scoped = inner.scoped()
            #expect(!scoped.isDisposed)
        }
        #expect(inner.isDisposed)
        let other = ActionDisposable()
        do { _ = ScopedDisposable(other) }
        #expect(other.isDisposed)
    }

    @Test func keyedDisposableReplacesPerKey() {
        let keyed = KeyedDisposable<String>()
        let a1 = ActionDisposable(), a2 = ActionDisposable(), b = ActionDisposable()
        keyed["a"] = a1
        keyed["b"] = b
        keyed["a"] = a2
        #expect(a1.isDisposed)
        #expect(!a2.isDisposed && !b.isDisposed)
        #expect(keyed["a"] === a2)
        #expect(keyed["missing"] == nil)
        keyed["b"] = nil
        #expect(b.isDisposed)
        #expect(keyed["b"] == nil)
        keyed.dispose()
        #expect(a2.isDisposed)
        let late = ActionDisposable()
        keyed["c"] = late
        #expect(late.isDisposed)
    }
}

/// `Lifetime.observeEnded` at scale: cancelling an observation is bounded work.
@Suite(.leakChecked, .offThePool) struct LifetimeObservationTests {
    /// 200,000 observations of one lifetime, cancelled oldest-first (a long-lived owner whose
    /// short-lived `take(during:)` subscriptions come and go): each cancel finds its observation
    /// at once, rather than searching and shifting the ones after it (the old linear remove took
    /// 107 s for 40,000 in a debug build, growing with the square).
    @Test func cancellingObservationsOldestFirstIsBoundedWorkAndTheRestRunInOrderAtTheEnd() {
        let count = Workload.size(200_000)
        let (lifetime, token) = Lifetime.make()
        let ran = Box<[Int]>([])
        let released = Box(0)
        let cancelled = finishes("cancelling \(count) observations oldest-first") {
            let observations = (0..<count).map { index in
                let witness = DeinitAction { released.mutate { $0 += 1 } }
                return lifetime.observeEnded { withExtendedLifetime(witness) { ran.mutate { $0.append(index) } } }
            }
            // Cancelled oldest-first: all but every 1,000th and the last 1,000.
            for (index, observation) in observations.enumerated() where index % 1_000 != 0 && index < count - 1_000 {
                observation.dispose()
            }
        }
        #expect(cancelled)
        let kept = (0..<count).filter { $0 % 1_000 == 0 || $0 >= count - 1_000 }
        #expect(released.value == count - kept.count, "a cancelled observation's action is released at once")
        token.end()
        #expect(ran.value == kept, "the rest run once each, in the order added")
        #expect(released.value == count)
        var late = false
        lifetime.observeEnded { late = true }
        #expect(late && lifetime.hasEnded)
    }

    @Test func anActionCancellingALaterOneDuringTheEndStopsItAndOneAddedDuringTheEndRunsAtOnce() {
        let (lifetime, token) = Lifetime.make()
        let log = Box<[String]>([])
        let later = Box<(any Disposable)?>(nil)
        lifetime.observeEnded {
            log.mutate { $0.append("first") }
            later.value?.dispose()
            lifetime.observeEnded { log.mutate { $0.append("added during the end") } }
        }
        later.value = lifetime.observeEnded { log.mutate { $0.append("cancelled by the first") } }
        lifetime.observeEnded { log.mutate { $0.append("last") } }
        token.end()
        #expect(log.value == ["first", "added during the end", "last"])
    }

    /// A cancel from another thread while the end runs an earlier action stops a later one:
    /// the end takes each action out only when it reaches it.
    @Test func aCancelFromAnotherThreadBeforeTheEndReachesAnActionStopsIt() {
        let (lifetime, token) = Lifetime.make()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let laterRan = Box(false)
        lifetime.observeEnded {
            entered.signal()
            proceed.wait()
        }
        let later = lifetime.observeEnded { laterRan.value = true }
        DispatchQueue.global().async {
            token.end()
            ended.signal()
        }
        entered.wait()  // the end is running the first action
        later.dispose()
        proceed.signal()
        #expect(ended.wait(timeout: .now() + Workload.hangLimit) == .success)
        #expect(!laterRan.value)
    }

    /// An observation added from another thread while the lifetime ends runs exactly once: in
    /// the end's batch if it came first, else at once in its caller; one cancelled right after
    /// it was added runs at most once (if the end took it, or it came after the end).
    @Test func observationsRacingTheEndRunExactlyOnceAndCancelledOnesAtMostOnce() {
        for _ in 0..<200 {
            let (lifetime, token) = Lifetime.make()
            let runs = Box<[Int: Int]>([:])
            let cancelledRuns = Box<[Int: Int]>([:])
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    token.end()
                    return
                }
                for index in 0..<64 {
                    lifetime.observeEnded { runs.mutate { $0[index, default: 0] += 1 } }
                    lifetime.observeEnded { cancelledRuns.mutate { $0[index, default: 0] += 1 } }.dispose()
                }
            }
            #expect(runs.value.count == 64 && runs.value.values.allSatisfy { $0 == 1 })
            #expect(cancelledRuns.value.values.allSatisfy { $0 == 1 })
        }
    }

    @Test func cancellingAnObservationTwiceOrAfterTheEndDoesNothing() {
        let (lifetime, token) = Lifetime.make()
        var runs = 0
        let first = lifetime.observeEnded { runs += 1 }
        let second = lifetime.observeEnded { runs += 10 }
        first.dispose()
        first.dispose()
        token.end()
        second.dispose()
        token.end()
        #expect(runs == 10)
    }
}

@Suite(.leakChecked, .offThePool) struct DisposableConcurrencyTests {
    @Test func eachDisposableRunsItsActionOnceWhenEightThreadsDisposeAtOnce() {
        for _ in 0..<200 {
            let runs = Box(0)
            let action = ActionDisposable { runs.mutate { $0 += 1 } }
            let compoundChild = ActionDisposable { runs.mutate { $0 += 1 } }
            let compound = CompoundDisposable([compoundChild])
            let serialChild = ActionDisposable { runs.mutate { $0 += 1 } }
            let serial = SerialDisposable(serialChild)
            let keyedChild = ActionDisposable { runs.mutate { $0 += 1 } }
            let keyed = KeyedDisposable<Int>()
            keyed[1] = keyedChild
            runConcurrently(threads: 8) { _ in
                action.dispose()
                compound.dispose()
                serial.dispose()
                keyed.dispose()
            }
            #expect(runs.value == 4)
        }
    }

    @Test func concurrentAddAndDisposeNeverLosesAChild() {
        for _ in 0..<100 {
            let compound = CompoundDisposable()
            let children = (0..<64).map { _ in ActionDisposable() }
            runConcurrently(threads: 8) { thread in
                for i in stride(from: thread, to: 64, by: 8) { compound.add(children[i]) }
                if thread == 3 { compound.dispose() }
            }
            compound.dispose()
            #expect(children.allSatisfy { $0.isDisposed })
        }
    }

    @Test func concurrentSerialSetsLeaveOnlyTheLastLive() {
        for _ in 0..<100 {
            let serial = SerialDisposable()
            let all = Box<[ActionDisposable]>([])
            runConcurrently(threads: 8) { _ in
                for _ in 0..<20 {
                    let d = ActionDisposable()
                    all.mutate { $0.append(d) }
                    serial.disposable = d
                }
            }
            let live = all.value.filter { !$0.isDisposed }
            #expect(live.count == 1)
            #expect(live.first === serial.disposable)
        }
    }
}
