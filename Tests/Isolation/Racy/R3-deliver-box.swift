// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// A non-Sendable Box delivered on a background scheduler: the subscriber mutates it on a pool
// thread while the sender keeps mutating it.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    subject.deliver(on: BackgroundScheduler()).subscribeNext { box in box.n += 1 }
    let box = Box()
    subject.sendNext(box)
    box.n += 1
}
run()
