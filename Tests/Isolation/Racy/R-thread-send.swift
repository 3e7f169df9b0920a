// expect-error: capture of 'subject' with non-Sendable type 'Subject<Box>' in a '@Sendable' closure
// A Subject<Box> captured by a Thread's block that sends on it while the main code subscribes.
import Foundation
import Ripple

final class Box { var n = 0 }

func run() {
    let subject = Subject<Box>()
    let thread = Thread {
        subject.sendNext(Box())
    }
    thread.start()
    subject.subscribeNext { box in box.n += 1 }
}
run()
