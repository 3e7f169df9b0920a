import Foundation
import Ripple
import struct NIOConcurrencyHelpers.NIOLockedValueBox

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

    private let contact: NIOLockedValueBox<Contact>
    private let background = BackgroundScheduler()

    init() {
        contact = NIOLockedValueBox(Contact(databaseEpoch: Date().timeIntervalSince1970, local: .now))
    }

    /// Records the database's time read just now (a time that is not finite, or not between 1970
    /// and the year 5000, is ignored: the clock keeps counting from the last good one).
    func synchronize(databaseEpoch: Double) {
        guard databaseEpoch.isFinite, (0...Self.latest).contains(databaseEpoch) else { return }
        let local = ContinuousClock.now
        contact.withLockedValue { $0 = Contact(databaseEpoch: databaseEpoch, local: local) }
    }

    /// The database's time now, seconds since 1970.
    var databaseEpoch: Double {
        let local = ContinuousClock.now
        let contact = contact.withLockedValue { $0 }
        return contact.databaseEpoch + (local - contact.local).seconds
    }

    var now: Duration {
        .seconds(Self.stamp ?? databaseEpoch)
    }

    /// The latest epoch this clock accepts (the year 5000): `Duration.seconds` traps on what does
    /// not fit its 128-bit attoseconds (nan, infinities, ±1e300).
    static let latest: Double = 95_617_584_000

    /// A row's publishing time made safe to stamp: not finite or before 1970 → 0 (as old as it
    /// gets), later than the database's time now → now. So a row dated in the future (a clock
    /// that ran ahead, a row written by hand) ages from the moment it is read instead of keeping
    /// `maxAge` from ever dropping it.
    func clamped(_ epoch: Double) -> Double {
        let now = databaseEpoch
        guard epoch.isFinite else { return epoch == .infinity ? now : 0 }
        return min(max(epoch, 0), now)
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
