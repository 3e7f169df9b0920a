// expect-error: passing closure as a 'sending' parameter risks causing data races
// expect-error: closure captures main actor-isolated 'subject'
// A @MainActor subscription to a Subject<Box> that a detached task sends on: the Box would hop
// to the main actor while the task still holds it.
import Ripple

final class Box { var n = 0 }

@MainActor
func bind(_ subject: Subject<Box>) {
    subject.subscribeNext { box in box.n += 1 }
    Task.detached {
        let box = Box()
        subject.sendNext(box)
        box.n += 1
    }
}
