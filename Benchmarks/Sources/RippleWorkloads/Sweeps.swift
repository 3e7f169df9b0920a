import Ripple

// The size sweeps: operations whose cost must not grow with how many of their kind are already
// held. Each sweep sets up `held` of its kind (live subscriptions, observations, keys, queued
// values…), then performs `operations` operations that keep that number held. The instruction
// gate (.ci/instruction-gate) runs each under callgrind at held = 1,000 and held = 16,000, with
// K and 2K operations: per operation = (Ir(2K) − Ir(K)) / (operations(2K) − operations(K)), so
// the set-up of the held ones cancels out, and fails when the figure at 16,000 exceeds the one at
// 1,000 by more than 30 %. Ripple only, one thread, no timing: the same instructions every run.
//
// Where an operation takes one of the held ones out, it takes the oldest (the held ones are
// rotated, first in, first out): a search from the newest end or a removal that shifts the rest
// is then paid in full, not hidden by removing what was just added.

/// One size sweep: a name, what one operation is, and its set-up.
public struct SweepWorkload: Sendable {
    /// The name `ripple-probe --workload` takes.
    public let name: String
    /// What one operation is (for tables and usage messages).
    public let operation: String
    /// Sets up `held` of the kind, then returns the iteration that performs about `operations`
    /// operations (rounded to whole sends or joins where an operation is one delivery or one
    /// value replayed; `Iteration.operations` says how many).
    public let make: @Sendable (_ held: Int, _ operations: Int) -> Iteration
}

/// Every size sweep, in table order.
public enum Sweeps {
    public static let workloads: [SweepWorkload] = [
        SweepWorkload(
            name: "sweep-subscribe",
            operation: "one subscribe to a subject with `held` live subscriptions, and the dispose of the oldest",
            make: { held, operations in
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                var live = (0..<held).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }
                return Iteration(operations: operations) {
                    for index in 0..<operations {
                        let slot = index % held
                        let subscription = subject.subscribeNext { accumulator.total &+= $0 }
                        live[slot].dispose()
                        live[slot] = subscription
                    }
                }
            }),
        SweepWorkload(
            name: "sweep-observe",
            operation: "one observe(owner:) on a subject with `held` live observations (owners alive), and the dispose of the oldest",
            make: { held, operations in
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                let owners = (0..<held).map { _ in SweepOwner() }
                var live = owners.map { owner in subject.observe(owner: owner) { _, value in accumulator.total &+= value } }
                return Iteration(operations: operations) {
                    for index in 0..<operations {
                        let slot = index % held
                        let observation = subject.observe(owner: owners[slot]) { _, value in accumulator.total &+= value }
                        live[slot].dispose()
                        live[slot] = observation
                    }
                }
            }),
        SweepWorkload(
            name: "sweep-send",
            operation: "one delivery of a send to a subject with `held` subscribers (a send is `held` operations)",
            make: { held, operations in
                let sends = max(1, operations / held)
                let accumulator = Accumulator()
                let subject = Ripple.Subject<Int>()
                let subscriptions = (0..<held).map { _ in subject.subscribeNext { accumulator.total &+= $0 } }
                return Iteration(operations: sends * held) {
                    withExtendedLifetime(subscriptions) { for value in 0..<sends { subject.sendNext(value) } }
                }
            }),
        SweepWorkload(
            name: "sweep-replay",
            operation: "one value replayed to a late subscriber of a full ReplaySubject(capacity: `held`) (a join, and its dispose, is `held` operations)",
            make: { held, operations in
                let joins = max(1, operations / held)
                let accumulator = Accumulator()
                let replay = ReplaySubject<Int>(capacity: held)
                for value in 0..<(2 * held) { replay.sendNext(value) }  // full, and wrapped
                return Iteration(operations: joins * held) {
                    for _ in 0..<joins { replay.subscribeNext { accumulator.total &+= $0 }.dispose() }
                }
            }),
        SweepWorkload(
            name: "sweep-keyed",
            operation: "one KeyedDisposable set replacing (and disposing) the disposable of one of `held` keys, the oldest set",
            make: { held, operations in
                let keyed = KeyedDisposable<Int>()
                for key in 0..<held { keyed[key] = ActionDisposable() }
                return Iteration(operations: operations) {
                    for index in 0..<operations { keyed[index % held] = ActionDisposable() }
                }
            }),
        SweepWorkload(
            name: "sweep-compound",
            operation: "one CompoundDisposable remove of the oldest of `held` children, and its add back (now the newest)",
            make: { held, operations in
                let compound = CompoundDisposable()
                let children = (0..<held).map { _ in ActionDisposable() }
                for child in children { compound.add(child) }
                return Iteration(operations: operations) {
                    for index in 0..<operations {
                        let child = children[index % held]
                        compound.remove(child)
                        compound.add(child)
                    }
                }
            }),
        SweepWorkload(
            name: "sweep-lifetime",
            operation: "one Lifetime.observeEnded on a lifetime with `held` observations, and the cancelling of the oldest",
            make: { held, operations in
                let (lifetime, token) = Lifetime.make()
                var live = (0..<held).map { _ in lifetime.observeEnded {} }
                return Iteration(operations: operations) {
                    withExtendedLifetime(token) {
                        for index in 0..<operations {
                            let slot = index % held
                            let observation = lifetime.observeEnded {}
                            live[slot].dispose()
                            live[slot] = observation
                        }
                    }
                }
            }),
        SweepWorkload(
            name: "sweep-deliver",
            operation: "one value sent through deliver(on:) while `held` values wait in its buffer, and its delivery by the drain",
            make: { held, operations in
                // A TestScheduler runs nothing until told: the held values wait in the relay's
                // buffer (bufferSize .max: never full) until the drain at the end of the run,
                // which delivers them and the operations' values.
                let accumulator = Accumulator()
                let scheduler = TestScheduler()
                let subject = Ripple.Subject<Int>()
                let subscription = subject.deliver(on: scheduler, bufferSize: .max).subscribeNext { accumulator.total &+= $0 }
                for value in 0..<held { subject.sendNext(value) }
                return Iteration(operations: operations) {
                    withExtendedLifetime(subscription) {
                        for value in 0..<operations { subject.sendNext(value) }
                        scheduler.run()
                    }
                }
            }),
    ]
}

/// An `observe(owner:)` owner: an object, kept alive by the sweep.
final class SweepOwner {}
