// `for try await v in signal.values` in an async function.
import Ripple

func sum(_ signal: Signal<Int>) async throws -> Int {
    var total = 0
    for try await v in signal.values {
        total += v
    }
    return total
}

nonisolated func runNonisolated() async throws -> Int {
    try await sum(Signal.from([1, 2, 3]))
}

let a = try await sum(Signal.from([1, 2, 3, 4]))
let b = try await runNonisolated()
precondition(a == 10 && b == 6, "\(a) \(b)")
