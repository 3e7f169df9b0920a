import Testing
@testable import Ripple
import RippleTestSupport

/// The rules every subject shares (ReactiveObjC's RACSubscriberExamples): one suite, run
/// against all three kinds.
enum SubjectKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case subject, behavior, replay
    var testDescription: String { rawValue }

    func make() -> (signal: any SignalProtocol<Int> & Sendable, subscriber: any SubscriberProtocol<Int> & Sendable) {
        switch self {
        case .subject: let s = Subject<Int>(); return (s, s)
        case .behavior: let s = BehaviorSubject(0); return (s, s)
        case .replay: let s = ReplaySubject<Int>(); return (s, s)
        }
    }

    /// What a subscriber joining before any send receives first.
    var initial: [Event<Int>] { self == .behavior ? [.next(0)] : [] }
}

@Suite(.leakChecked) struct SubjectContractTests {
    @Test(arguments: SubjectKind.allCases)
    func liveValuesReachEverySubscriberInOrder(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let a = Recorder<Int>(), b = Recorder<Int>()
        signal.subscribe(a)
        signal.subscribe(b)
        input.sendNext(1)
        input.sendNext(2)
        input.sendCompleted()
        #expect(a.events == kind.initial + [.next(1), .next(2), .completed])
        #expect(b.events == a.events)
    }

    @Test(arguments: SubjectKind.allCases)
    func nothingFollowsATerminalEvent(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let r = Recorder<Int>()
        signal.subscribe(r)
        input.sendError(TestError())
        input.sendNext(1)
        input.sendCompleted()
        input.sendError(TestError("again"))
        #expect(r.events == kind.initial + [.error(TestError())])
    }

    @Test(arguments: SubjectKind.allCases)
    func aDisposedSubscriptionGetsNothingMoreAndIsRemovedAtOnce(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let r = Recorder<Int>()
        let d = signal.subscribe(r)
        input.sendNext(1)
        d.dispose()
        input.sendNext(2)
        #expect(r.events == kind.initial + [.next(1)])
        #expect(d.isDisposed)
        #expect(subscriberCount(signal) == 0)
    }

    @Test(arguments: SubjectKind.allCases)
    func aSubjectMulticastsAColdSignal(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let a = Recorder<Int>(), b = Recorder<Int>()
        signal.subscribe(a)
        signal.subscribe(b)
        Signal.from([1, 2]).subscribe(input)
        #expect(a.events == kind.initial + [.next(1), .next(2), .completed])
        #expect(b.events == a.events)
    }

    @Test(arguments: SubjectKind.allCases)
    func sendingFromInsideASubscriberKeepsSendOrderForEverySubscriber(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let first = Recorder<Int>(), second = Recorder<Int>()
        signal.subscribeNext { value in
            first.sendNext(value)
            if value == 1 { input.sendNext(2); input.sendNext(3) }
        }
        signal.subscribe(second)
        input.sendNext(1)
        let expectedInitial = kind == .behavior ? [0] : []
        #expect(first.values == expectedInitial + [1, 2, 3])
        #expect(second.values == expectedInitial + [1, 2, 3])
        input.sendCompleted()  // the first closure captures the subject that holds it
    }

    @Test(arguments: SubjectKind.allCases)
    func aCallbackMaySubscribeDisposeAndCompleteWithoutDeadlock(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let late = Recorder<Int>()
        var other: (any Disposable)?
        let otherRecorder = Recorder<Int>()
        var selfDisposable: (any Disposable)?
        var seen: [Int] = []
        selfDisposable = signal.subscribeNext { value in
            seen.append(value)
            if value == 1 {
                signal.subscribe(late)
                other?.dispose()
                input.sendNext(2)
            }
            if value == 2 {
                selfDisposable?.dispose()
                input.sendCompleted()
            }
        }
        other = signal.subscribe(otherRecorder)
        input.sendNext(1)
        input.sendNext(3)
        let initial = kind == .behavior ? [0] : []
        #expect(seen == initial + [1, 2])
        #expect(otherRecorder.values == initial)  // disposed before its turn for 1: nothing more
        switch kind {
        case .subject: #expect(late.events == [.next(2), .completed])
        case .behavior: #expect(late.events == [.next(1), .next(2), .completed])
        case .replay: #expect(late.events == [.next(1), .next(2), .completed])
        }
    }

    @Test(arguments: SubjectKind.allCases)
    func everySubscriberIsReleasedWhenTheSubjectCompletes(kind: SubjectKind) {
        let (signal, input) = kind.make()
        for _ in 0..<10 { signal.subscribeNext { _ in } }
        #expect(subscriberCount(signal) == 10)
        input.sendCompleted()
        #expect(subscriberCount(signal) == 0)
    }

    @Test(arguments: SubjectKind.allCases)
    func aDisposedSubscriptionReleasesItsClosuresAtOnce(kind: SubjectKind) {
        final class Captured {}
        weak var weakCaptured: Captured?
        let (signal, _) = kind.make()
        let d: any Disposable
        do {
            let captured = Captured()
            weakCaptured = captured
            d = signal.subscribeNext { _ in _ = captured }
        }
        #expect(weakCaptured != nil)
        d.dispose()
        #expect(weakCaptured == nil)  // released though `d` is still held
    }

    @Test(arguments: SubjectKind.allCases)
    func aFinishedSubscriptionReleasesItsClosures(kind: SubjectKind) {
        final class Captured {}
        weak var weakCaptured: Captured?
        let (signal, input) = kind.make()
        var d: (any Disposable)?
        do {
            let captured = Captured()
            weakCaptured = captured
            d = signal.subscribe(next: { _ in _ = captured }, completed: { _ = captured })
        }
        input.sendCompleted()
        #expect(weakCaptured == nil)
        #expect(d?.isDisposed == true)
    }

    @Test(arguments: SubjectKind.allCases)
    func subscribeAndDisposeStayO1WithManySubscribers(kind: SubjectKind) {
        let (signal, input) = kind.make()
        var disposables = (0..<10_000).map { _ in signal.subscribeNext { _ in } }
        // Dispose in a scattered order; the list compacts and keeps subscription order.
        for index in stride(from: 0, to: 10_000, by: 2) { disposables[index].dispose() }
        #expect(subscriberCount(signal) == 5_000)
        let order = Box<[Int]>([])
        for i in 0..<3 { signal.subscribeNext { _ in order.mutate { $0.append(i) } } }
        input.sendNext(1)
        #expect(order.value.suffix(3) == [0, 1, 2])
        disposables.forEach { $0.dispose() }
        disposables.removeAll()
        #expect(subscriberCount(signal) == 3)
    }
}

func subscriberCount(_ signal: any SignalProtocol<Int>) -> Int {
    switch signal {
    case let s as Subject<Int>: return s.storage.subscriberCount
    case let s as BehaviorSubject<Int>: return s.storage.subscriberCount
    case let s as ReplaySubject<Int>: return s.storage.subscriberCount
    default: return -1
    }
}
