// expect-error: capture of 'replay' with non-Sendable type 'ReplaySubject<Box>' in a '@Sendable' closure
// A ReplaySubject<Box> captured in a @Sendable closure run on another thread.
import Dispatch
import Ripple

final class Box { var n = 0 }

func run() {
    let replay = ReplaySubject<Box>(capacity: 3)
    let work: @Sendable () -> Void = {
        replay.sendNext(Box())
    }
    DispatchQueue.global().async(execute: work)
    replay.subscribeNext { box in box.n += 1 }
}
run()
