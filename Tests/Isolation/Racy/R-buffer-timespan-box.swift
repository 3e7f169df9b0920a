// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// buffer(timeSpan:on:) on Box values: the batch is sent from the scheduler's thread.
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    subject.buffer(timeSpan: .milliseconds(10), on: BackgroundScheduler()).subscribeNext { boxes in
        for box in boxes { box.n += 1 }
    }
    subject.sendNext(Box())
}
run()
