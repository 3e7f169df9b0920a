import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// Checks one subscriber's events as they arrive: the grammar, no overlap, and each sender's
/// order without a gap (a subscriber sees a contiguous run of each sender's values, whenever it
/// joined or left). A value is `sender * 10_000_000 + sequence`, sequences counting from 1.
final class GrammarChecker: @unchecked Sendable {
    private let lock = NSLock()
    private let overlap = OverlapDetector()
    private var runs: [Int: (first: Int, last: Int)] = [:]
    private(set) var values = 0
    private(set) var terminals = 0
    private(set) var violations: [String] = []

    func next(_ value: Int) {
        overlap.enter()
        defer { overlap.leave() }
        lock.withLock {
            if terminals > 0 { violations.append("value \(value) after a terminal event") }
            let sender = value / 10_000_000, sequence = value % 10_000_000
            if let run = runs[sender] {
                if sequence <= run.last { violations.append("sender \(sender): \(sequence) after \(run.last)") }
                else if sequence != run.last + 1 { violations.append("sender \(sender): \(sequence) after \(run.last), a gap") }
                runs[sender] = (run.first, sequence)
            } else {
                runs[sender] = (sequence, sequence)
            }
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
    var snapshot: (values: Int, terminals: Int, violations: [String], runs: [Int: (first: Int, last: Int)]) {
        lock.withLock { (values, terminals, violations, runs) }
    }
}

@Suite(.leakChecked, .offThePool) struct SoakConcurrencyTests {
    /// Bounded in time (two seconds of sending, at most 5,000 values per sender and 300 churned
    /// subscriptions): many threads subscribe, dispose, send and complete on shared subjects
    /// and on `deliver(on:)` chains across all schedulers, under a watchdog (every send and
    /// subscribe returns), then every subscriber's events are checked: live subscribers get
    /// every value exactly once and one completion, last; churned ones a gapless run of each
    /// sender's values, and — if kept — up to its last value and the completion.
    @Test func manyThreadsSubscribingDisposingAndSendingKeepEveryPromise() {
        let duration: TimeInterval = 2
        let maximumPerSender = 5_000
        let senders = 4
        let subjects: [(signal: any SignalProtocol<Int> & Sendable, input: any SubscriberProtocol<Int> & Sendable)] = [
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
        let churned = Box<[(checker: GrammarChecker, kept: Bool)]>([])
        // The values each sender (1...senders) sent to every subject: 1...sent[sender].
        let sent = Box<[Int: Int]>([:])
        let deadline = Date().addingTimeInterval(duration)

        let step = Progress()
        // The senders and churners (step 0), then each subject's completion (steps 1-3), all return.
        let returned = finishes("the soak's threads, then the completions", progress: step) {
            runConcurrently(threads: senders + 2) { thread in
                var random = SeededGenerator(seed: UInt64(thread + 1))
                if thread < senders {
                    var sequence = 0
                    while sequence < maximumPerSender && Date() < deadline {
                        sequence += 1
                        let value = (thread + 1) * 10_000_000 + sequence
                        for subject in subjects { subject.input.sendNext(value) }
                    }
                    sent.mutate { $0[thread + 1] = sequence }
                } else {
                    var subscriptions = 0
                    while subscriptions < 150 && Date() < deadline {
                        subscriptions += 1
                        let subject = subjects[Int(random.next() % 3)]
                        let scheduler = schedulers[Int(random.next() % 3)]
                        let checker = GrammarChecker()
                        let signal = Bool.random(using: &random) ? subject.signal.deliver(on: scheduler) : subject.signal.asSignal()
                        let d = signal.subscribe(next: { if $0 != 0 { checker.next($0) } }, error: { _ in checker.terminal() },
                                                 completed: { checker.terminal() })
                        let kept = Bool.random(using: &random)
                        if !kept { d.dispose() }
                        churned.mutate { $0.append((checker, kept)) }
                    }
                }
            }
            step.advance()
            for subject in subjects {
                subject.input.sendCompleted()
                step.advance()
            }
        }
        let kept = churned.value.filter(\.kept).map(\.checker)
        #expect(waitUntil { (live.map(\.checker) + kept).allSatisfy { $0.snapshot.terminals == 1 } },
                "a live or kept subscriber's completion never arrived")

        let sentBySender = sent.value
        let total = sentBySender.values.reduce(0, +)
        if returned { #expect(sentBySender.count == senders, "every sender finished") }
        for (index, checker) in live {
            let result = checker.snapshot
            #expect(result.violations.isEmpty, "\(result.violations.prefix(3))")
            #expect(result.values == total, "subject \(index): every value exactly once")
            #expect(result.terminals == 1, "subject \(index): one completion")
            for (sender, count) in sentBySender where count > 0 {
                let run = result.runs[sender]
                #expect(run?.first == 1 && run?.last == count,
                        "subject \(index), sender \(sender): got \(String(describing: run)) of 1...\(count)")
            }
            #expect(checker.overlaps == 0)
        }
        for (checker, kept) in churned.value {
            let result = checker.snapshot
            #expect(result.violations.isEmpty, "\(result.violations.prefix(3))")
            #expect(checker.overlaps == 0)
            if kept {
                // Subscribed (and kept) before the completion: each sender's run goes on to its last value.
                #expect(result.terminals == 1)
                for (sender, run) in result.runs {
                    #expect(run.last == sentBySender[sender], "a kept subscriber's run of sender \(sender) stops at \(run.last)")
                }
            }
        }
    }
}
