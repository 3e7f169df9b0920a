// A local var captured and mutated by a synchronous subscription, read afterwards (nonisolated).
import Ripple

func run() -> Int {
    var total = 0
    let subject = Subject<Int>()
    let d = subject.subscribeNext { total += $0 }
    subject.sendNext(1)
    subject.sendNext(2)
    d.dispose()
    return total
}

nonisolated func check() {
    let total = run()
    precondition(total == 3, "total \(total)")
}
check()
