// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// observe(owner:on:) with Box values: the observer runs on the scheduler's thread.
import Ripple

final class Box { var n = 0 }
final class Owner { var seen = 0 }

func run() {
    let subject = Subject<Box>()
    let owner = Owner()
    subject.observe(owner: owner, on: BackgroundScheduler()) { owner, box in
        owner.seen += box.n
    }
    subject.sendNext(Box())
}
run()
