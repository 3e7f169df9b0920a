import AsyncAlgorithms
import Dispatch
import Observation
import Synchronization

// The Swift-native peers, written as their users write them: a producer yielding into an
// `AsyncStream` shared with swift-async-algorithms' `share()` and consumer tasks iterating it
// (`fanout-1/10/1000`), a value handed through an `AsyncChannel` (`deliver-latency`), an
// `AsyncStream` iterated inside an actor (`actor-hop`), and `@Observable` state followed through
// Observation's `Observations` (`behavior-fanout-10`). Their consumers are tasks on Swift's
// cooperative pool; the run itself waits on a semaphore, as package-benchmark's own async
// benchmarks do. Every value is checked where it arrives (a wrong or missing one stops the
// process: the figure would be of other work).

/// Counts the parties that reached the end of a run; the last one wakes whoever waits. Reset
/// before it wakes, so the next run counts from zero (no party can arrive again before the
/// waiter has started the next run).
final class RunBarrier: Sendable {
    private let parties: Int
    private let arrived = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(parties: Int) { self.parties = parties }

    func arrive() {
        if arrived.add(1, ordering: .acquiringAndReleasing).newValue == parties {
            arrived.store(0, ordering: .releasing)
            done.signal()
        }
    }

    func wait() { done.wait() }

    /// Waits until every party arrived or `timeout` passed; false if it passed.
    func wait(timeout: DispatchTime) -> Bool { done.wait(timeout: timeout) == .success }
}

// MARK: fanout-N

/// One producer (the run's thread) yields into an `AsyncStream`; `stream.share()` (its default
/// policy, `.bounded(1)`: the source is read one value ahead of the slowest consumer) feeds N
/// consumer tasks, each `for await`-ing it. Operation = one value delivered to one consumer.
/// The consumers live for the whole benchmark, as Ripple's subscriptions do; each checks that it
/// receives every value, in order, and the run returns when every consumer has the run's last
/// value. A run performs a tenth of the workload's operations (10,000 deliveries in a full run):
/// at 10–15 µs a delivery, 100,000 take over a second, and package-benchmark's jmh export drops
/// a benchmark of less than one iteration per second.
enum AsyncShareFanout {
    static func system(subscribers: Int) -> (String, @Sendable (Int) -> Iteration) {
        (System.asyncStreamShare, { operations in
            let sends = max(1, operations / 10 / subscribers)
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
            let shared = stream.share()
            let barrier = RunBarrier(parties: subscribers)
            for _ in 0..<subscribers {
                Task {
                    // `for await value in shared`, spelled out so the consumer says when it has
                    // joined: `share()` hands a late consumer only the values after it joined.
                    var values = shared.makeAsyncIterator()
                    barrier.arrive()
                    var expected = 0
                    while let value = await values.next(isolation: #isolation) {
                        guard value == expected else {
                            fatalError("fanout-\(subscribers)/\(System.asyncStreamShare): a consumer received \(value), expected \(expected)")
                        }
                        expected += 1
                        if expected % sends == 0 { barrier.arrive() }
                    }
                }
            }
            barrier.wait()  // every consumer has joined
            let produced = UncheckedBox(0)
            return Iteration(operations: sends * subscribers) {
                let first = produced.value
                for value in first..<first + sends { continuation.yield(value) }
                produced.value = first + sends
                barrier.wait()
            }
        })
    }
}

// MARK: deliver-latency

/// One value handed from a producer task to a consumer task through an `AsyncChannel` (its
/// `send` suspends until the consumer takes the value); the latency runs from just before
/// `send` to the consumer's first instruction with the value. One value in flight at a time:
/// the producer awaits the consumer's acknowledgement (a second `AsyncChannel`, outside the
/// measured latency) before the next send, as the other systems wait for the callback.
enum ChannelLatency {
    static let system: (String, @Sendable (Int) -> Iteration) = (System.asyncChannel, { count in
        let values = AsyncChannel<Int>()
        let acknowledgements = AsyncChannel<Void>()
        let samples = UncheckedBox([Int]())
        samples.value.reserveCapacity(count)
        Task {
            for await sent in values {
                samples.value.append(nanoseconds() - sent)
                await acknowledgements.send(())
            }
        }
        return Iteration(operations: count, run: {
            samples.value.removeAll(keepingCapacity: true)
            let done = DispatchSemaphore(value: 0)
            Task {
                var acknowledged = acknowledgements.makeAsyncIterator()
                for _ in 0..<count {
                    await values.send(nanoseconds())
                    guard await acknowledged.next() != nil else { fatalError("deliver-latency/\(System.asyncChannel): the consumer ended") }
                }
                done.signal()
            }
            done.wait()
            guard samples.value.count == count else {
                fatalError("deliver-latency/\(System.asyncChannel): \(samples.value.count) values arrived of \(count)")
            }
        }, metrics: { [Suite.latencyMetric: samples.value] })
    })
}

// MARK: actor-hop

/// One of `count` values yielded from a plain thread into an `AsyncStream` (unbounded buffer,
/// its default) that an actor iterates in one of its methods, so each value arrives on the
/// actor; timed until the last one arrives. A new stream and actor per run, as Ripple's side
/// makes a new subject and actor.
enum StreamActorHop {
    static let system: (String, @Sendable (Int) -> Iteration) = (System.asyncStream, { count in
        Iteration(operations: count) {
            let done = DispatchSemaphore(value: 0)
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
            let sink = StreamHopSink()
            Task { await sink.consume(stream, last: count - 1) { done.signal() } }
            for value in 0..<count { continuation.yield(value) }
            done.wait()
            continuation.finish()
        }
    })
}

/// The actor of `actor-hop`'s `AsyncStream` side: it iterates the stream in its own method.
actor StreamHopSink {
    var total = 0

    func consume(_ values: AsyncStream<Int>, last: Int, _ finished: @Sendable () -> Void) async {
        var expected = 0
        for await value in values {
            guard value == expected else { fatalError("actor-hop/\(System.asyncStream): received \(value), expected \(expected)") }
            expected += 1
            total &+= value
            if value == last { finished() }
        }
    }
}

// MARK: behavior-fanout-10

/// A state value that 10 observers follow through Observation's `Observations`, each in a task
/// of its own (`for await value in Observations { state.value }`), against Ripple's
/// `BehaviorSubject` with 10 subscribers. The run's thread sets the value `sends` times; the run
/// ends when every observer has seen the last one. `Observations` coalesces: an observer sees
/// the value current when it gets to run, not every value set, so it sees fewer values than
/// were set. Operation = one value set, per observer (the work offered, as Ripple's operation
/// is); `Suite.deliveredMetric` records the distinct values the observers actually saw. Each
/// observer checks that what it sees never falls and that it sees the run's last value.
///
/// On Swift 6.3.1 an observer can miss a change: in one full run an observer never received a
/// run's last value (set on another thread, likely while the observer was setting up its next
/// observation), and the run waited for ever. So the run waits 1 ms at a time and, when the last
/// value has not reached every observer by then, sets it again (observers that already had it
/// see it again and ignore it); `Suite.resetsMetric` counts those re-sets — a lost change, or a
/// delivery slower than 1 ms. The waits are in the measured time.
enum ObservationsState {
    static let observers = 10

    static let system: (String, @Sendable (Int) -> Iteration) = (System.observations, { operations in
        let sends = max(1, operations / observers)
        let state = ObservedState()
        let barrier = RunBarrier(parties: observers)
        let delivered = AtomicCounter()
        for _ in 0..<observers {
            Task {
                var last = -1
                var seen = 0
                for await value in Observations({ state.value }) {
                    // A value can come twice (a change observed between its willSet and its
                    // didSet): seen once, counted once.
                    guard value >= last else {
                        fatalError("behavior-fanout-10/\(System.observations): an observer saw \(value) after \(last)")
                    }
                    guard value > last else { continue }
                    if last >= 0 { seen += 1 }  // the initial value is not a change
                    last = value
                    if value % sends == 0 {  // the initial value (0), or the last of a run
                        delivered.value.add(seen, ordering: .relaxed)
                        seen = 0
                        barrier.arrive()
                    }
                }
            }
        }
        barrier.wait()  // every observer has seen the initial value: it is tracking
        _ = delivered.value.exchange(0, ordering: .relaxed)
        let lastSeen = UncheckedBox(0), resets = UncheckedBox(0)
        return Iteration(operations: sends * observers, run: {
            let first = state.value
            for value in first + 1...first + sends { state.value = value }
            resets.value = 0
            while !barrier.wait(timeout: .now() + .milliseconds(1)) {
                state.value = first + sends  // an observer missed the last change: make it again
                resets.value += 1
            }
            lastSeen.value = delivered.value.exchange(0, ordering: .relaxed)
        }, metrics: { [Suite.deliveredMetric: [lastSeen.value], Suite.resetsMetric: [resets.value]] })
    })
}

/// The observed state: an `@Observable` class whose value sits behind a lock, so it can be set
/// on one thread and read by observers on others (`Sendable`), the way Swift 6 code shares
/// observable state outside the main actor.
@Observable
final class ObservedState: Sendable {
    @ObservationIgnored private let storage = Mutex(0)

    var value: Int {
        get {
            access(keyPath: \.value)
            return storage.withLock { $0 }
        }
        set {
            withMutation(keyPath: \.value) { storage.withLock { $0 = newValue } }
        }
    }
}
