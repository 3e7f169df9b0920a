// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// A Signal<Box> subscribed on a background scheduler: the producer's Box crosses to a pool thread.
import Ripple

final class Box { var n = 0 }

func run() {
    let shared = Box()
    let signal = Signal<Box> { subscriber in
        subscriber.sendNext(shared)
        subscriber.sendCompleted()
        return nil
    }
    signal.subscribe(on: BackgroundScheduler()).subscribeNext { box in box.n += 1 }
    shared.n += 1
}
run()
