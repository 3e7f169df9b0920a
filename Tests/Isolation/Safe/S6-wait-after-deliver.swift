// waitUntilCompleted after deliver(on:), then reading a lock-guarded result.
import Ripple
import Synchronization

final class Results: Sendable { let m = Mutex<[Int]>([]) }

func run() throws -> [Int] {
    let results = Results()
    try Signal.from([1, 2, 3])
        .deliver(on: BackgroundScheduler())
        .onNext { v in results.m.withLock { $0.append(v) } }
        .waitUntilCompleted(timeout: .seconds(120))  // a hang guard: a busy machine may take seconds
    return results.m.withLock { $0 }
}
let got = try run()
precondition(got == [1, 2, 3], "\(got)")
