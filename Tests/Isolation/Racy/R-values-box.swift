// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// signal.values of Box values: an AsyncThrowingStream hands each Box to another task.
import Ripple

final class Box { var n = 0 }

func run(_ subject: Subject<Box>) async throws {
    for try await box in subject.values {
        box.n += 1
    }
}
