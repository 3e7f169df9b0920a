// expect-error: sending value of non-Sendable type '() async -> ()' risks causing data races
// A Subject<Box> captured by a detached task that sends on it while the main code subscribes.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    Task.detached {
        subject.sendNext(Box())
    }
    subject.subscribeNext { box in box.n += 1 }
}
run()
