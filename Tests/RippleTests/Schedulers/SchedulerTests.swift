import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Schedules `steps` actions, each from inside the previous one, and waits for the last.
/// Returns the deepest stack address spread seen, to prove the stack does not grow.
private func recurse(on scheduler: any Scheduler, steps: Int, drive: () -> Void = {}) -> (count: Int, stackGrowth: Int) {
    final class State: @unchecked Sendable {
        let count = Atomic<Int>(0)
        let minAddress = Atomic<Int>(Int.max)
        let maxAddress = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
    }
    let state = State()
    @Sendable func step() {
        var marker = 0
        let address = withUnsafeMutablePointer(to: &marker) { Int(StackGuard.stackAddress(of: $0)) }
        state.minAddress.min(address, ordering: .relaxed)
        state.maxAddress.max(address, ordering: .relaxed)
        if state.count.add(1, ordering: .relaxed).newValue < steps {
            scheduler.schedule(step)
        } else {
            state.done.signal()
        }
    }
    scheduler.schedule(step)
    drive()
    state.done.wait()
    return (state.count.load(ordering: .relaxed), state.maxAddress.load(ordering: .relaxed) - state.minAddress.load(ordering: .relaxed))
}

@Suite(.leakChecked, .offThePool) struct ImmediateSchedulerTests {
    @Test func runsSynchronouslyOnTheCaller() {
        let ran = Box(false)
        ImmediateScheduler.shared.schedule { ran.value = true }
        #expect(ran.value)
    }

    @Test func scheduleAfterWaitsThenRuns() {
        let start = ContinuousClock.now
        let ran = Box(false)
        ImmediateScheduler.shared.schedule(after: .milliseconds(20)) { ran.value = true }
        #expect(ran.value)
        #expect(ContinuousClock.now - start >= .milliseconds(20))
    }

    @Test func nestedActionsRunInOrderAfterTheOuterOne() {
        let log = Box<[String]>([])
        ImmediateScheduler.shared.schedule {
            log.mutate { $0.append("outer begin") }
            ImmediateScheduler.shared.schedule { log.mutate { $0.append("inner") } }
            log.mutate { $0.append("outer end") }
        }
        #expect(log.value == ["outer begin", "outer end", "inner"])
    }

    @Test func cancellingANestedActionBeforeItStartsMeansItNeverRuns() {
        let ran = Box(false)
        ImmediateScheduler.shared.schedule {
            let d = ImmediateScheduler.shared.schedule { ran.value = true }
            d.dispose()
        }
        #expect(!ran.value)
    }

    @Test func aMillionRecursiveStepsDoNotGrowTheStack() {
        let result = recurse(on: ImmediateScheduler.shared, steps: Workload.size(1_000_000))
        #expect(result.count == Workload.size(1_000_000))
        #expect(result.stackGrowth < 4096)
    }
}

@Suite(.leakChecked, .offThePool) struct SerialQueueSchedulerTests {
    @Test func runsActionsInFIFOOrderNeverTwoAtOnce() {
        let scheduler = SerialQueueScheduler(label: "test.fifo")
        let detector = OverlapDetector()
        let log = Box<[Int]>([])
        for i in 0..<1_000 {
            scheduler.schedule {
                detector.enter()
                log.mutate { $0.append(i) }
                detector.leave()
            }
        }
        #expect(waitUntil { log.value.count == 1_000 })
        #expect(log.value == Array(0..<1_000))
        #expect(detector.overlapCount == 0)
    }

    @Test func wrapsAnExistingQueue() {
        let queue = DispatchQueue(label: "test.wrapped")
        let scheduler = SerialQueueScheduler(queue: queue)
        let onQueue = Box(false)
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        scheduler.schedule { onQueue.value = DispatchQueue.getSpecific(key: key) == 7 }
        #expect(waitUntil { onQueue.value })
    }

    @Test func cancellingBeforeStartMeansTheActionNeverRuns() {
        let scheduler = SerialQueueScheduler(label: "test.cancel")
        let gate = DispatchSemaphore(value: 0)
        let ran = Box(false)
        scheduler.schedule { gate.wait() }
        let d = scheduler.schedule { ran.value = true }
        d.dispose()
        gate.signal()
        let finished = Box(false)
        scheduler.schedule { finished.value = true }
        #expect(waitUntil { finished.value })
        #expect(!ran.value)
    }

    @Test func scheduleAfterRunsNoEarlierThanTheDelay() {
        let scheduler = SerialQueueScheduler(label: "test.delay")
        let start = ContinuousClock.now
        let elapsed = Box<Duration?>(nil)
        scheduler.schedule(after: .milliseconds(30)) { elapsed.value = ContinuousClock.now - start }
        #expect(waitUntil { elapsed.value != nil })
        #expect(elapsed.value! >= .milliseconds(30))
    }

    @Test func aMillionRecursiveStepsFinish() {
        let result = recurse(on: SerialQueueScheduler(label: "test.recursion"), steps: Workload.size(1_000_000))
        #expect(result.count == Workload.size(1_000_000))
        #expect(result.stackGrowth < 4096)
    }
}

@Suite(.leakChecked, .offThePool) struct BackgroundSchedulerTests {
    @Test func runsActionsOffTheCaller() {
        let ran = Box(false)
        let d = BackgroundScheduler(qos: .utility).schedule { ran.value = true }
        #expect(waitUntil { ran.value })
        _ = d
    }

    @Test func cancellingADelayedActionMeansItNeverRuns() {
        let ran = Box(false)
        let d = BackgroundScheduler().schedule(after: .milliseconds(50)) { ran.value = true }
        d.dispose()
        Thread.sleep(forTimeInterval: 0.1)
        #expect(!ran.value)
    }

    @Test func scheduleAfterRunsNoEarlierThanTheDelay() {
        let start = ContinuousClock.now
        let elapsed = Box<Duration?>(nil)
        BackgroundScheduler().schedule(after: .milliseconds(30)) { elapsed.value = ContinuousClock.now - start }
        #expect(waitUntil { elapsed.value != nil })
        #expect(elapsed.value! >= .milliseconds(30))
    }

    @Test func aMillionRecursiveStepsFinish() {
        let result = recurse(on: BackgroundScheduler(), steps: Workload.size(1_000_000))
        #expect(result.count == Workload.size(1_000_000))
        // Steps hop between pool threads, so stack addresses are not comparable; a million
        // nested frames would overflow any thread stack, so finishing is the proof.
    }
}

@Suite(.leakChecked, .offThePool) struct TestSchedulerTests {
    @Test func nothingRunsUntilTold() {
        let scheduler = TestScheduler()
        let ran = Box(false)
        scheduler.schedule { ran.value = true }
        #expect(!ran.value)
        scheduler.advance(by: .zero)
        #expect(ran.value)
    }

    @Test func advanceRunsWhatIsDueInTimeOrderAndMovesNow() {
        let scheduler = TestScheduler()
        let log = Box<[String]>([])
        scheduler.schedule(after: .milliseconds(20)) { log.mutate { $0.append("b@\(scheduler.now)") } }
        scheduler.schedule(after: .milliseconds(10)) { log.mutate { $0.append("a@\(scheduler.now)") } }
        scheduler.schedule(after: .milliseconds(30)) { log.mutate { $0.append("c") } }
        scheduler.advance(by: .milliseconds(25))
        #expect(log.value == ["a@0.01 seconds", "b@0.02 seconds"])
        #expect(scheduler.now == .milliseconds(25))
        scheduler.run()
        #expect(log.value.last == "c")
        #expect(scheduler.now == .milliseconds(30))
    }

    @Test func sameTimeActionsRunInSchedulingOrder() {
        let scheduler = TestScheduler()
        let log = Box<[Int]>([])
        for i in 0..<100 { scheduler.schedule(after: .milliseconds(5)) { log.mutate { $0.append(i) } } }
        scheduler.advance(by: .milliseconds(5))
        #expect(log.value == Array(0..<100))
    }

    @Test func cancellingBeforeTheDueTimeMeansItNeverRuns() {
        let scheduler = TestScheduler()
        let ran = Box(false)
        let d = scheduler.schedule(after: .seconds(1)) { ran.value = true }
        d.dispose()
        scheduler.run()
        #expect(!ran.value)
    }

    @Test func aMillionRecursiveStepsDoNotGrowTheStack() {
        let scheduler = TestScheduler()
        let result = recurse(on: scheduler, steps: Workload.size(1_000_000)) { scheduler.run() }
        #expect(result.count == Workload.size(1_000_000))
        #expect(result.stackGrowth < 4096)
    }

    @Test func canBeScheduledOnFromManyThreads() {
        let scheduler = TestScheduler()
        let count = Box(0)
        runConcurrently(threads: 4) { _ in
            for i in 0..<500 { scheduler.schedule(after: .milliseconds(i)) { count.mutate { $0 += 1 } } }
        }
        scheduler.run()
        #expect(count.value == 2_000)
    }
}

@Suite(.leakChecked, .offThePool) struct CurrentSchedulerTests {
    @Test func isNilOutsideAnyScheduler() {
        #expect(Schedulers.current == nil)
    }

    @Test func isTheRunningSchedulerInsideItsAction() {
        let immediate = Box(false)
        ImmediateScheduler.shared.schedule { immediate.value = Schedulers.current === ImmediateScheduler.shared }
        #expect(immediate.value)
        #expect(Schedulers.current == nil)

        let serial = SerialQueueScheduler(label: "test.current")
        let onSerial = Box<Bool?>(nil)
        serial.schedule { onSerial.value = Schedulers.current === serial }
        #expect(waitUntil { onSerial.value != nil })
        #expect(onSerial.value == true)

        let background = BackgroundScheduler()
        let onBackground = Box<Bool?>(nil)
        background.schedule { onBackground.value = Schedulers.current === background }
        #expect(waitUntil { onBackground.value != nil })
        #expect(onBackground.value == true)

        let test = TestScheduler()
        let onTest = Box(false)
        test.schedule { onTest.value = Schedulers.current === test }
        test.run()
        #expect(onTest.value)
    }

    @Test func nestedSchedulersRestoreTheOuterOne() {
        let test = TestScheduler()
        let seen = Box<[Bool]>([])
        test.schedule {
            ImmediateScheduler.shared.schedule { seen.mutate { $0.append(Schedulers.current === ImmediateScheduler.shared) } }
            seen.mutate { $0.append(Schedulers.current === test) }
        }
        test.run()
        #expect(seen.value == [true, true])
    }
}
