import Foundation
import Synchronization
import Testing
import RippleTestSupport

/// Runs `body` on a thread of its own and waits for it to return, at most `Workload.hangLimit`
/// (or `seconds`, if longer).
///
/// A call that does not return by then — a thread trapped delivering someone else's work for
/// good, or a deadlock — becomes a recorded failure naming `what` and the last `progress` the
/// body reported, instead of a hung test process; the stuck thread is left behind. The limit is
/// a guard, not a measure of speed: on a busy machine the thread may wait seconds for a core.
/// Returns whether it finished.
@discardableResult
func finishes(
    within seconds: Double? = nil, _ what: String, progress: Progress? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Void
) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = 1 << 20
    thread.start()
    let limit = hangLimit(atLeast: seconds)
    if done.wait(timeout: .now() + limit) == .success { return true }
    let step = progress.map { ", stuck after step \($0.steps)" } ?? ""
    Issue.record("\(what) did not return within \(limit) s\(step): a trapped or deadlocked thread", sourceLocation: sourceLocation)
    return false
}

/// How far a watched body got: it calls `advance()` after each step.
final class Progress: Sendable {
    private let counter = Atomic<Int>(0)
    var steps: Int { counter.load(ordering: .relaxed) }
    func advance() { counter.add(1, ordering: .relaxed) }
}

/// Records what one subscription receives, from any thread, and checks completeness: every
/// accepted value exactly once, each sender's values in its order, callbacks never overlapping,
/// exactly one terminal event, last.
final class CompletenessRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []
    private var terminals = 0
    private var afterTerminal = 0
    private let overlap = OverlapDetector()

    func next(_ value: Int) {
        overlap.enter()
        lock.withLock {
            if terminals > 0 { afterTerminal += 1 }
            values.append(value)
        }
        overlap.leave()
    }

    func terminal() {
        overlap.enter()
        lock.withLock { terminals += 1 }
        overlap.leave()
    }

    var terminalCount: Int { lock.withLock { terminals } }
    var received: [Int] { lock.withLock { values } }

    /// Checks the record against what was sent: `sent[s]` are sender `s`'s accepted values, in
    /// order (values must be unique across senders); `terminated` says whether a terminal event
    /// was accepted.
    func expectComplete(sent: [[Int]], terminated: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let (values, terminals, afterTerminal) = lock.withLock { (self.values, self.terminals, self.afterTerminal) }
        #expect(overlap.overlapCount == 0, "callbacks overlapped", sourceLocation: sourceLocation)
        #expect(terminals == (terminated ? 1 : 0), "terminal events: \(terminals)", sourceLocation: sourceLocation)
        #expect(afterTerminal == 0, "\(afterTerminal) values after the terminal event", sourceLocation: sourceLocation)
        let expected = sent.flatMap { $0 }
        #expect(values.count == expected.count && Set(values) == Set(expected),
                "every accepted value exactly once: got \(values.count) of \(expected.count)", sourceLocation: sourceLocation)
        var position: [Int: Int] = [:]
        for (index, value) in values.enumerated() { position[value] = index }
        for (sender, sentValues) in sent.enumerated() {
            let order = sentValues.compactMap { position[$0] }
            #expect(order == order.sorted(), "sender \(sender)'s order", sourceLocation: sourceLocation)
        }
    }
}
