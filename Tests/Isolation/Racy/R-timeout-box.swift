// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// timeout on Box values: the timer's scheduler and the sender race on the subscription.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    subject.timeout(.milliseconds(10), on: BackgroundScheduler()).subscribeNext { box in box.n += 1 }
    subject.sendNext(Box())
}
run()
