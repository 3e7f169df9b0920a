import Crypto
import Foundation
import Logging
import PostgresNIO
import Ripple
import ServiceLifecycle
import Testing

@testable import RipplePostgres

private let key = try! NotificationKey(Array("the key every instance of the service shares".utf8))
private let otherKey = try! NotificationKey(Array("a key somebody else made up, 32+ bytes long".utf8))

/// A signed payload for `topic`, as the publishing statement builds it, signed with `key`.
/// `epoch` is now by default: a forged batch must fail its signature, not its age.
private func signed(_ topic: String, last: Int64, count: Int, epoch: String = String(format: "%.6f", Date().timeIntervalSince1970),
                    body: String, with key: NotificationKey) -> String {
    let header = "\(last) \(count) \(epoch)"
    var message = Array("ripple-v1".utf8) + [0] + Array(topic.utf8) + [0] + Array(header.utf8) + [0]
    message += Array(body.utf8)
    let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key.secret)).map { String(format: "%02x", $0) }.joined()
    return "\(header) \(mac) \(body)"
}

/// Signed notifications without a database: the payload's grammar, the signature, the queue.
@Suite struct SignedNotificationUnitTests {
    @Test func aSignedPayloadParsesOnlyInItsExactForm() throws {
        let good = signed("t", last: 7, count: 2, epoch: "1764300000.5", body: "[1,2]", with: key)
        guard case .signed(let batch) = NotificationPayload(good) else {
            Issue.record("not parsed: \(good)")
            return
        }
        #expect(batch.first == 6 && batch.last == 7 && batch.count == 2 && batch.epoch == 1_764_300_000.5 && batch.body == "[1,2]")
        #expect(batch.verified(by: key, topic: "t"))
        #expect(!batch.verified(by: key, topic: "u"), "a batch signed for another topic")
        #expect(!batch.verified(by: otherKey, topic: "t"))
        #expect(NotificationPayload("42") == .hint(last: 42))
        let mac = String(repeating: "a", count: 64)
        for payload in ["", "x", "7 2", "7 2 1.5", "7 2 1.5 \(mac)", "+7 2 1.5 \(mac) []", "7 0 1.5 \(mac) []",
                        "7 8 1.5 \(mac) []", "2000 1001 1.5 \(mac) []", "7 2 nan \(mac) []", "7 2 inf \(mac) []",
                        "7 2 1e3 \(mac) []", "7 2 1.5.5 \(mac) []", "7 2 1.5 \(mac.uppercased()) []",
                        "7 2 1.5 \(mac.dropLast()) []", "7  2 1.5 \(mac) []", "7 2 \(String(repeating: "1", count: 33)) \(mac) []"] {
            #expect(NotificationPayload(payload) == .malformed, "\(payload.debugDescription)")
        }
    }

    @Test func theStatementsPadBlocksComputeHmacSha256() throws {
        // RFC 4231, test case 6: a key longer than SHA-256's block is hashed first.
        let long = try NotificationKey([UInt8](repeating: 0xaa, count: 131))
        let message = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        let expected = "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        for key in [long, key] {
            // What the publishing statement computes: sha256(outer || sha256(inner || message)).
            let inner = Array(SHA256.hash(data: key.innerPad + message))
            let outer = SHA256.hash(data: key.outerPad + inner).map { String(format: "%02x", $0) }.joined()
            #expect(key.authenticates(message, mac: outer[...].utf8))
            if key.innerPad == long.innerPad { #expect(outer == expected) }
        }
    }

    @Test func aKeyShorterThan32BytesOrNotBase64IsRefusedAndNeverPrinted() throws {
        #expect(throws: InvalidNotificationKey.tooShort(bytes: 16)) { try NotificationKey([UInt8](repeating: 1, count: 16)) }
        #expect(throws: InvalidNotificationKey.notBase64) { try NotificationKey(base64: "not base64!") }
        let secret = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let made = try NotificationKey(base64: secret + "\n")
        var dumped = ""
        dump(made, to: &dumped)
        #expect("\(made)" == "NotificationKey(…)" && !String(reflecting: made).contains(secret) && !dumped.contains("Pad"))
        #expect("\(InvalidNotificationKey.tooShort(bytes: 16))" == "a notification key needs at least 32 bytes, got 16")
    }

    private func batch(_ first: Int64, _ last: Int64, _ body: String = "[]") -> SignedValues {
        guard case .signed(let parsed) = NotificationPayload(signed("t", last: last, count: Int(last - first + 1), epoch: "1764300000.5", body: body, with: key)) else {
            fatalError("unparsable test batch")
        }
        return SignedValues(parsed)
    }

    @Test func checkedBatchesQueueForDeliveryUntilAHintTurnsThemIntoOneRead() {
        var hints = TopicHints()
        let outcome1 = hints.want()
        #expect(outcome1 == .queue)
        let outcome2 = hints.take()
        #expect(outcome2 == .read)
        hints.read(upTo: 10)
        let outcome3 = hints.offer(batch(5, 10), room: 1_000)
        #expect(outcome3 == .stale)
        let outcome4 = hints.offer(batch(11, 12), room: 1_000)
        #expect(outcome4 == .queue)
        let outcome5 = hints.offer(batch(13, 13), room: 1_000)
        #expect(outcome5 == .coalesced)
        let outcome6 = hints.take()
        #expect(outcome6 == .deliver([batch(11, 12), batch(13, 13)]))
        hints.read(upTo: 13)
        let outcome7 = hints.offer(batch(14, 14), room: 1_000)
        #expect(outcome7 == .queue)
        let outcome8 = hints.hint(last: 15)
        #expect(outcome8 == .coalesced)  // a plain hint: the read covers the batch too
        #expect(hints.inline.isEmpty && hints.inlineBytes == 0)
        let outcome9 = hints.offer(batch(15, 15), room: 1_000)
        #expect(outcome9 == .coalesced)
        #expect(hints.inline.isEmpty, "no batch waits beside a read")
        let outcome10 = hints.take()
        #expect(outcome10 == .read)
    }

    @Test func batchesBeforeTheCatchUpOrBeyondTheBoundsBecomeOneRead() {
        var hints = TopicHints(cursor: 3)
        let outcome11 = hints.offer(batch(4, 4), room: 1_000)
        #expect(outcome11 == .queue)  // not caught up on this connection
        let outcome12 = hints.take()
        #expect(outcome12 == .read)
        hints.read(upTo: 4)
        let outcome13 = hints.offer(batch(5, 5, "[12345]"), room: 3)
        #expect(outcome13 == .queue)  // no room left in the router
        let outcome14 = hints.take()
        #expect(outcome14 == .read)
        hints.read(upTo: 5)
        for sequence in 6..<Int64(6 + TopicHints.maximumInline) {
            _ = hints.offer(batch(sequence, sequence), room: 1_000)
        }
        #expect(hints.inline.count == TopicHints.maximumInline)
        let outcome15 = hints.offer(batch(70, 70), room: 1_000)
        #expect(outcome15 == .coalesced)
        let taken = hints.take()
        #expect(hints.inline.isEmpty && taken == .read)
        hints.read(upTo: 70)
        _ = hints.offer(batch(71, 71), room: 1_000)
        hints.reconnected()
        #expect(hints.inline.isEmpty && hints.inlineBytes == 0 && !hints.queued)
    }

    @Test func aSignedBatchIsAcceptedOnlyRightAfterTheCursor() {
        var cursor = FeedCursor(resumingAfter: nil)
        let accepted16 = cursor.accept(batchFrom: 1, count: 1)
        #expect(!accepted16, "before the first read")
        cursor = FeedCursor(resumingAfter: 10)
        let accepted17 = cursor.accept(batchFrom: 12, count: 1)
        #expect(!accepted17, "a gap")
        let accepted18 = cursor.accept(batchFrom: 10, count: 2)
        #expect(!accepted18, "an overlap")
        let accepted19 = cursor.accept(batchFrom: 11, count: 0)
        #expect(!accepted19)
        let accepted20 = cursor.accept(batchFrom: 11, count: 3)
        #expect(accepted20 && cursor.last == 13)
        cursor = FeedCursor(resumingAfter: FeedCursor.largestSequence - 1)
        let accepted21 = cursor.accept(batchFrom: FeedCursor.largestSequence, count: 2)
        #expect(!accepted21, "past the largest sequence")
    }
}

/// Sends `payloads` on `topic`'s channel as a role with no grants at all.
private func forge(_ topic: String, _ payloads: [String]) async throws {
    try await TestDatabase.role("ripple_attacker")
    let channel = PostgresReplaySubject<Int>.channel(for: topic)
    try await TestDatabase.sql(
        "SELECT count(pg_notify(\(channel), p))::text FROM unnest(\(payloads)::text[]) AS p", as: "ripple_attacker")
}

/// Topics with `key` (or none), running until `stop`.
private struct RunningTopics {
    let topics: PostgresTopics
    let task: Task<Void, any Error>

    init(_ name: String, key: NotificationKey?) throws {
        topics = PostgresTopics(name: TestDatabase.topic(name), configuration: try TestDatabase.configuration,
                                logger: TestDatabase.logger, notificationKey: key)
        let topics = topics
        task = Task { try await topics.run() }
    }

    func subject<Value>(_ topic: String, of: Value.Type = String.self) async throws -> PostgresReplaySubject<Value> {
        let subject = PostgresReplaySubject<Value>(topic: topic, capacity: 100, on: topics)
        let live = await eventually(60) { subject.currentConnectionState.isLive }
        try #require(live, "not live: \(subject.currentConnectionState)")
        return subject
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct SignedNotificationTests {
        @Test func withASharedKeyValuesArriveFromTheNotificationWithoutReadingTheTable() async throws {
            let topic = TestDatabase.topic("signed")
            let running = try RunningTopics("signed", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            let readsBefore = running.topics.statistics.reads
            for i in 1...50 { try await feed.send("value \(i)") }
            #expect(await eventually(60) { received.values.count >= 50 })
            #expect(received.values == (1...50).map { "value \($0)" })
            let seen = running.topics.statistics
            #expect(seen.signedBatches == 50 && seen.reads == readsBefore && seen.rejected == 0, "\(seen)")
            // A new instance without the key reads the same values from the table, and takes the
            // signed notifications as hints (not as rejected ones).
            let plain = try RunningTopics("signed-plain", key: nil)
            let joiner = try await plain.subject(topic)
            let replayed = Recorder<String>()
            replayed.attach(joiner)
            #expect(replayed.values == received.values)
            try await feed.send("value 51")
            #expect(await eventually(60) { replayed.values.count == 51 && received.values.count == 51 })
            #expect(plain.topics.statistics.rejected == 0 && plain.topics.statistics.signedBatches == 0)
            await plain.stop(); await running.stop()
        }

        @Test func aSignedNotificationWithAnotherKeyOrForAnotherTopicIsRejectedAndNeverDelivered() async throws {
            let topic = TestDatabase.topic("signed-forged")
            let running = try RunningTopics("signed-forged", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            try await forge(topic, [
                signed(topic, last: 1, count: 1, body: "[\"FORGED\"]", with: otherKey),
                signed("another topic", last: 1, count: 1, body: "[\"FORGED\"]", with: key),
            ])
            #expect(await eventually(60) { running.topics.statistics.rejected >= 2 })
            try await feed.send("one")
            try await feed.send("two")
            #expect(await eventually(60) { received.values.count >= 2 })
            #expect(received.values == ["one", "two"] && received.errors.isEmpty)
            await running.stop()
        }

        @Test func aCapturedSignedNotificationSentAgainDeliversNothingTwice() async throws {
            let topic = TestDatabase.topic("signed-replayed")
            let running = try RunningTopics("signed-replayed", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            // What a role that LISTENs on the channel captures: the notification, byte for byte.
            let captured = try await TestDatabase.capture(channel: PostgresReplaySubject<Int>.channel(for: topic)) {
                try await feed.send("one")
            }
            try #require(captured.count == 1)
            #expect(await eventually(60) { received.values == ["one"] })
            let elsewhere = try await running.subject(TestDatabase.topic("signed-elsewhere"))
            let misled = Recorder<String>()
            misled.attach(elsewhere)
            let rejectedBefore = running.topics.statistics.rejected
            let staleBefore = running.topics.statistics.stale
            try await forge(topic, [captured[0]])
            try await forge(topic, [captured[0]])  // again (one transaction would fold the two into one)
            try await forge(elsewhere.topic, [captured[0]])  // signed for the first topic only
            try await feed.send("two")
            #expect(await eventually(60) { received.values.count >= 2 && running.topics.statistics.rejected > rejectedBefore })
            try await Task.sleep(for: .milliseconds(200))
            #expect(received.values == ["one", "two"] && misled.values.isEmpty)
            #expect(running.topics.statistics.stale >= staleBefore + 2)
            await running.stop()
        }

        @Test func concurrentSendsShareASignedBatchAndANonAsciiTopicSignsAlike() async throws {
            let topic = TestDatabase.topic("signé-東京")
            let running = try RunningTopics("signed-batch", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            let readsBefore = running.topics.statistics.reads
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<8 {
                    group.addTask { for i in 0..<25 { try await feed.send("été \(sender)-\(i) \u{1F600}") } }
                }
                try await group.waitForAll()
            }
            #expect(await eventually(60) { received.values.count >= 200 })
            #expect(Set(received.values).count == 200 && received.errors.isEmpty)
            for sender in 0..<8 {  // each sender's values in its order
                let mine = received.values.filter { $0.hasPrefix("été \(sender)-") }
                #expect(mine == (0..<25).map { "été \(sender)-\($0) \u{1F600}" })
            }
            let seen = running.topics.statistics
            #expect(seen.reads == readsBefore && seen.rejected == 0, "\(seen)")
            #expect(seen.signedBatches >= 1 && seen.signedBatches < 200, "batches shared by concurrent sends: \(seen)")
            await running.stop()
        }

        @Test func aSignedBatchOlderThanAMinuteIsReadFromTheTableInsteadOfDelivered() async throws {
            // What a replay of a captured notification looks like once the topic's sequences are
            // given out again (a reset, a restore): authentic, but old.
            let topic = TestDatabase.topic("signed-old")
            let running = try RunningTopics("signed-old", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            let old = String(format: "%.6f", Date().timeIntervalSince1970 - 120)
            try await forge(topic, [signed(topic, last: 1, count: 1, epoch: old, body: "[\"OLD\"]", with: key)])
            #expect(await eventually(60) { running.topics.statistics.reads >= 2 })  // the catch-up, then the old batch's read
            try await feed.send("real")
            #expect(await eventually(60) { !received.values.isEmpty })
            try await Task.sleep(for: .milliseconds(200))
            #expect(received.values == ["real"])
            await running.stop()
        }

        @Test func aBatchTooLargeForANotificationIsReadFromTheTable() async throws {
            let topic = TestDatabase.topic("signed-large")
            let running = try RunningTopics("signed-large", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            let large = String(repeating: "é", count: 5_000)  // 10,000 bytes of UTF-8
            let readsBefore = running.topics.statistics.reads
            try await feed.send("small")
            try await feed.send(large)
            try await feed.send("small again")
            #expect(await eventually(60) { received.values.count >= 3 })
            #expect(received.values == ["small", large, "small again"])
            let seen = running.topics.statistics
            #expect(seen.reads > readsBefore && seen.signedBatches >= 1, "\(seen)")
            await running.stop()
        }

        @Test func aListenerWithTheKeyFollowsAPublisherWithout() async throws {
            let topic = TestDatabase.topic("signed-mixed")
            let running = try RunningTopics("signed-mixed", key: key)
            let feed = try await running.subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            let plain = try RunningTopics("signed-mixed-plain", key: nil)
            let publisher = try await plain.subject(topic)
            for i in 1...5 { try await publisher.send("plain \(i)") }
            #expect(await eventually(60) { received.values.count >= 5 })
            #expect(received.values == (1...5).map { "plain \($0)" })
            #expect(running.topics.statistics.rejected == 0 && running.topics.statistics.signedBatches == 0)
            await plain.stop(); await running.stop()
        }
    }
}
