import Crypto
import Foundation

/// A secret every instance of a service shares, which lets a notification carry the values it
/// announces: a listener holding the key delivers them at once, without reading the table.
///
/// Without a key a notification is only a hint — any role that can connect may send one — so
/// each delivery waits for one more round trip, the listener's read of `ripple_values`. With a
/// key the publishing statement signs what it commits: the topic, the batch's sequences, their
/// time and their JSON, with HMAC-SHA256, computed by PostgreSQL inside the same statement
/// (PostgreSQL gives out the sequences, so only the server knows what to sign). A listener
/// with the same key checks the signature and delivers the values from the notification; one
/// that fails the check (forged, or another key) is counted in `PostgresTopics.Statistics.rejected`
/// and treated as a hint. A batch too large for a notification (7,700 bytes of JSON), one that
/// does not follow the last value delivered, or one committed more than a minute ago (a replay),
/// is read from the table as before.
///
/// Know what it grants (the package README's trust model has the details):
/// - the key is a right to publish: whoever holds it can sign a notification, and `pg_notify`
///   needs no grant — give it only to instances you would let publish;
/// - the values travel in notifications, which any role that can connect may `LISTEN` to;
/// - the key travels to the server as statement parameters (its two HMAC pad blocks): use TLS
///   or a Unix socket, and keep statement logs with parameters from roles that should not
///   publish.
///
/// A listener without a key still works beside publishers that have one (their notifications
/// are hints to it), and so does a publisher without a key beside listeners that have one.
///
///     let key = try NotificationKey(base64: secret)   // at least 32 bytes, the same in every instance
///     let topics = PostgresTopics(name: "orders-service", configuration: config, logger: logger, notificationKey: key)
///
/// `description` and `dump` never show the secret.
public struct NotificationKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The secret's bytes. Kept as bytes, not as swift-crypto's `SymmetricKey`, which is
    /// `Sendable` only from swift-crypto 4 on; the package supports 3.12.3 and later.
    let secret: [UInt8]
    /// HMAC's inner and outer pad blocks (the key, hashed if longer than 64 bytes, padded with
    /// zeros to 64, XOR 0x36 and XOR 0x5c): the statement computes
    /// `sha256(outer || sha256(inner || message))`, which is HMAC-SHA256.
    let innerPad: [UInt8]
    let outerPad: [UInt8]

    /// The fewest bytes a key may have (HMAC-SHA256's output size).
    public static var minimumBytes: Int { 32 }

    /// A key from secret bytes.
    /// - Throws: `InvalidNotificationKey.tooShort` for fewer than `minimumBytes` bytes.
    public init(_ secret: some Collection<UInt8>) throws(InvalidNotificationKey) {
        let bytes = Array(secret)
        guard bytes.count >= Self.minimumBytes else { throw .tooShort(bytes: bytes.count) }
        self.secret = bytes
        var block = bytes.count > 64 ? Array(SHA256.hash(data: bytes)) : bytes
        block += [UInt8](repeating: 0, count: 64 - block.count)
        innerPad = block.map { $0 ^ 0x36 }
        outerPad = block.map { $0 ^ 0x5c }
    }

    /// A key from base64 text (for example from a secret store or an environment variable;
    /// `openssl rand -base64 32` makes one).
    /// - Throws: `InvalidNotificationKey.notBase64`, or `.tooShort`.
    public init(base64: String) throws(InvalidNotificationKey) {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw .notBase64 }
        try self.init(data)
    }

    /// `NotificationKey(…)`: never the secret.
    public var description: String { "NotificationKey(…)" }

    /// No children: `dump` and debuggers show nothing of the secret.
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    /// Whether `mac` (64 hexadecimal digits) is this key's signature of `message`, in constant time.
    func authenticates(_ message: [UInt8], mac: Substring.UTF8View) -> Bool {
        guard mac.count == 64 else { return false }
        var code = [UInt8]()
        code.reserveCapacity(32)
        var high: UInt8?
        for byte in mac {
            guard let nibble = Self.nibble(byte) else { return false }
            if let first = high {
                code.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: message, using: SymmetricKey(data: secret))
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

/// A `NotificationKey` that cannot be made.
public enum InvalidNotificationKey: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer bytes than `NotificationKey.minimumBytes`.
    case tooShort(bytes: Int)
    /// The text is not base64.
    case notBase64

    /// For example `a notification key needs at least 32 bytes, got 16`.
    public var description: String {
        switch self {
        case .tooShort(let bytes): "a notification key needs at least \(NotificationKey.minimumBytes) bytes, got \(bytes)"
        case .notBase64: "a notification key must be base64 text"
        }
    }
}
