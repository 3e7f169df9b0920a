import Foundation
@testable import Ripple

/// A thread-safe value for tests that capture state in `@Sendable` closures or share it
/// between threads.
final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: T
    init(_ value: T) { storage = value }
    var value: T {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
    @discardableResult
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&storage) } }
}

/// A test-only subscriber that records every event, thread-safely, for exact comparison.
final class Recorder<Value>: SubscriberProtocol, @unchecked Sendable {
    private let storage = Box<[Event<Value>]>([])

    var events: [Event<Value>] { storage.value }
    var values: [Value] { events.compactMap(\.value) }
    var isCompleted: Bool {
        if case .completed? = events.last { return true }
        return false
    }
    var isFailed: Bool { events.last?.error != nil }

    func sendNext(_ value: Value) { storage.mutate { $0.append(.next(value)) } }
    func sendError(_ error: any Error) { storage.mutate { $0.append(.error(error)) } }
    func sendCompleted() { storage.mutate { $0.append(.completed) } }
}

/// A simple error for tests.
struct TestError: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String = "boom") { self.message = message }
    var description: String { message }
}
