// expect-error: type 'Box' does not conform to the 'Sendable' protocol
// deliver(on: ActorScheduler) with Box values: the Box crosses into the actor's executor.
import Ripple

final class Box { var n = 0 }
actor Store {}

func run() {
    let subject = Subject<Box>()
    subject.deliver(on: ActorScheduler(Store())).subscribeNext { box in box.n += 1 }
    let box = Box()
    subject.sendNext(box)
    box.n += 1
}
run()
