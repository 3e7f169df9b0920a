import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import Ripple

/// Where subscribers add what they receive, so no delivery can be optimized away.
final class Accumulator: @unchecked Sendable {
    var total = 0
}

/// The workloads of the suite. `scale` divides every size (`--quick` uses 100); `fixedSize`
/// (`--operations`) replaces every size.
struct Workloads {
    let scale: Int
    var fixedSize: Int? = nil
    private func size(_ n: Int) -> Int { fixedSize ?? max(1, n / scale) }

    // MARK: 1. fanout-N

    /// One hot subject, `subscribers` subscribers; operation = one value delivered to one subscriber.
    func fanout(_ subscribers: Int) -> Workload {
        let sends = max(1, size(1_000_000) / subscribers)
        let operations = sends * subscribers
        let accumulator = Accumulator()

        let subject = Ripple.Subject<Int>()
        let rippleSubscriptions = (0..<subscribers).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }

        let passthrough = PassthroughSubject<Int, Never>()
        let combineSubscriptions = (0..<subscribers).map { _ in passthrough.sink { accumulator.total &+= $0 } }

        let center = NotificationCenter()
        let name = Notification.Name("fanout")
        let observers = (0..<subscribers).map { _ in
            center.addObserver(forName: name, object: nil, queue: nil) { note in accumulator.total &+= note.object as! Int }
        }

        let closures: [(Int) -> Void] = (0..<subscribers).map { _ in { accumulator.total &+= $0 } }

        return Workload(name: "fanout-\(subscribers)", systems: [
            (System.ripple, {
                withExtendedLifetime(rippleSubscriptions) { for value in 0..<sends { subject.sendNext(value) } }
                return operations
            }),
            (System.openCombine, {
                withExtendedLifetime(combineSubscriptions) { for value in 0..<sends { passthrough.send(value) } }
                return operations
            }),
            (System.notificationCenter, {
                withExtendedLifetime(observers) { for value in 0..<sends { center.post(name: name, object: value) } }
                return operations
            }),
            (System.floor, {
                for value in 0..<sends { for closure in closures { closure(value) } }
                return operations
            }),
        ])
    }

    // MARK: 2. behavior-fanout-10

    func behaviorFanout() -> Workload {
        let subscribers = 10
        let sends = size(1_000_000) / subscribers
        let accumulator = Accumulator()
        let behavior = BehaviorSubject(0)
        let rippleSubscriptions = (0..<subscribers).map { _ in behavior.subscribeNext { accumulator.total &+= $0 } }
        let current = CurrentValueSubject<Int, Never>(0)
        let combineSubscriptions = (0..<subscribers).map { _ in current.sink { accumulator.total &+= $0 } }
        let closures: [(Int) -> Void] = (0..<subscribers).map { _ in { accumulator.total &+= $0 } }
        var latest = 0
        return Workload(name: "behavior-fanout-10", systems: [
            (System.ripple, {
                withExtendedLifetime(rippleSubscriptions) { for value in 0..<sends { behavior.sendNext(value) } }
                return sends * subscribers
            }),
            (System.openCombine, {
                withExtendedLifetime(combineSubscriptions) { for value in 0..<sends { current.send(value) } }
                return sends * subscribers
            }),
            (System.floor, {
                for value in 0..<sends {
                    latest = value
                    for closure in closures { closure(latest) }
                }
                return sends * subscribers
            }),
        ])
    }

    // MARK: 3. replay-send, replay-subscribe

    func replaySend() -> Workload {
        let sends = size(1_000_000)
        let accumulator = Accumulator()
        let replay = ReplaySubject<Int>(capacity: 100)
        let subscription = replay.subscribeNext { accumulator.total &+= $0 }
        var ring = [Int](repeating: 0, count: 100)
        var head = 0
        let closure: (Int) -> Void = { accumulator.total &+= $0 }
        return Workload(name: "replay-send", systems: [
            (System.ripple, {
                withExtendedLifetime(subscription) { for value in 0..<sends { replay.sendNext(value) } }
                return sends
            }),
            (System.floor, {
                for value in 0..<sends {
                    ring[head] = value
                    head = (head + 1) % 100
                    closure(value)
                }
                return sends
            }),
        ])
    }

    /// Operation = one late subscriber joining a full ReplaySubject(capacity: 100) (and leaving).
    func replaySubscribe() -> Workload {
        let joins = size(100_000)
        let accumulator = Accumulator()
        let replay = ReplaySubject<Int>(capacity: 100)
        for value in 0..<1_000 { replay.sendNext(value) }
        let ring = Array(900..<1_000)
        return Workload(name: "replay-subscribe", systems: [
            (System.ripple, {
                for _ in 0..<joins { replay.subscribeNext { accumulator.total &+= $0 }.dispose() }
                return joins
            }),
            (System.floor, {
                for _ in 0..<joins {
                    let closure: (Int) -> Void = { accumulator.total &+= $0 }
                    let copy = ring
                    for value in copy { closure(value) }
                }
                return joins
            }),
        ])
    }

    // MARK: 4. cold-pipeline

    func coldPipeline() -> Workload {
        let count = size(1_000_000)
        let accumulator = Accumulator()
        return Workload(name: "cold-pipeline", systems: [
            (System.ripple, {
                Signal.from(0..<count).map { $0 &* 3 }.filter { $0 % 2 == 0 }.scan(0, &+)
                    .subscribeNext { accumulator.total &+= $0 }
                return count
            }),
            (System.openCombine, {
                _ = Publishers.Sequence<Range<Int>, Never>(sequence: 0..<count).map { $0 &* 3 }.filter { $0 % 2 == 0 }
                    .scan(0, &+).sink { accumulator.total &+= $0 }
                return count
            }),
            (System.floor, {
                var sum = 0
                for value in 0..<count {
                    let tripled = value &* 3
                    if tripled % 2 == 0 {
                        sum &+= tripled
                        accumulator.total &+= sum
                    }
                }
                return count
            }),
        ])
    }

    // MARK: 5. subscribe-dispose

    /// Operation = one subscribe plus its dispose, on a subject already holding `live` subscribers.
    func subscribeDispose(live: Int) -> Workload {
        let pairs = size(200_000)
        let accumulator = Accumulator()
        let subject = Ripple.Subject<Int>()
        let rippleLive = (0..<live).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }
        let passthrough = PassthroughSubject<Int, Never>()
        let combineLive = (0..<live).map { _ in passthrough.sink { accumulator.total &+= $0 } }
        var closures: [(Int) -> Void] = (0..<live).map { _ in { accumulator.total &+= $0 } }
        return Workload(name: "subscribe-dispose-\(live)", systems: [
            (System.ripple, {
                withExtendedLifetime(rippleLive) {
                    for _ in 0..<pairs { subject.subscribeNext { accumulator.total &+= $0 }.dispose() }
                }
                return pairs
            }),
            (System.openCombine, {
                withExtendedLifetime(combineLive) {
                    for _ in 0..<pairs { passthrough.sink { accumulator.total &+= $0 }.cancel() }
                }
                return pairs
            }),
            (System.floor, {
                for _ in 0..<pairs {
                    closures.append { accumulator.total &+= $0 }
                    closures.removeLast()
                }
                return pairs
            }),
        ])
    }

    // MARK: 6. deliver-serial

    /// Operation = one value delivered on a serial queue; timed until the last one arrives.
    func deliverSerial() -> Workload {
        let count = size(1_000_000)
        let rippleQueue = SerialQueueScheduler(label: "bench.ripple")
        let combineQueue = DispatchQueue(label: "bench.opencombine")
        let floorQueue = DispatchQueue(label: "bench.floor")
        return Workload(name: "deliver-serial", systems: [
            (System.ripple, {
                let done = DispatchSemaphore(value: 0)
                let subject = Ripple.Subject<Int>()
                let accumulator = Accumulator()
                let subscription = subject.deliver(on: rippleQueue).subscribeNext { value in
                    accumulator.total &+= 1
                    if value == count - 1 { done.signal() }
                }
                for value in 0..<count { subject.sendNext(value) }
                done.wait()
                subscription.dispose()
                return count
            }),
            (System.openCombine, {
                let done = DispatchSemaphore(value: 0)
                let subject = PassthroughSubject<Int, Never>()
                let accumulator = Accumulator()
                let subscription = subject.receive(on: combineQueue.ocombine).sink { value in
                    accumulator.total &+= 1
                    if value == count - 1 { done.signal() }
                }
                for value in 0..<count { subject.send(value) }
                done.wait()
                subscription.cancel()
                return count
            }),
            (System.floor, { asyncEach(count, on: floorQueue) }),
        ])
    }

    // MARK: 6b. actor-hop

    /// Operation = one value sent from a plain thread to a subscription made inside an actor,
    /// delivered on that actor (one job per batch); timed until the last one arrives. The
    /// floor is one `DispatchQueue.async` per value onto a serial queue.
    func actorHop() -> Workload {
        let count = size(1_000_000)
        let floorQueue = DispatchQueue(label: "bench.actor-hop.floor")
        return Workload(name: "actor-hop", systems: [
            (System.ripple, {
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
                return count
            }),
            (System.floor, { asyncEach(count, on: floorQueue) }),
        ])
    }

    // MARK: 7. contended-send

    /// Two threads each send `size(500_000)` values to one subject with 10 subscribers;
    /// operation = one value delivered to one subscriber.
    func contendedSend() -> Workload {
        let perThread = size(500_000)
        let subscribers = 10
        let operations = 2 * perThread * subscribers
        let accumulator = Accumulator()
        let subject = Ripple.Subject<Int>()
        let rippleSubscriptions = (0..<subscribers).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }
        let passthrough = PassthroughSubject<Int, Never>()
        let combineSubscriptions = (0..<subscribers).map { _ in passthrough.sink { accumulator.total &+= $0 } }
        let lock = NSLock()
        let closures: [(Int) -> Void] = (0..<subscribers).map { _ in { accumulator.total &+= $0 } }
        let floorClosures = UncheckedBox(closures)
        func twoThreads(_ body: @escaping @Sendable () -> Void) {
            let group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                Thread { body(); group.leave() }.start()
            }
            group.wait()
        }
        let rippleBox = UncheckedBox(subject), combineBox = UncheckedBox(passthrough)
        return Workload(name: "contended-send", systems: [
            (System.ripple, {
                withExtendedLifetime(rippleSubscriptions) {
                    twoThreads { for value in 0..<perThread { rippleBox.value.sendNext(value) } }
                }
                return operations
            }),
            (System.openCombine, {
                withExtendedLifetime(combineSubscriptions) {
                    twoThreads { for value in 0..<perThread { combineBox.value.send(value) } }
                }
                return operations
            }),
            (System.floor, {
                twoThreads {
                    for value in 0..<perThread {
                        lock.lock()
                        for closure in floorClosures.value { closure(value) }
                        lock.unlock()
                    }
                }
                return operations
            }),
        ])
    }

    // MARK: 8. idle-subscriptions

    func idleSubscriptions(harness: Harness) -> [Row] {
        let count = size(100_000)
        let accumulator = Accumulator()
        let ripple = harness.bytesPerSubscription(count: count) { count in
            let subject = Ripple.Subject<Int>()
            return (subject, (0..<count).map { _ in subject.subscribeNext { accumulator.total &+= $0 } })
        }
        let combine = harness.bytesPerSubscription(count: count) { count in
            let subject = PassthroughSubject<Int, Never>()
            return (subject, (0..<count).map { _ in subject.sink { accumulator.total &+= $0 } })
        }
        let floor = harness.bytesPerSubscription(count: count) { count in
            (0..<count).map { _ -> (Int) -> Void in { accumulator.total &+= $0 } }
        }
        return [
            Row(workload: "idle-subscriptions", system: System.ripple, nsPerOp: 0, allocsPerOp: 0, bytesPerSub: ripple),
            Row(workload: "idle-subscriptions", system: System.openCombine, nsPerOp: 0, allocsPerOp: 0, bytesPerSub: combine),
            Row(workload: "idle-subscriptions", system: System.floor, nsPerOp: 0, allocsPerOp: 0, bytesPerSub: floor),
        ]
    }
}

/// Hands a value to another thread in a benchmark that synchronizes it itself.
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
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

/// The serial-delivery floor: one `DispatchQueue.async` per value onto `queue`, timed until the
/// last one has run. Returns `count` (the operations).
private func asyncEach(_ count: Int, on queue: DispatchQueue) -> Int {
    let done = DispatchSemaphore(value: 0)
    let accumulator = Accumulator()
    for value in 0..<count {
        queue.async {
            accumulator.total &+= 1
            if value == count - 1 { done.signal() }
        }
    }
    done.wait()
    return count
}
