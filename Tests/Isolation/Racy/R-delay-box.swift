// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// delay on Box values: each Box is delivered later on the scheduler's thread.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    subject.delay(.milliseconds(10), on: BackgroundScheduler()).subscribeNext { box in box.n += 1 }
    let box = Box()
    subject.sendNext(box)
    box.n += 1
}
run()
