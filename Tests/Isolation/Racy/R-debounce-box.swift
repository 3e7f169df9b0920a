// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// debounce on Box values.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    subject.debounce(.milliseconds(10), on: BackgroundScheduler()).subscribeNext { box in box.n += 1 }
    subject.sendNext(Box())
}
run()
