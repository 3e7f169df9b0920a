import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

/// `skip(until:)`, `take(last:)`, `take(while:inclusive:)`, `element(at:)`, `scan(into:_:)`,
/// `take(for:on:)` and `skip(for:on:)`.
@Suite(.leakChecked) struct SlicingTests {
    @Test func skipUntilDropsValuesUntilTheTriggersFirstValue() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-3-4-|")
        let trigger = clock.hot("----x-y")
        let r = clock.record(source.skip(until: trigger))
        clock.run()
        #expect(r.events == "-----3-4-|")
        #expect(trigger.subscriptions == ["^---!"], "the trigger's subscription ends with its first value")
        #expect(source.subscriptions == ["^--------!"])
    }

    @Test func skipUntilATriggerThatCompletesEmptyLetsNothingThrough() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-3-|").skip(until: clock.hot("--|")))
        clock.run()
        #expect(r.events == "-------|")
    }

    @Test func skipUntilForwardsTheSourcesCompletionBeforeTheTrigger() {
        let clock = TestScheduler()
        let trigger = clock.hot("----x")
        let r = clock.record(clock.hot("-1|").skip(until: trigger))
        clock.run()
        #expect(r.events == "--|")
        #expect(trigger.subscriptions == ["^-!"])
    }

    @Test func skipUntilForwardsTheTriggersError() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-3-|")
        let r = clock.record(source.skip(until: clock.hot("---#")))
        clock.run()
        #expect(r.events == "---#")
        #expect(source.subscriptions == ["^--!"])
    }

    /// A replay subject is not a `Signal`: its subscription is linked only once it returns, so
    /// its replayed error reaches the operator after the first value opened the gate. The
    /// trigger's work is done by then; its error is dropped.
    @Test func skipUntilIgnoresAnErrorTheTriggerSendsAfterItsFirstValue() {
        let trigger = ReplaySubject<Int>()
        trigger.sendNext(0)
        trigger.sendError(TestError())
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).skip(until: trigger).subscribe(r)
        #expect(r.events == [.next(1), .next(2), .next(3), .completed])
        let clock = TestScheduler()
        let late = clock.record(clock.hot("-1-2-3-|").skip(until: clock.hot("--x-#")))
        clock.run()
        #expect(late.events == "---2-3-|")
    }

    @Test func skipUntilATriggerThatSendsAtOnceLetsEverythingThrough() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).skip(until: Signal.just(0)).subscribe(r)
        #expect(r.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test func skipUntilDisposedLeavesNeitherSignalSubscribed() {
        let source = Subject<Int>(), trigger = Subject<Int>()
        let r = Recorder<Int>()
        let d = source.skip(until: trigger).subscribe(r)
        d.dispose()
        source.sendNext(1)
        trigger.sendNext(1)
        source.sendNext(2)
        #expect(r.events.isEmpty)
        #expect(source.storage.subscriberCount == 0)
        #expect(trigger.storage.subscriberCount == 0)
    }

    @Test func takeLastSendsTheLastValuesOnCompletion() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-3-4-|").take(last: 2))
        clock.run()
        #expect(r.events == [.next(90, "3"), .next(90, "4"), .completed(90)])
        let all = Recorder<Int>()
        Signal.from([1, 2]).take(last: 5).subscribe(all)
        #expect(all.events == [.next(1), .next(2), .completed])
        let none = Recorder<Int>()
        Signal.from([1, 2]).take(last: 0).subscribe(none)
        #expect(none.events == [.completed])
    }

    @Test func takeLastDropsWhatItHoldsOnError() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-#").take(last: 2))
        clock.run()
        #expect(r.events == "-----#")
    }

    @Test func takeLastHoldsAtMostCountValues() {
        let released = Box<[Int]>([])
        let source = Subject<Tracked>()
        let kept = Recorder<Tracked>()
        source.take(last: 2).subscribe(kept)
        for id in 0..<10 { source.sendNext(Tracked(id) { released.mutate { $0.append(id) } }) }
        #expect(released.value == Array(0..<8), "all but the last two were let go before the completion")
        source.sendCompleted()
        #expect(kept.values.map(\.id) == [8, 9])
        let r = Recorder<Int>()
        let n = Workload.size(100_000)
        Signal.from(0..<n).take(last: 3).subscribe(r)
        #expect(r.values == [n - 3, n - 2, n - 1])
    }

    @Test func takeWhileInclusiveSendsTheFirstFailingValueThenCompletes() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-5-1-|", values: ["1": 1, "2": 2, "5": 5])
        let r = clock.record(source.take(while: { $0 < 3 }, inclusive: true))
        clock.run()
        #expect(r.events == RecordedEvents("-1-2-(5|)", values: ["1": 1, "2": 2, "5": 5]))
        #expect(source.subscriptions == ["^----!"])
        let exclusive = Recorder<Int>()
        Signal.from([1, 2, 5, 1]).take(while: { $0 < 3 }, inclusive: false).subscribe(exclusive)
        #expect(exclusive.events == [.next(1), .next(2), .completed])
    }

    @Test func elementAtSendsTheValueAtTheIndexThenCompletes() {
        let clock = TestScheduler()
        let source = clock.hot("-a-b-c-d-|")
        let r = clock.record(source.element(at: 2))
        clock.run()
        #expect(r.events == "-----(c|)")
        #expect(source.subscriptions == ["^----!"])
    }

    @Test func elementAtFailsWhenTheSourceCompletesFirst() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-a-|").element(at: 2))
        clock.run()
        #expect(r.events == [.error(30, IndexOutOfRangeError(index: 2, count: 1))])
        #expect("\(IndexOutOfRangeError(index: 2, count: 1))" == "no value at index 2: the signal completed after 1 value")
        let failing = clock.record(Signal<Int>.error(TestError()).element(at: 0))
        #expect(failing.events.elements.map(\.event) == [.error(TestError())])
    }

    @Test func scanIntoUpdatesTheAccumulatorInPlaceAndSendsEachState() {
        let r = Recorder<[String: Int]>()
        Signal.from(["a", "b", "a"]).scan(into: [String: Int]()) { counts, word in counts[word, default: 0] += 1 }.subscribe(r)
        #expect(r.events == [.next(["a": 1]), .next(["a": 1, "b": 1]), .next(["a": 2, "b": 1]), .completed])
        // A copy-on-write accumulator: its storage is shared with the seed the signal keeps for
        // its next subscriber until the first update copies it; from then on, with a subscriber
        // that keeps nothing, the closure gets the operator's own accumulator, not a copy of it.
        var unique: [Bool] = []
        var totals: [Int] = []
        Signal.from(1...4).scan(into: CountingBox()) { box, value in
            unique.append(isKnownUniquelyReferenced(&box.storage))
            box.add(value)
        }.subscribeNext { totals.append($0.total) }
        #expect(totals == [1, 3, 6, 10])
        #expect(unique == [false, true, true, true])
        let failing = Recorder<Int>()
        Signal<Int>.error(TestError()).scan(into: 0) { $0 += $1 }.subscribe(failing)
        #expect(failing.events == [.error(TestError())])
    }

    @Test func takeForCompletesWhenTheDurationHasPassed() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-3-4-|")
        let r = clock.record(source.take(for: .milliseconds(40), on: clock))
        clock.run()
        #expect(r.events == "-1-2|")
        #expect(source.subscriptions == ["^---!"])
    }

    @Test func takeForEndingFirstCancelsItsTimer() {
        let clock = TestScheduler()
        let completing = clock.record(clock.hot("-1|").take(for: .milliseconds(100), on: clock))
        clock.run(until: .milliseconds(30))
        #expect(completing.events == "-1|")
        #expect(clock.nextDueTime == nil, "the timer was cancelled when the source completed")
        let failing = clock.record(Signal<Int>.error(TestError()).take(for: .milliseconds(100), on: clock))
        #expect(failing.events.elements.map(\.event) == [.error(TestError())])
        #expect(clock.nextDueTime == nil, "the timer was cancelled when the source failed")
    }

    @Test func takeForDisposedLeavesNothingScheduled() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        let d = source.take(for: .milliseconds(100), on: clock).subscribe(Recorder<Int>())
        clock.advance(by: .milliseconds(20))
        d.dispose()
        #expect(clock.livePendingCount == 0)
        #expect(source.storage.subscriberCount == 0)
    }

    @Test func skipForDropsTheValuesOfTheFirstDuration() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-3-4-|").skip(for: .milliseconds(40), on: clock))
        clock.run()
        #expect(r.events == "-----3-4-|")
        let early = clock.record(clock.hot("-1-#").skip(for: .milliseconds(40), on: clock))
        clock.run()
        #expect(early.events.elements.map(\.event) == [.error(MarbleError())])
    }

    @Test func skipForEndingOrDisposedLeavesNothingScheduled() {
        let clock = TestScheduler()
        let completing = clock.record(clock.hot("-1|").skip(for: .milliseconds(100), on: clock))
        clock.run(until: .milliseconds(30))
        #expect(completing.events == "--|")
        #expect(clock.nextDueTime == nil, "the timer was cancelled when the source completed")
        let source = Subject<Int>()
        let d = source.skip(for: .milliseconds(100), on: clock).subscribe(Recorder<Int>())
        d.dispose()
        #expect(clock.livePendingCount == 0)
        #expect(source.storage.subscriberCount == 0)
    }
}

/// A copy-on-write accumulator: its storage is a class, copied when shared, so a test sees
/// whether the accumulator it is handed is shared.
struct CountingBox {
    final class Storage {
        var total = 0
        init(total: Int = 0) { self.total = total }
    }
    var storage = Storage()
    var total: Int { storage.total }

    mutating func add(_ value: Int) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(total: storage.total) }
        storage.total += value
    }
}
