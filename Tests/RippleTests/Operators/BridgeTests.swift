import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct AsyncBridgeTests {
    @Test func valuesIteratesEveryValueThenFinishes() async throws {
        var collected: [Int] = []
        for try await value in Signal.from([1, 2, 3]).values { collected.append(value) }
        #expect(collected == [1, 2, 3])
    }

    @Test func valuesThrowsTheSignalsError() async {
        await #expect(throws: TestError.self) {
            for try await _ in Signal<Int>.error(TestError()).values {}
        }
    }

    @Test func cancellingTheIteratingTaskDisposesTheUpstream() async {
        let disposed = Box(false)
        let subject = Subject<Int>()
        let upstream = Signal<Int> { s in
            CompoundDisposable([subject.subscribe(s), ActionDisposable { disposed.value = true }])
        }
        let task = Task {
            var count = 0
            for try await _ in upstream.values { count += 1 }
            return count
        }
        subject.sendNext(1)
        task.cancel()
        _ = try? await task.value
        #expect(await eventually { disposed.value })
    }

    @Test func theStreamEndsExactlyOnceUnderRacesOfCompletionErrorAndCancellation() async {
        for round in 0..<200 {
            let subject = Subject<Int>()
            let task = Task<Int, any Error> {
                var count = 0
                for try await _ in subject.values { count += 1 }
                return count
            }
            let racers: [@Sendable () -> Void] = [
                { subject.sendCompleted() },
                { subject.sendError(TestError()) },
                { task.cancel() },
                { subject.sendNext(round) },
            ]
            DispatchQueue.concurrentPerform(iterations: racers.count) { racers[$0]() }
            let result = await task.result
            switch result {
            case .success(let count): #expect(count <= 1)
            case .failure: break
            }
        }
    }

    @Test func signalFromAnAsyncSequenceSendsItsElementsThenCompletes() async {
        let stream = AsyncStream<Int> { continuation in
            for i in 1...3 { continuation.yield(i) }
            continuation.finish()
        }
        let r = Recorder<Int>()
        Signal(sequence: stream).subscribe(r)
        #expect(await eventually { r.isCompleted })
        #expect(r.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test func signalFromAnAsyncSequenceForwardsItsError() async {
        let stream = AsyncThrowingStream<Int, any Error> { continuation in
            continuation.yield(1)
            continuation.finish(throwing: TestError())
        }
        let r = Recorder<Int>()
        Signal(sequence: stream).subscribe(r)
        #expect(await eventually { r.isFailed })
        #expect(r.events == [.next(1), .error(TestError())])
    }

    @Test func disposingASignalFromAnAsyncSequenceCancelsItsTask() async {
        let terminated = Box(false)
        let stream = AsyncStream<Int> { continuation in
            continuation.onTermination = { _ in terminated.value = true }
            continuation.yield(1)
        }
        let r = Recorder<Int>()
        let d = Signal(sequence: stream).subscribe(r)
        #expect(await eventually { !r.values.isEmpty })
        d.dispose()
        #expect(await eventually { terminated.value })
    }
}

@Suite(.leakChecked, .offThePool) struct BlockingBridgeTests {
    @Test func waitUntilCompletedReturnsOnceASignalOnAnotherThreadCompletes() throws {
        let signal = Signal.from([1, 2]).delay(.milliseconds(20), on: BackgroundScheduler())
        try signal.waitUntilCompleted(timeout: .seconds(Workload.hangLimit))
    }

    @Test func waitUntilCompletedThrowsTheSignalsError() {
        #expect(throws: TestError.self) {
            try Signal<Int>.error(TestError()).delay(.milliseconds(5), on: BackgroundScheduler())
                .waitUntilCompleted(timeout: .seconds(Workload.hangLimit))
        }
    }

    @Test func waitUntilCompletedTimesOutAndDisposes() {
        let disposed = Box(false)
        let never = Signal<Int> { _ in ActionDisposable { disposed.value = true } }
        #expect(throws: TimeoutError.self) { try never.waitUntilCompleted(timeout: .milliseconds(30)) }
        #expect(disposed.value)
    }

    @Test func firstReturnsTheFirstValueOrNil() {
        let background = SerialQueueScheduler(label: "first")
        #expect(Signal.from([7, 8]).subscribe(on: background).first(timeout: .seconds(Workload.hangLimit)) == 7)
        #expect(Signal<Int>.never.first(timeout: .milliseconds(20)) == nil)
        #expect(Signal<Int>.empty.first(timeout: .seconds(1)) == nil)
        #expect(Signal<Int>.error(TestError()).first(timeout: .seconds(1)) == nil)
    }

    @Test func firstDisposesTheSourceOnTimeoutAndKeepsAValueFollowedByAnError() {
        let disposed = Box(false)
        let never = Signal<Int> { _ in ActionDisposable { disposed.value = true } }
        #expect(never.first(timeout: .milliseconds(30)) == nil)
        #expect(disposed.value)
        let valueThenError = Signal<Int> { subscriber in
            subscriber.sendNext(5)
            subscriber.sendError(TestError())
            return nil
        }
        #expect(valueThenError.first(timeout: .seconds(1)) == 5)
    }

    /// `first` over a synchronous source stops it after the first value, as `take(1)` does,
    /// rather than running it to its end before looking at what arrived.
    @Test func firstStopsASynchronousSourceAfterItsFirstValue() {
        let pulled = Box(0)
        let value = Box<Int?>(nil)
        let returned = finishes("first over a billion-element source") {
            value.value = Signal.from(0..<1_000_000_000)
                .map { element in pulled.mutate { $0 += 1 }; return element + 1 }
                .first(timeout: .seconds(5))
        }
        #expect(returned)
        #expect(value.value == 1)
        #expect(pulled.value == 1)
    }
}
