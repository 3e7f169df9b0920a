// A cold pipeline subscribed and run on one thread, with a non-Sendable class as its value.
import Ripple

final class Box { var n = 0 }

func run() -> [Int] {
    var seen: [Int] = []
    let box = Box()
    Signal.from([1, 2, 3, 4])
        .map { v -> Box in box.n += v; return box }
        .filter { $0.n > 1 }
        .map { $0.n }
        .subscribe(next: { seen.append($0) }, completed: { seen.append(-1) })
    box.n += 100
    return seen
}
let seen = run()
precondition(seen == [3, 6, 10, -1], "\(seen)")
