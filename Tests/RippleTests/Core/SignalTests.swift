import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct SignalTests {
    @Test func coldSignalRunsItsClosureOncePerSubscription() {
        var runs = 0
        let signal = Signal<Int> { subscriber in
            runs += 1
            subscriber.sendNext(runs)
            subscriber.sendCompleted()
            return nil
        }
        let first = Recorder<Int>(), second = Recorder<Int>()
        signal.subscribe(first)
        signal.subscribe(second)
        #expect(runs == 2)
        #expect(first.events == [.next(1), .completed])
        #expect(second.events == [.next(2), .completed])
    }

    @Test func nothingIsDeliveredAfterCompleted() {
        let recorder = Recorder<Int>()
        Signal<Int> { subscriber in
            subscriber.sendNext(1)
            subscriber.sendCompleted()
            subscriber.sendNext(2)
            subscriber.sendError(TestError())
            subscriber.sendCompleted()
            return nil
        }.subscribe(recorder)
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test func nothingIsDeliveredAfterError() {
        let recorder = Recorder<Int>()
        Signal<Int> { subscriber in
            subscriber.sendNext(1)
            subscriber.sendError(TestError("first"))
            subscriber.sendNext(2)
            subscriber.sendCompleted()
            subscriber.sendError(TestError("second"))
            return nil
        }.subscribe(recorder)
        #expect(recorder.events == [.next(1), .error(TestError("first"))])
    }

    @Test func nothingIsDeliveredAfterDispose() {
        var send: ((Int) -> Void)?
        let recorder = Recorder<Int>()
        let disposable = Signal<Int> { subscriber in
            send = { subscriber.sendNext($0) }
            return nil
        }.subscribe(recorder)
        send?(1)
        disposable.dispose()
        send?(2)
        #expect(recorder.events == [.next(1)])
        #expect(disposable.isDisposed)
    }

    @Test func closuresWithoutSendableCaptureALocalVar() {
        var seen: [Int] = []
        var done = false
        Signal.from([1, 2, 3]).subscribe(next: { seen.append($0) }, completed: { done = true })
        #expect(seen == [1, 2, 3])
        #expect(done)
    }

    @Test(arguments: ["completed", "error", "dispose"])
    func theClosuresDisposableRunsExactlyOnce(ending: String) {
        var cleanups = 0
        var subscriberRef: (any SubscriberProtocol<Int>)?
        let signal = Signal<Int> { subscriber in
            subscriberRef = subscriber
            return ActionDisposable { cleanups += 1 }
        }
        let disposable = signal.subscribe(next: { _ in })
        switch ending {
        case "completed": subscriberRef?.sendCompleted()
        case "error": subscriberRef?.sendError(TestError())
        default: disposable.dispose()
        }
        #expect(cleanups == 1)
        subscriberRef?.sendCompleted()
        subscriberRef?.sendError(TestError())
        disposable.dispose()
        disposable.dispose()
        #expect(cleanups == 1)
        #expect(disposable.isDisposed)
    }

    @Test func cleanupOfASynchronouslyCompletedSignalRunsOnceAfterSubscribeReturns() {
        var cleanups = 0
        let disposable = Signal<Int> { subscriber in
            subscriber.sendCompleted()
            return ActionDisposable { cleanups += 1 }
        }.subscribe(next: { _ in })
        #expect(cleanups == 1)  // added to an already-disposed compound: disposed at once
        #expect(disposable.isDisposed)
    }

    @Test func disposingInsideNextStopsDeliveryAtOnce() {
        var received: [Int] = []
        var producerSawDisposed = false
        var downstream: (any SubscriberProtocol<Int>)?
        let disposable = Signal<Int> { subscriber in
            downstream = subscriber
            return nil
        }.subscribe(next: { _ in })
        var disposableRef: (any Disposable)?
        let signal = Signal<Int> { subscriber in
            downstream = subscriber
            return nil
        }
        disposableRef = signal.subscribe(next: { value in
            received.append(value)
            if value == 2 { disposableRef?.dispose() }
        })
        for value in 1...5 {
            if downstream?.isDisposed == true { producerSawDisposed = true; break }
            downstream?.sendNext(value)
        }
        #expect(received == [1, 2])
        #expect(producerSawDisposed)
        disposable.dispose()
    }

    @Test func aSubscriberDisposingItselfBeforeSubscribeReturnsStopsTheProducer() {
        var received: [Int] = []
        var subscriber: Subscriber<Int>?
        subscriber = Subscriber<Int>(next: { value in
            received.append(value)
            if value == 3 { subscriber?.dispose() }
        })
        var produced = 0
        Signal<Int> { downstream in
            while !downstream.isDisposed && produced < 1000 {
                produced += 1
                downstream.sendNext(produced)
            }
            return nil
        }.subscribe(subscriber!)
        #expect(received == [1, 2, 3])
        #expect(produced == 3)
    }

    @Test func longRunningProducerSeesIsDisposed() {
        let flags = Box<[Bool]>([])
        let held = Box<PassthroughSubscriber<Int>?>(nil)
        let d = Signal<Int> { subscriber in
            flags.mutate { $0.append(subscriber.isDisposed) }
            held.value = subscriber  // a producer that keeps working after subscribe returns
            return nil
        }.subscribe(next: { _ in })
        if let subscriber = held.value { flags.mutate { $0.append(subscriber.isDisposed) } }
        d.dispose()
        if let subscriber = held.value { flags.mutate { $0.append(subscriber.isDisposed) } }
        #expect(flags.value == [false, false, true], "the producer sees the disposal")
        held.value = nil
    }

    @Test func factoriesSendWhatTheySay() {
        let just = Recorder<Int>(), empty = Recorder<Int>(), never = Recorder<Int>()
        let failed = Recorder<Int>(), from = Recorder<Int>()
        Signal.just(1).subscribe(just)
        Signal<Int>.empty.subscribe(empty)
        let neverSubscription = Signal<Int>.never.subscribe(never)
        defer { neverSubscription.dispose() }
        Signal<Int>.error(TestError()).subscribe(failed)
        Signal.from([1, 2, 3]).subscribe(from)
        #expect(just.events == [.next(1), .completed])
        #expect(empty.events == [.completed])
        #expect(never.events.isEmpty)
        #expect(failed.events == [.error(TestError())])
        #expect(from.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test func subscribeNextAndAsSignalWork() {
        var values: [Int] = []
        let signal = Signal.from([4, 5]).asSignal()
        signal.subscribeNext { values.append($0) }
        #expect(values == [4, 5])
    }

    @Test func everySubscribeLabelIsOptional() {
        var errors = 0
        Signal<Int>.error(TestError()).subscribe(error: { _ in errors += 1 })
        Signal<Int>.just(1).subscribe()
        Signal<Int>.empty.subscribe(completed: {})
        #expect(errors == 1)
    }
}

