import Foundation
import Ripple

/// The database's clock as seen from this process, for the local replay buffer's `maxAge`.
///
/// `PostgresReplaySubject` keeps the retained values in a `ReplaySubject` whose ages must be
/// measured on the database's clock (the one `maxAge` is defined on), not this machine's. This
/// scheduler's `now` is the database's time: the value's publishing time (taken under the topic's
/// lock, never behind the previous value's) while the listener hands
/// a value to the buffer (set with `stamping(_:_:)`, so a value replayed at start-up keeps its real
/// age), otherwise the database's time at the last contact plus the monotonic time since.
/// It never runs actions of its own: `schedule` forwards to a `BackgroundScheduler`.
final class DatabaseClock: Scheduler {
    /// The commit time of the value being recorded, set by the listener around `sendNext`.
    @TaskLocal static var stamp: Double?

    private struct Contact {
        var databaseEpoch: Double
        var local: ContinuousClock.Instant
    }

    private let contact: Mutex<Contact>
    private let background = BackgroundScheduler()

    init() {
        contact = Mutex(Contact(databaseEpoch: Date().timeIntervalSince1970, local: .now))
    }

    /// Records the database's time read just now.
    func synchronize(databaseEpoch: Double) {
        let local = ContinuousClock.now
        contact.withLock { $0 = Contact(databaseEpoch: databaseEpoch, local: local) }
    }

    /// The database's time now, seconds since 1970.
    var databaseEpoch: Double {
        let local = ContinuousClock.now
        let contact = contact.withLock { $0 }
        return contact.databaseEpoch + (local - contact.local).seconds
    }

    var now: Duration {
        .seconds(Self.stamp ?? databaseEpoch)
    }

    /// Runs `body` (a `sendNext` on the buffer) with `now` answering `epoch`.
    static func stamping<T>(_ epoch: Double, _ body: () throws -> T) rethrows -> T {
        try $stamp.withValue(epoch, operation: body)
    }

    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        background.schedule(action)
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        background.schedule(after: delay, action)
    }
}

import Synchronization
