import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// SubscriberList's hand-managed buffer (growth, holes, compaction, shrink) against a model,
/// through Subject's public API, plus subscribes and disposes from callbacks and other threads.
@Suite(.offThePool) struct SubscriberListStressTests {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var got: [Int: [Int]] = [:]
        func add(_ id: Int, _ v: Int) { lock.lock(); got[id, default: []].append(v); lock.unlock() }
    }

    @Test func randomSubscribeDisposeMatchesAModel() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let subject = Subject<Int>()
            let log = Log()
            var live: [(Int, any Disposable)] = []
            var nextID = 0
            for step in 0..<2_000 {
                let r = Int.random(in: 0..<100, using: &rng)
                if r < 45 || live.isEmpty {
                    let id = nextID; nextID += 1
                    live.append((id, subject.subscribeNext { log.add(id, $0) }))
                } else if r < 90 {
                    let index = Int.random(in: 0..<live.count, using: &rng)
                    live.remove(at: index).1.dispose()
                } else {
                    // dispose a big batch: compaction and shrink
                    let keep = live.count / 8
                    while live.count > keep { live.removeLast().1.dispose() }
                }
                let value = round * 10_000 + step
                let expected = live.map(\.0)
                log.lock.lock(); log.got = [:]; log.lock.unlock()
                subject.sendNext(value)
                #expect(subject.storage.subscriberCount == live.count)
                let received = log.got
                #expect(received.count == expected.count)
                for id in expected where received[id] != [value] {
                    Issue.record("subscriber \(id) got \(String(describing: received[id])) for \(value)")
                    return
                }
            }
            for (_, d) in live { d.dispose() }
        }
    }

    @Test func callbacksThatSubscribeAndDisposeDuringAWalk() {
        let subject = Subject<Int>()
        let box = Box<[any Disposable]>([])
        let counter = Box(0)
        for _ in 0..<64 {
            box.value.append(subject.subscribeNext { [subject] value in
                counter.value += 1
                // each delivery: dispose one other subscription, add two
                if !box.value.isEmpty { box.value.removeFirst().dispose() }
                if box.value.count < 2_000 {
                    box.value.append(subject.subscribeNext { _ in counter.value += 1 })
                    box.value.append(subject.subscribeNext { _ in counter.value += 1 })
                }
            })
        }
        for value in 0..<200 { subject.sendNext(value) }
        subject.sendCompleted()
        #expect(subject.storage.subscriberCount == 0)
    }

    @Test func disposesFromOtherThreadsWhileSending() async {
        let subject = Subject<Int>()
        let subscriptions = (0..<4_000).map { _ in subject.subscribeNext { _ in } }
        let done = Atomic2()
        let sender = Thread {
            var v = 0
            while !done.value { subject.sendNext(v); v += 1 }
        }
        sender.start()
        await withTaskGroup(of: Void.self) { group in
            for part in 0..<4 {
                group.addTask {
                    for index in stride(from: part, to: subscriptions.count, by: 4) {
                        subscriptions[index].dispose()
                        if index % 7 == 0 { _ = subject.subscribeNext { _ in }.dispose() }
                    }
                }
            }
        }
        done.value = true
        while !sender.isFinished { usleep(1000) }
        subject.sendNext(0)
        #expect(subject.storage.subscriberCount == 0)
    }
}

final class Atomic2: @unchecked Sendable {
    private let lock = NSLock()
    private var v = false
    var value: Bool {
        get { lock.lock(); defer { lock.unlock() }; return v }
        set { lock.lock(); v = newValue; lock.unlock() }
    }
}
