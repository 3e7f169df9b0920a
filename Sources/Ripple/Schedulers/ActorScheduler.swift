/// Runs actions on an actor's executor: isolated to that actor, one at a time, in order.
///
/// Use it where an operator takes a scheduler — `deliver(on:)`, `observe(owner:on:)`, the
/// time operators — to have events arrive on an actor. Actions run in the order they were
/// scheduled (delayed ones when due), a batch of them per job on the actor (`ActorJobQueue`);
/// `schedule(after:)` sleeps in a task first, and disposing cancels that sleep and releases
/// the action at once.
///
///     actor Store { var items: [Item] = [] }
///     let store = Store()
///     feed.deliver(on: ActorScheduler(store)).subscribeNext { item in … }   // on `store`'s executor
///
/// An action runs isolated to the actor but receives no `isolated` reference: to touch the
/// actor's state, subscribe from the actor itself (see `SignalProtocol.subscribe(isolation:…)`).
public final class ActorScheduler: Scheduler {
    /// The actor actions run on.
    public var actor: any Actor { jobs.actor }
    private let jobs: ActorJobQueue

    /// A scheduler that runs its actions on `actor`.
    public init(_ actor: any Actor) {
        jobs = ActorJobQueue(actor)
    }

    /// False: an actor has no thread of its own. Its jobs run on Swift's shared pool (or the
    /// main thread), which blocked senders can fill, so `deliver(on:)`'s `.wait` never blocks a
    /// sender for it (its buffer grows past the bound instead, as for `MainActorScheduler`).
    public var runsActionsOnItsOwnThreads: Bool { false }

    /// Whether the calling code runs on the actor (a runtime executor check).
    public var isCurrent: Bool { isCurrentlyIsolated(to: actor) }

    /// Schedules `action` to run isolated to the actor, after every action scheduled
    /// before it (a batch per job on the actor's executor).
    ///
    /// Disposing the returned disposable before the action starts means it never runs, and
    /// releases the closure at once.
    ///
    ///     ActorScheduler(store).schedule { print("on the store actor") }
    ///
    /// - Parameter action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        jobs.schedule(as: self, after: nil, action)
    }

    /// Schedules `action` to run isolated to the actor once `delay` has passed.
    ///
    /// The time is measured on this scheduler's clock (``Scheduler/now``). Disposing the returned
    /// disposable before the action starts cancels it and releases the closure at once.
    ///
    ///     ActorScheduler(store).schedule(after: .milliseconds(10)) { print("on the store actor") }
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running the action.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        jobs.schedule(as: self, after: delay, action)
    }
}

/// Runs actions on the main actor (the main thread's run loop / main dispatch queue).
///
/// The main actor runs jobs only while the main thread serves its queue: under `async` main,
/// `dispatchMain()`, `RunLoop.main.run()`, or a Swift Testing `@MainActor` test. A program
/// whose main thread blocks (a semaphore, `waitUntilCompleted` from top-level code) never runs
/// them; so `runsActionsOnItsOwnThreads` is false, and `deliver(on:)` never blocks a sender
/// waiting for room on it.
///
///     model.changes.observe(owner: screen, on: MainActorScheduler.shared) { screen, change in
///         screen.apply(change)   // on the main actor
///     }
public final class MainActorScheduler: Scheduler {
    /// The one main-actor scheduler.
    public static let shared = MainActorScheduler()

    private let jobs = ActorJobQueue(MainActor.shared)

    private init() {}

    /// Whether the calling code runs on the main actor.
    public var isCurrent: Bool { isCurrentlyIsolated(to: MainActor.shared) }

    /// Schedules `action` to run isolated to the main actor, after every action scheduled
    /// before it (the main thread must serve the main queue).
    ///
    /// Disposing the returned disposable before the action starts means it never runs, and
    /// releases the closure at once.
    ///
    ///     MainActorScheduler.shared.schedule { print("on the main actor") }
    ///
    /// - Parameter action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        jobs.schedule(as: self, after: nil, action)
    }

    /// Schedules `action` to run isolated to the main actor once `delay` has passed.
    ///
    /// The time is measured on this scheduler's clock (``Scheduler/now``). Disposing the returned
    /// disposable before the action starts cancels it and releases the closure at once.
    ///
    ///     MainActorScheduler.shared.schedule(after: .milliseconds(10)) { print("on the main actor") }
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running the action.
    ///   - action: The work to run.
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        jobs.schedule(as: self, after: delay, action)
    }
}

/// The actions waiting for one actor scheduler, run in order by one job on the actor at a time.
///
/// A `Task` per action would not keep their order: a task that is not isolated to the actor
/// starts on the global pool and only then hops, so two could overtake each other. Instead
/// actions queue here, and the first action of a batch starts one job that runs, isolated to
/// the actor, every queued action until the queue is empty (one enqueue per batch).
/// Invariant (under the lock): `draining` is true from the moment a job is started until that
/// job finds the queue empty.
final class ActorJobQueue: Sendable {
    private struct State: Sendable {
        var actions = FIFOQueue<ScheduledAction>()
        var draining = false
    }

    let actor: any Actor
    private let state = Lock(State())

    init(_ actor: any Actor) {
        self.actor = actor
    }

    /// Queues `action`, to run as `scheduler` after `delay` (if given) unless disposed first.
    func schedule(
        as scheduler: any Scheduler, after delay: Duration?, _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let scheduled = ScheduledAction(action, as: scheduler, occupancy: nil)
        guard let delay else {
            enqueue(scheduled)
            return scheduled
        }
        let timer = Task {
            try? await Task.sleep(for: delay)
            if !Task.isCancelled { self.enqueue(scheduled) }
        }
        return CompoundDisposable([scheduled, ActionDisposable { timer.cancel() }])
    }

    private func enqueue(_ action: ScheduledAction) {
        let start = state.withLock { state in
            state.actions.append(action)
            defer { state.draining = true }
            return !state.draining
        }
        guard start else { return }
        startJob(on: actor) { self.drain() }
    }

    /// Runs on the actor: every queued action, in order, until the queue is empty.
    private func drain() {
        while true {
            let batch: ContiguousArray<ScheduledAction?>? = state.withLock { state in
                if state.actions.isEmpty {
                    state.draining = false
                    return nil
                }
                return state.actions.removeAll()
            }
            guard let batch else { return }
            for case let action? in batch {
                action.perform()  // nothing when disposed before it ran
            }
        }
    }
}
