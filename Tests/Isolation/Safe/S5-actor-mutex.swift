// An actor sends on a subject it owns; the subscriber (nonisolated) accumulates into a Mutex.
import Ripple
import Synchronization

final class Box: Sendable { let m = Mutex(0) }

actor Producer {
    let ticks = Subject<Int>()
    private var sent = 0
    func emit(_ n: Int) {
        sent += n
        ticks.sendNext(n)
    }
    func finish() { ticks.sendCompleted() }
}

nonisolated func run() async -> Int {
    let producer = Producer()
    let box = Box()
    producer.ticks.subscribeNext { v in box.m.withLock { $0 += v } }
    for i in 1...10 { await producer.emit(i) }
    await producer.finish()
    return box.m.withLock { $0 }
}

let total = await run()
precondition(total == 55, "\(total)")
