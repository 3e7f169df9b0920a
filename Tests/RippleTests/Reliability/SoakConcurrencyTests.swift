import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// Checks one subscriber's events as they arrive: the grammar, no overlap, and each sender's order.
final class GrammarChecker: @unchecked Sendable {
    private let lock = NSLock()
    private let overlap = OverlapDetector()
    private var lastFromSender: [Int: Int] = [:]
    private(set) var values = 0
    private(set) var terminals = 0
    private(set) var violations: [String] = []

    func next(_ value: Int) {
        overlap.enter()
        defer { overlap.leave() }
        lock.withLock {
            if terminals > 0 { violations.append("value \(value) after a terminal event") }
            let sender = value / 10_000_000, sequence = value % 10_000_000
            if let last = lastFromSender[sender], sequence <= last { violations.append("sender \(sender): \(sequence) after \(last)") }
            lastFromSender[sender] = sequence
            values += 1
        }
    }

    func terminal() {
        overlap.enter()
        defer { overlap.leave() }
        lock.withLock {
            terminals += 1
            if terminals > 1 { violations.append("a second terminal event") }
        }
    }

    var overlaps: Int { overlap.overlapCount }
    var snapshot: (values: Int, terminals: Int, violations: [String]) { lock.withLock { (values, terminals, violations) } }
}

@Suite(.leakChecked) struct SoakConcurrencyTests {
    /// Bounded in time (two seconds of sending, at most 5,000 values per sender and 300 churned subscriptions): many threads subscribe, dispose, send and complete on shared subjects
    /// and on `deliver(on:)` chains across all schedulers for a few seconds, then every
    /// subscriber's events are checked.
    @Test func manyThreadsSubscribingDisposingAndSendingKeepEveryPromise() {
        let duration: TimeInterval = 2
        let maximumPerSender = 5_000
        let senders = 4
        let subjects: [(signal: any SignalProtocol<Int>, input: any SubscriberProtocol<Int>)] = [
            { let s = Subject<Int>(); return (s, s) }(),
            { let s = BehaviorSubject(0); return (s, s) }(),
            { let s = ReplaySubject<Int>(capacity: 16); return (s, s) }(),
        ]
        let schedulers: [any Scheduler] = [ImmediateScheduler.shared, SerialQueueScheduler(label: "soak"), BackgroundScheduler()]

        // Live subscribers: subscribed before any send, never disposed: every value, exactly once, in sender order.
        var live: [(subject: Int, checker: GrammarChecker)] = []
        for (index, subject) in subjects.enumerated() {
            for scheduler in [nil] + schedulers.map(Optional.some) {
                let checker = GrammarChecker()
                let signal = scheduler.map { subject.signal.deliver(on: $0) } ?? subject.signal.asSignal()
                signal.subscribe(next: { if $0 != 0 { checker.next($0) } }, error: { _ in checker.terminal() },
                                 completed: { checker.terminal() })
                live.append((index, checker))
            }
        }
        let churned = Box<[GrammarChecker]>([])
        let sent = Box<[Int]>(Array(repeating: 0, count: subjects.count))
        let deadline = Date().addingTimeInterval(duration)

        runConcurrently(threads: senders + 2) { thread in
            var random = SeededGenerator(seed: UInt64(thread + 1))
            if thread < senders {
                var sequence = 0
                while sequence < maximumPerSender && Date() < deadline {
                    sequence += 1
                    let value = (thread + 1) * 10_000_000 + sequence
                    for subject in subjects { subject.input.sendNext(value) }
                }
                sent.mutate { counts in for index in counts.indices { counts[index] += sequence } }
            } else {
                var subscriptions = 0
                while subscriptions < 150 && Date() < deadline {
                    subscriptions += 1
                    let subject = subjects[Int(random.next() % 3)]
                    let scheduler = schedulers[Int(random.next() % 3)]
                    let checker = GrammarChecker()
                    churned.mutate { $0.append(checker) }
                    let signal = Bool.random(using: &random) ? subject.signal.deliver(on: scheduler) : subject.signal.asSignal()
                    let d = signal.subscribe(next: { if $0 != 0 { checker.next($0) } }, error: { _ in checker.terminal() },
                                             completed: { checker.terminal() })
                    if Bool.random(using: &random) { d.dispose() }
                }
            }
        }
        for subject in subjects { subject.input.sendCompleted() }
        #expect(waitUntil(timeout: 30) { live.allSatisfy { $0.checker.snapshot.terminals == 1 } })

        for (index, checker) in live {
            let result = checker.snapshot
            #expect(result.violations.isEmpty, "\(result.violations.prefix(3))")
            #expect(result.values == sent.value[index], "subject \(index): every value exactly once")
            #expect(checker.overlaps == 0)
        }
        for checker in churned.value {
            let result = checker.snapshot
            #expect(result.violations.isEmpty, "\(result.violations.prefix(3))")
            #expect(checker.overlaps == 0)
        }
    }
}
