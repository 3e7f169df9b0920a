// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// throttle on Box values: a Box is held and delivered from the scheduler.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    subject.throttle(.milliseconds(10), on: BackgroundScheduler()).subscribeNext { box in box.n += 1 }
    subject.sendNext(Box())
}
run()
