import CRippleThread
import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// The lock-discipline check and the sanitizer hooks of Ripple's `Lock`.
@Suite(.leakChecked) struct LockDisciplineTests {
    #if DEBUG
    @Test func userCodeReachedUnderARippleLockStopsWithAMessageNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = Lock(0)
            lock.withLock { _ in RippleDebug.checkNoLockHeld("a test's callback") }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a test's callback called while this thread holds 1 Ripple lock(s)"))
    }

    @Test func userCodeReachedWhileAWakeIsOwedStopsWithAMessageNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TurnWaiter.ofCurrentThread.expectsWake = true  // as after queueing an owned entry
            RippleDebug.checkNoLockHeld("a test's callback")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a test's callback called between queueing an owned entry and waiting for it"))
    }

    @Test func aThreadThatOwesNoWaitPassesTheCheck() {
        #expect(!TurnWaiter.currentThreadOwesAWait)
        RippleDebug.checkNoLockHeld("nothing")  // does not stop
    }

    @Test func aLockCountsItselfOnlyWhileHeldAndOnlyOnItsThread() {
        let lock = Lock(0)
        #expect(ripple_locks_held_add(0) == 0)
        let inside = lock.withLock { _ in ripple_locks_held_add(0) }
        #expect(inside == 1)
        #expect(ripple_locks_held_add(0) == 0)
        RippleDebug.checkNoLockHeld("nothing")  // does not stop
    }
    #endif

    @Test func theThreadSanitizerHooksAreFoundExactlyWhenItsRuntimeIsInTheProcess() {
        let runtime = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire") != nil
        #expect((ripple_runs_under_tsan() != 0) == runtime)
    }
}
