import Foundation
import Testing
import RippleTestSupport

/// The test-support trait that keeps blocking suites off Swift's cooperative pool.
@Suite(.offThePool) struct OffThePoolTests {
    @Test func aTestUnderTheTraitRunsOnAThreadNamedAfterItWithAnEightMegabyteStack() {
        #expect(DedicatedThreadExecutor.currentName == "aTestUnderTheTraitRunsOnAThreadNamedAfterItWithAnEightMegabyteStack()")
        #expect(Thread.current.stackSize >= 8 << 20)
    }

    @Test func childTasksOfSuchATestRunOnItsThreadInTheOrderTheyWereQueued() async {
        let name = threadName()
        #expect(name == "childTasksOfSuchATestRunOnItsThreadInTheOrderTheyWereQueued()")
        let threads = Log<String?>()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask { threads.append(threadName()) } }
        }
        #expect(threads.all == [name, name, name])
    }
}

/// A list appended to from child tasks.
private final class Log<Element: Sendable>: Sendable {
    private let list = Locked<[Element]>([])
    func append(_ element: Element) { list.withLock { $0.append(element) } }
    var all: [Element] { list.withLock { $0 } }
}

/// The current thread's name (`Thread.current` is not available in async code).
private func threadName() -> String? { DedicatedThreadExecutor.currentName }

@Suite struct DedicatedThreadExecutorTests {
    @Test func itRunsJobsInOrderThenItsThreadEndsAfterFinish() async {
        let executor = DedicatedThreadExecutor(name: "dedicated")
        let order = Log<Int>()
        weak let weakExecutor = executor
        await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Void.self) { group in
                for i in 0..<10 { group.addTask { order.append(i) } }
            }
        }
        #expect(order.all == Array(0..<10))
        executor.finish()
        _ = consume executor
        // The thread holds the executor until it ends: once it is gone, so is the thread.
        #expect(await eventually { weakExecutor == nil })
    }

    @Test func aJobThatComesAfterFinishRunsOnTheGlobalExecutor() async {
        let executor = DedicatedThreadExecutor(name: "finished")
        executor.finish()
        let ranOn = await withTaskExecutorPreference(executor) { threadName() }
        #expect(ranOn == nil)
    }
}
