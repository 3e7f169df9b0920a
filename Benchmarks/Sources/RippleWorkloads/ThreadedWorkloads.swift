import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import Ripple
import Synchronization

// MARK: deliver-serial

/// Operation = one value delivered on a serial queue, timed until the last one arrives; the
/// floor is one `DispatchQueue.async` per value.
enum DeliverSerial {
    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { count in
            let queue = SerialQueueScheduler(label: "bench.ripple")
            return Iteration(operations: count) {
                let done = DispatchSemaphore(value: 0)
                let subject = Ripple.Subject<Int>()
                let accumulator = Accumulator()
                let subscription = subject.deliver(on: queue).subscribeNext { value in
                    accumulator.total &+= 1
                    if value == count - 1 { done.signal() }
                }
                for value in 0..<count { subject.sendNext(value) }
                done.wait()
                subscription.dispose()
            }
        }),
        (System.openCombine, { count in
            let queue = DispatchQueue(label: "bench.opencombine")
            return Iteration(operations: count) {
                let done = DispatchSemaphore(value: 0)
                let subject = PassthroughSubject<Int, Never>()
                let accumulator = Accumulator()
                let subscription = subject.receive(on: queue.ocombine).sink { value in
                    accumulator.total &+= 1
                    if value == count - 1 { done.signal() }
                }
                for value in 0..<count { subject.send(value) }
                done.wait()
                subscription.cancel()
            }
        }),
        (System.floor, { count in
            let queue = DispatchQueue(label: "bench.floor")
            return Iteration(operations: count) { asyncEach(count, on: queue) }
        }),
    ]
}

// MARK: actor-hop

/// Operation = one value sent from a plain thread to a subscription made inside an actor,
/// delivered on that actor (one job per batch), timed until the last one arrives; the floor is
/// one `DispatchQueue.async` per value onto a serial queue.
enum ActorHop {
    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { count in
            Iteration(operations: count) {
                let done = DispatchSemaphore(value: 0)
                let subject = Ripple.Subject<Int>()
                let sink = HopSink()
                let bound = DispatchSemaphore(value: 0)
                Task {
                    await sink.bind(subject, last: count - 1) { done.signal() }
                    bound.signal()
                }
                bound.wait()
                for value in 0..<count { subject.sendNext(value) }
                done.wait()
                subject.sendCompleted()
            }
        }),
        (System.floor, { count in
            let queue = DispatchQueue(label: "bench.actor-hop.floor")
            return Iteration(operations: count) { asyncEach(count, on: queue) }
        }),
    ]
}

/// The actor of `actor-hop`: its subscription is made in its own method, so it runs on it.
actor HopSink {
    var total = 0
    private var subscription: (any Disposable)?

    func bind(_ subject: Ripple.Subject<Int>, last: Int, _ finished: @escaping @Sendable () -> Void) {
        subscription = subject.subscribeNext { value in
            self.total &+= value
            if value == last { finished() }
        }
    }
}

/// The serial-delivery floor: one `DispatchQueue.async` per value onto `queue`, until the last
/// one has run.
private func asyncEach(_ count: Int, on queue: DispatchQueue) {
    let done = DispatchSemaphore(value: 0)
    let accumulator = Accumulator()
    for value in 0..<count {
        queue.async {
            accumulator.total &+= 1
            if value == count - 1 { done.signal() }
        }
    }
    done.wait()
}

// MARK: contended-send, contended-send-4, contended-send-8

/// `threads` threads send to one subject with 10 subscribers at once; operation = one value
/// delivered to one subscriber. Every run checks that every subscriber received every value
/// sent so far (a miscount stops the process: the figure would be of the wrong work). The
/// threads are started at set-up (`SenderThreads`) and the check allocates nothing, so what the
/// measured part allocates is the sends'.
///
/// Ripple serializes deliveries, so its subscribers count with plain integers (a lost update
/// would show as a miscount); the floor delivers under a lock. OpenCombine's
/// `PassthroughSubject` delivers concurrently, so its subscribers count atomically.
enum ContendedSend {
    static let subscribers = 10

    static func systems(threads: Int) -> [(String, @Sendable (Int) -> Iteration)] {
        [
            (System.ripple, { operations in
                let perThread = max(1, operations / (threads * subscribers))
                let subject = Ripple.Subject<Int>()
                let counters = UncheckedBox([Int](repeating: 0, count: subscribers))
                let subscriptions = (0..<subscribers).map { index in subject.subscribeNext { _ in counters.value[index] &+= 1 } }
                let box = UncheckedBox(subject)
                let senders = SenderThreads(threads) { for value in 0..<perThread { box.value.sendNext(value) } }
                let runs = UncheckedBox(0)
                return Iteration(operations: perThread * threads * subscribers) {
                    withExtendedLifetime(subscriptions) { senders.run() }
                    runs.value += 1
                    verify(threads, System.ripple, counters.value, expected: runs.value * perThread * threads)
                }
            }),
            (System.openCombine, { operations in
                let perThread = max(1, operations / (threads * subscribers))
                let passthrough = PassthroughSubject<Int, Never>()
                let counters = (0..<subscribers).map { _ in AtomicCounter() }
                let subscriptions = (0..<subscribers).map { index in
                    passthrough.sink { _ in counters[index].value.wrappingAdd(1, ordering: .relaxed) }
                }
                let box = UncheckedBox(passthrough)
                let senders = SenderThreads(threads) { for value in 0..<perThread { box.value.send(value) } }
                let runs = UncheckedBox(0)
                return Iteration(operations: perThread * threads * subscribers) {
                    withExtendedLifetime(subscriptions) { senders.run() }
                    runs.value += 1
                    let expected = runs.value * perThread * threads
                    if !counters.allSatisfy({ $0.value.load(ordering: .relaxed) == expected }) {
                        verify(threads, System.openCombine, counters.map { $0.value.load(ordering: .relaxed) }, expected: expected)
                    }
                }
            }),
            (System.floor, { operations in
                let perThread = max(1, operations / (threads * subscribers))
                let lock = NSLock()
                let counters = UncheckedBox([Int](repeating: 0, count: subscribers))
                let closures = UncheckedBox((0..<subscribers).map { index -> (Int) -> Void in { _ in counters.value[index] &+= 1 } })
                let senders = SenderThreads(threads) {
                    for value in 0..<perThread {
                        lock.lock()
                        for closure in closures.value { closure(value) }
                        lock.unlock()
                    }
                }
                let runs = UncheckedBox(0)
                return Iteration(operations: perThread * threads * subscribers) {
                    senders.run()
                    runs.value += 1
                    verify(threads, System.floor, counters.value, expected: runs.value * perThread * threads)
                }
            }),
        ]
    }

    /// The workload's name for `threads` senders.
    private static func name(_ threads: Int) -> String { threads == 2 ? "contended-send" : "contended-send-\(threads)" }

    /// Stops the process unless every subscriber's running count is `expected`. It runs inside
    /// the measured part, so it allocates nothing unless it fails (the benchmark's name, a
    /// String too long to be stored inline, is only made then).
    private static func verify(_ threads: Int, _ system: String, _ received: [Int], expected: Int) {
        guard received.allSatisfy({ $0 == expected }) else {
            fatalError("\(name(threads))/\(system): each subscriber should have received \(expected) values so far, received \(received)")
        }
    }
}

/// `count` threads, started at set-up, that each run `body` once per `run()`, all at once.
/// Starting threads inside the measured part would count their creation (~10 mallocs and tens
/// of microseconds each) as the sends' cost.
final class SenderThreads: @unchecked Sendable {
    private let starts: [DispatchSemaphore]
    private let finished = DispatchSemaphore(value: 0)

    init(_ count: Int, _ body: @escaping @Sendable () -> Void) {
        starts = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        for start in starts {
            let finished = finished
            // Parked between runs; they live as long as the benchmark's process.
            Thread {
                while true {
                    start.wait()
                    body()
                    finished.signal()
                }
            }.start()
        }
    }

    /// Runs `body` on every thread at once and returns when all have finished.
    func run() {
        for start in starts { start.signal() }
        for _ in starts { finished.wait() }
    }
}

// MARK: idle-subscriptions

/// Operation = one idle subscription created (and, at the end of the run, released), 100,000 on
/// one subject; `bytesPerSubscription` is the heap they hold, per subscription (the array
/// holding them included, for every system), as glibc counts it (`mallinfo2().uordblks`).
enum IdleSubscriptions {
    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { count in
            bytesPerSubscription(count) { _ in
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                return (subject, (0..<count).map { _ in subject.subscribeNext { accumulator.total &+= $0 } })
            }
        }),
        (System.openCombine, { count in
            bytesPerSubscription(count) { _ in
                let accumulator = Accumulator()
                let subject = PassthroughSubject<Int, Never>()
                return (subject, (0..<count).map { _ in subject.sink { accumulator.total &+= $0 } })
            }
        }),
        (System.floor, { count in
            bytesPerSubscription(count) { _ in
                let accumulator = Accumulator()
                return (0..<count).map { _ -> (Int) -> Void in { accumulator.total &+= $0 } }
            }
        }),
    ]

    /// An iteration that runs `make` (creating `count` subscriptions) and records the live-byte
    /// delta around it, divided by `count`. What `prepare` makes first (the observations' owners)
    /// is left out of the bytes, not out of the iteration's allocations and time.
    static func bytesPerSubscription(_ count: Int, prepare: @escaping () -> Any = { () },
                                     _ make: @escaping (Any) -> Any) -> Iteration {
        let last = UncheckedBox(0.0)
        return Iteration(operations: count, run: {
            let prepared = prepare()
            let before = HeapBytes.now()
            let alive = make(prepared)
            let after = HeapBytes.now()
            last.value = after.bytesSince(before) / Double(count)
            withExtendedLifetime((prepared, alive)) {}
        }, metrics: { [Suite.bytesPerSubscriptionMetric: [Int(last.value.rounded())]] })
    }
}

// MARK: idle-observations

/// Operation = one idle `observe(owner:)` observation created (and, at the end of the run,
/// released), 100,000 on one subject, each with an owner of its own. The owners are made in
/// `prepare`, inside the iteration: left out of `bytesPerSubscription` (the heap is read after
/// them), but their one allocation each is in allocs/op and their making and freeing in the time,
/// for Ripple and the floor alike. (Made at set-up instead, their weak-reference side tables
/// would be counted in the first iteration only.) `bytesPerSubscription` is everything the
/// observation holds — its subject subscription, the disposable it returns, the closure holding
/// the owner weakly, the owner's side table, the subject's record of it — plus, as in
/// `idle-subscriptions`, the benchmark's array of what it returns (40 bytes an `any Disposable`;
/// the floor's array, 16 bytes a closure) and the spare room of the growing buffers.
enum IdleObservations {
    final class Owner {}

    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { count in
            IdleSubscriptions.bytesPerSubscription(count, prepare: { (0..<count).map { _ in Owner() } }) { prepared in
                let owners = prepared as! [Owner]
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                return (subject, owners.map { owner in subject.observe(owner: owner) { _, value in accumulator.total &+= value } })
            }
        }),
        (System.floor, { count in
            IdleSubscriptions.bytesPerSubscription(count, prepare: { (0..<count).map { _ in Owner() } }) { prepared in
                let owners = prepared as! [Owner]
                let accumulator = Accumulator()
                return owners.map { owner -> (Int) -> Void in
                    { [weak owner] value in if owner != nil { accumulator.total &+= value } }
                }
            }
        }),
    ]
}

/// A counter shared by threads that deliver concurrently (OpenCombine's subscribers).
final class AtomicCounter: Sendable {
    let value = Atomic<Int>(0)
}
