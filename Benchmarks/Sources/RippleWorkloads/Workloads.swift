import ClosureChain
import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import Ripple

// The workloads of the suite. Each `systems` list gives, per system, a function that sets the
// workload up for about N operations and returns the `Iteration` that performs them.

// MARK: fanout-N

/// One hot subject, N subscribers; operation = one value delivered to one subscriber.
enum Fanout {
    static func systems(subscribers: Int) -> [(String, @Sendable (Int) -> Iteration)] {
        [
            (System.ripple, { operations in
                let sends = max(1, operations / subscribers)
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                let subscriptions = (0..<subscribers).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }
                return Iteration(operations: sends * subscribers) {
                    withExtendedLifetime(subscriptions) { for value in 0..<sends { subject.sendNext(value) } }
                }
            }),
            (System.openCombine, { operations in
                let sends = max(1, operations / subscribers)
                let accumulator = Accumulator()
                let passthrough = PassthroughSubject<Int, Never>()
                let subscriptions = (0..<subscribers).map { _ in passthrough.sink { accumulator.total &+= $0 } }
                return Iteration(operations: sends * subscribers) {
                    withExtendedLifetime(subscriptions) { for value in 0..<sends { passthrough.send(value) } }
                }
            }),
            (System.notificationCenter, { operations in
                let sends = max(1, operations / subscribers)
                let accumulator = Accumulator()
                let center = NotificationCenter()
                let name = Notification.Name("fanout")
                let observers = (0..<subscribers).map { _ in
                    center.addObserver(forName: name, object: nil, queue: nil) { note in accumulator.total &+= note.object as! Int }
                }
                return Iteration(operations: sends * subscribers) {
                    withExtendedLifetime(observers) { for value in 0..<sends { center.post(name: name, object: value) } }
                }
            }),
            (System.floor, { operations in
                let sends = max(1, operations / subscribers)
                let accumulator = Accumulator()
                let closures: [(Int) -> Void] = (0..<subscribers).map { _ in { accumulator.total &+= $0 } }
                return Iteration(operations: sends * subscribers) {
                    for value in 0..<sends { for closure in closures { closure(value) } }
                }
            }),
        ]
    }
}

// MARK: behavior-fanout-10

/// A subject that keeps its latest value, 10 subscribers; operation = one delivery.
enum BehaviorFanout {
    static let subscribers = 10
    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { operations in
            let sends = max(1, operations / subscribers)
            let accumulator = Accumulator()
            let behavior = BehaviorSubject(0)
            let subscriptions = (0..<subscribers).map { _ in behavior.subscribeNext { accumulator.total &+= $0 } }
            return Iteration(operations: sends * subscribers) {
                withExtendedLifetime(subscriptions) { for value in 0..<sends { behavior.sendNext(value) } }
            }
        }),
        (System.openCombine, { operations in
            let sends = max(1, operations / subscribers)
            let accumulator = Accumulator()
            let current = CurrentValueSubject<Int, Never>(0)
            let subscriptions = (0..<subscribers).map { _ in current.sink { accumulator.total &+= $0 } }
            return Iteration(operations: sends * subscribers) {
                withExtendedLifetime(subscriptions) { for value in 0..<sends { current.send(value) } }
            }
        }),
        (System.floor, { operations in
            let sends = max(1, operations / subscribers)
            let accumulator = Accumulator()
            let closures: [(Int) -> Void] = (0..<subscribers).map { _ in { accumulator.total &+= $0 } }
            let latest = UncheckedBox(0)
            return Iteration(operations: sends * subscribers) {
                for value in 0..<sends {
                    latest.value = value
                    for closure in closures { closure(latest.value) }
                }
            }
        }),
    ]
}

// MARK: replay-send, replay-subscribe

enum Replay {
    /// Operation = one send to a `ReplaySubject(capacity: 100)` with 1 subscriber; the floor
    /// writes a ring and calls a closure.
    static let sendSystems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { sends in
            let accumulator = Accumulator()
            let replay = ReplaySubject<Int>(capacity: 100)
            let subscription = replay.subscribeNext { accumulator.total &+= $0 }
            return Iteration(operations: sends) {
                withExtendedLifetime(subscription) { for value in 0..<sends { replay.sendNext(value) } }
            }
        }),
        (System.floor, { sends in
            let accumulator = Accumulator()
            let ring = UncheckedBox([Int](repeating: 0, count: 100))
            let head = UncheckedBox(0)
            let closure: (Int) -> Void = { accumulator.total &+= $0 }
            return Iteration(operations: sends) {
                for value in 0..<sends {
                    ring.value[head.value] = value
                    head.value = (head.value + 1) % 100
                    closure(value)
                }
            }
        }),
    ]

    /// Operation = one late subscriber joining a full `ReplaySubject(capacity: 100)` (and
    /// leaving); the floor copies 100 values and calls a closure with each.
    static let subscribeSystems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { joins in
            let accumulator = Accumulator()
            let replay = ReplaySubject<Int>(capacity: 100)
            for value in 0..<1_000 { replay.sendNext(value) }
            return Iteration(operations: joins) {
                for _ in 0..<joins { replay.subscribeNext { accumulator.total &+= $0 }.dispose() }
            }
        }),
        (System.floor, { joins in
            let accumulator = Accumulator()
            let ring = Array(900..<1_000)
            return Iteration(operations: joins) {
                for _ in 0..<joins {
                    let closure: (Int) -> Void = { accumulator.total &+= $0 }
                    let copy = ring
                    for value in copy { closure(value) }
                }
            }
        }),
    ]
}

// MARK: cold-pipeline

/// Operation = one element of `from(0..<N) → map → filter → scan → subscriber`.
enum ColdPipeline {
    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { count in
            let accumulator = Accumulator()
            return Iteration(operations: count) {
                Signal.from(0..<count).map { $0 &* 3 }.filter { $0 % 2 == 0 }.scan(0, &+)
                    .subscribeNext { accumulator.total &+= $0 }
            }
        }),
        (System.openCombine, { count in
            let accumulator = Accumulator()
            return Iteration(operations: count) {
                _ = Publishers.Sequence<Range<Int>, Never>(sequence: 0..<count).map { $0 &* 3 }.filter { $0 % 2 == 0 }
                    .scan(0, &+).sink { accumulator.total &+= $0 }
            }
        }),
        (System.closureChain, { count in
            let accumulator = Accumulator()
            return Iteration(operations: count) {
                ClosureChain.runColdPipeline(0..<count) { accumulator.total &+= $0 }
            }
        }),
        (System.floor, { count in
            let accumulator = Accumulator()
            return Iteration(operations: count) {
                var sum = 0
                for value in 0..<count {
                    let tripled = value &* 3
                    if tripled % 2 == 0 {
                        sum &+= tripled
                        accumulator.total &+= sum
                    }
                }
            }
        }),
    ]
}

// MARK: subscribe-dispose-L

/// Operation = one subscribe plus its dispose, on a subject already holding `live` subscribers;
/// the floor appends a closure to an array and removes it.
enum SubscribeDispose {
    static func systems(live: Int) -> [(String, @Sendable (Int) -> Iteration)] {
        [
            (System.ripple, { pairs in
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                let alive = (0..<live).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }
                return Iteration(operations: pairs) {
                    withExtendedLifetime(alive) {
                        for _ in 0..<pairs { subject.subscribeNext { accumulator.total &+= $0 }.dispose() }
                    }
                }
            }),
            (System.openCombine, { pairs in
                let accumulator = Accumulator()
                let passthrough = PassthroughSubject<Int, Never>()
                let alive = (0..<live).map { _ in passthrough.sink { accumulator.total &+= $0 } }
                return Iteration(operations: pairs) {
                    withExtendedLifetime(alive) {
                        for _ in 0..<pairs { passthrough.sink { accumulator.total &+= $0 }.cancel() }
                    }
                }
            }),
            (System.floor, { pairs in
                let accumulator = Accumulator()
                let closures = UncheckedBox((0..<live).map { _ -> (Int) -> Void in { accumulator.total &+= $0 } })
                return Iteration(operations: pairs) {
                    for _ in 0..<pairs {
                        closures.value.append { accumulator.total &+= $0 }
                        closures.value.removeLast()
                    }
                }
            }),
        ]
    }
}
