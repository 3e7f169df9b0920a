// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// retry(upTo:backoff:on:) of Box values: each retry subscribes again, and sends the attempt's Box,
// on the scheduler's thread.
import Ripple

final class Box { var n = 0 }

struct Failed: Error {}

func run() {
    let shared = Box()
    let signal = Signal<Box> { subscriber in
        subscriber.sendNext(shared)
        subscriber.sendError(Failed())
        return nil
    }
    signal.retry(upTo: 3, backoff: .constant(.milliseconds(10)), on: BackgroundScheduler())
        .subscribeNext { box in box.n += 1 }
    shared.n += 1
}
run()
