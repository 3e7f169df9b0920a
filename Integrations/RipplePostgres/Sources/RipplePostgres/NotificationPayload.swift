/// What a notification on a topic's channel says, parsed strictly and without trusting it.
///
/// Two forms, both starting with the decimal sequence of the last value committed:
/// - `LAST` — a hint: read the table after the cursor.
/// - `LAST COUNT EPOCH MAC BODY` — a signed batch (publishers with a `NotificationKey`): the
///   `COUNT` values `LAST - COUNT + 1 … LAST`, committed at `EPOCH` (seconds since 1970, the
///   database's clock), `BODY` their JSON as one array, and `MAC` the HMAC-SHA256 of
///   `ripple-v1 NUL topic NUL "LAST COUNT EPOCH" NUL BODY` in lowercase hexadecimal.
///
/// A listener without the key, or whose check fails, treats a signed batch as a hint for `LAST`.
enum NotificationPayload: Equatable, Sendable {
    case hint(last: Int64)
    case signed(SignedBatch)
    /// Neither form: forged, or another program's. It asks for a read, like any hint.
    case malformed

    /// A signed batch as it arrived: not checked yet (see `SignedBatch.verified(by:topic:)`).
    struct SignedBatch: Equatable, Sendable {
        var last: Int64
        var count: Int
        var epoch: Double
        /// `LAST COUNT EPOCH`, as signed.
        var header: Substring
        var mac: Substring
        var body: Substring

        /// The first value's sequence.
        var first: Int64 { last - Int64(count) + 1 }

        /// The bytes the publisher's statement signed for `topic`.
        func message(topic: String) -> [UInt8] {
            var bytes = Array(NotificationPayload.domain.utf8)
            bytes.reserveCapacity(bytes.count + topic.utf8.count + header.utf8.count + body.utf8.count + 3)
            bytes.append(0)
            bytes += topic.utf8
            bytes.append(0)
            bytes += header.utf8
            bytes.append(0)
            bytes += body.utf8
            return bytes
        }

        /// Whether `key` signed this batch for `topic`.
        func verified(by key: NotificationKey, topic: String) -> Bool {
            key.authenticates(message(topic: topic), mac: mac.utf8)
        }
    }

    /// What the signature starts with: a new format gets a new domain.
    static let domain = "ripple-v1"

    /// The most values one signed batch may announce (the publisher's batch limit).
    static var maximumCount: Int { Publisher.batchLimit }

    /// Parses `payload`: digits, spaces and the fields above exactly, nothing else. The body is
    /// kept as a slice, not copied.
    init(_ payload: String) {
        let fields = payload.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard let last = Self.sequence(fields[0]) else {
            self = .malformed
            return
        }
        if fields.count == 1 {
            self = .hint(last: last)
            return
        }
        guard fields.count == 5,
              let count = Self.sequence(fields[1]), (1...Int64(Self.maximumCount)).contains(count), count <= last,
              let epoch = Self.epoch(fields[2]),
              fields[3].utf8.count == 64,
              fields[3].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        else {
            self = .malformed
            return
        }
        let header = payload[fields[0].startIndex..<fields[2].endIndex]
        self = .signed(SignedBatch(last: last, count: Int(count), epoch: epoch, header: header, mac: fields[3], body: fields[4]))
    }

    /// The last sequence the payload names, well formed or not (nil when it names none).
    var last: Int64? {
        switch self {
        case .hint(let last): last
        case .signed(let batch): batch.last
        case .malformed: nil
        }
    }

    /// 1 to 19 ASCII digits and nothing else, fitting `Int64`; nil otherwise.
    static func sequence(_ text: Substring) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        for byte in text.utf8 {
            digits += 1
            guard digits <= 19, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return digits == 0 ? nil : value
    }

    /// PostgreSQL's text for `extract(epoch …)`: digits with at most one `.` (and a leading `-`
    /// for times before 1970), at most 32 bytes; finite.
    static func epoch(_ text: Substring) -> Double? {
        let bytes = text.utf8
        guard (1...32).contains(bytes.count) else { return nil }
        var dots = 0
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): continue
            case UInt8(ascii: "."): dots += 1
            case UInt8(ascii: "-") where index == 0: continue
            default: return nil
            }
        }
        guard dots <= 1, let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
