import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// How often `countingHandler` ran: the process's own SIGUSR1 handler in the tests below.
private let countingHandlerCalls = Atomic<Int>(0)

/// Unblocks SIGUSR1 and SIGUSR2 on the calling thread. The test runner's threads (and the
/// dispatch threads they start) block every signal; the kernel then delivers these two to
/// this thread, where the disposition in place decides what happens to them.
private func unblockUserSignals() {
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    sigaddset(&unblocked, SIGUSR1)
    sigaddset(&unblocked, SIGUSR2)
    pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
}

/// The handler address of `number`'s disposition (`SIG_DFL`, `SIG_IGN` or a function).
private func handlerAddress(_ number: Int32) -> Int {
    var action = sigaction()
    sigaction(number, nil, &action)
    return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
}

/// Sends `number` to this process and waits until `recorder` has received it `count` times.
private func send(_ number: Int32, until recorder: Recorder<Int32>, has count: Int) -> Bool {
    kill(getpid(), number)
    return waitUntil { recorder.values.count >= count }
}

/// A wrong disposition kills the process, so every scenario runs in a process of its own
/// (an exit test); a scenario that goes wrong without dying exits with a status naming the step.
/// Subscribing returns once the dispatch sources are registered, so each scenario sends its
/// signal right after subscribing, with no pause to guess at.
@Suite(.leakChecked) struct UnixSignalsSubscriptionTests {
    @Test func subscribingAgainAfterDisposingStillReceivesTheSignal() async {
        await #expect(processExitsWith: .success) {
            unblockUserSignals()
            for round in 1...3 {
                let recorder = Recorder<Int32>()
                let subscription = Signal.unixSignals(SIGUSR1).subscribe(recorder)
                if !send(SIGUSR1, until: recorder, has: 1) { exit(Int32(10 + round)) }
                subscription.dispose()
            }
        }
    }

    @Test func takeOneDisposesFromInsideTheCallbackAndTheNextSubscriptionStillReceives() async {
        await #expect(processExitsWith: .success) {
            unblockUserSignals()
            for round in 1...3 {
                let recorder = Recorder<Int32>()
                Signal.unixSignals(SIGUSR1).take(1).subscribe(recorder)  // disposes on the delivery queue
                if !send(SIGUSR1, until: recorder, has: 1) { exit(Int32(10 + round)) }
                if !waitUntil({ recorder.isCompleted }) { exit(Int32(20 + round)) }
            }
        }
    }

    @Test func disposingOneOfTwoSubscriptionsLeavesTheOtherReceiving() async {
        await #expect(processExitsWith: .success) {
            unblockUserSignals()
            let first = Recorder<Int32>(), second = Recorder<Int32>()
            let a = Signal.unixSignals(SIGUSR1).subscribe(first)
            let b = Signal.unixSignals(SIGUSR1, SIGUSR2).subscribe(second)
            if !send(SIGUSR1, until: second, has: 1) { exit(11) }
            if !waitUntil({ first.values == [SIGUSR1] }) { exit(12) }
            a.dispose()
            if !send(SIGUSR1, until: second, has: 2) { exit(13) }  // the process survives, b still hears it
            if first.values != [SIGUSR1] { exit(14) }
            // The other way round: a new subscription while b lives, then b disposed first.
            let third = Recorder<Int32>()
            let c = Signal.unixSignals(SIGUSR1).subscribe(third)
            b.dispose()
            if !send(SIGUSR1, until: third, has: 1) { exit(15) }
            c.dispose()
        }
    }

    @Test func disposingTheLastSubscriptionRestoresTheProcesssOwnHandler() async {
        await #expect(processExitsWith: .success) {
            unblockUserSignals()
            signal(SIGUSR1) { _ in countingHandlerCalls.add(1, ordering: .relaxed) }
            let ownHandler = handlerAddress(SIGUSR1)
            for round in 1...2 {
                let first = Recorder<Int32>(), second = Recorder<Int32>()
                let a = Signal.unixSignals(SIGUSR1).subscribe(first)
                let b = Signal.unixSignals(SIGUSR1).subscribe(second)
                if !send(SIGUSR1, until: second, has: 1) { exit(Int32(10 + round)) }
                a.dispose()
                b.dispose()
                if handlerAddress(SIGUSR1) != ownHandler { exit(Int32(20 + round)) }
                kill(getpid(), SIGUSR1)
                if !waitUntil({ countingHandlerCalls.load(ordering: .relaxed) == round }) { exit(Int32(30 + round)) }
            }
        }
    }

    @Test func disposingTheLastSubscriptionRestoresIgnoreAndTheDefault() async {
        await #expect(processExitsWith: .success) {
            unblockUserSignals()
            signal(SIGUSR2, SIG_IGN)
            for _ in 1...2 {
                let recorder = Recorder<Int32>()
                let subscription = Signal.unixSignals(SIGUSR1, SIGUSR2).subscribe(recorder)
                if !send(SIGUSR2, until: recorder, has: 1) { exit(11) }
                if !send(SIGUSR1, until: recorder, has: 2) { exit(12) }
                subscription.dispose()
                if handlerAddress(SIGUSR2) != unsafeBitCast(SIG_IGN, to: Int.self) { exit(13) }
                if handlerAddress(SIGUSR1) != unsafeBitCast(SIG_DFL, to: Int.self) { exit(14) }
                kill(getpid(), SIGUSR2)  // ignored again: the process lives on
            }
        }
    }
}

@Suite(.serialized, .leakChecked, .offThePool) struct LinesDisposalTests {
    /// A caller may close its descriptor once `dispose()` returns; the number is then free for
    /// an unrelated file, which the disposed reader must never read.
    @Test func afterDisposeReturnsNothingIsReadFromAnUnrelatedFileReusingTheDescriptor() throws {
        for round in 1...3 {
            let old = Pipe()
            let descriptor = old.fileHandleForReading.fileDescriptor
            let recorder = Recorder<String>()
            let subscription = Signal.lines(from: old.fileHandleForReading).subscribe(recorder)
            usleep(20_000)  // the reader is waiting for data
            subscription.dispose()
            // The caller closes the descriptor and an unrelated file takes its number, with data in it
            // (dup2 closes `descriptor` and reuses the number in one step).
            let unrelated = Pipe()
            let payload = Array("not yours\n".utf8)
            #expect(write(unrelated.fileHandleForWriting.fileDescriptor, payload, payload.count) == payload.count)
            #expect(dup2(unrelated.fileHandleForReading.fileDescriptor, descriptor) == descriptor)
            try old.fileHandleForWriting.close()  // the old pipe hangs up: wakes a reader still polling it
            usleep(200_000)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(descriptor, &buffer, buffer.count)
            #expect(count == payload.count, "round \(round): the disposed reader took the unrelated file's data")
            #expect(recorder.events.isEmpty)
        }
    }

    @Test func disposingFromInsideACallbackOnTheReaderThreadDoesNotWaitForItself() throws {
        let pipe = Pipe()
        let recorder = Recorder<String>()
        let subscription = SerialDisposable()
        let disposeReturned = Atomic<Bool>(false)
        subscription.disposable = Signal.lines(from: pipe.fileHandleForReading).subscribeNext { line in
            recorder.sendNext(line)
            subscription.dispose()  // from inside the callback, on the reader thread: must not wait for itself
            disposeReturned.store(true, ordering: .releasing)
        }
        pipe.fileHandleForWriting.write(Data("one\ntwo\n".utf8))
        #expect(waitUntil { disposeReturned.load(ordering: .acquiring) }, "dispose from the reader thread waited for itself")
        #expect(recorder.values == ["one"])
        // A second subscription to the same descriptor reads what the first left.
        let second = Recorder<String>()
        let secondSubscription = Signal.lines(from: pipe.fileHandleForReading).subscribe(second)
        pipe.fileHandleForWriting.write(Data("three\n".utf8))
        #expect(waitUntil { second.values.last == "three" })
        secondSubscription.dispose()
    }
}
