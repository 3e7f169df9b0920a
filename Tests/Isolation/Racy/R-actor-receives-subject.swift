// expect-error: sending 'subject' risks causing data races
// expect-error: sending 'subject' to actor-isolated instance method 'bind'
// A Subject<Box> handed to an actor, which subscribes on its executor, while the caller keeps
// sending on it from outside.
import Ripple

final class Box { var n = 0 }

actor Counter {
    var total = 0
    func bind(_ subject: Subject<Box>) {
        subject.subscribeNext { box in self.total += box.n }
    }
}

func run(_ counter: Counter) async {
    let subject = Subject<Box>()
    await counter.bind(subject)
    subject.sendNext(Box())
}
