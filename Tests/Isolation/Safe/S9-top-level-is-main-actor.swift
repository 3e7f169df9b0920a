// Top-level code is main-actor code in Swift 6: subscriptions made here take the main actor.
// README's quick start, run as a script: a cold signal subscribed and sent on the main thread is
// delivered synchronously, in order, with its cleanup — no hop, no waiting. Runs to exit 0.
import Ripple

var log: [String] = []
let numbers = Signal<Int> { subscriber in
    for n in 1...3 {
        if subscriber.isDisposed { break }
        subscriber.sendNext(n)
    }
    subscriber.sendCompleted()
    return ActionDisposable { log.append("cleaned up") }
}
let subscription = numbers.subscribe(
    next: { log.append("next \($0)") },
    error: { log.append("error \($0)") },
    completed: { log.append("completed") })
precondition(log == ["next 1", "next 2", "next 3", "completed", "cleaned up"], "\(log)")
subscription.dispose()

// A subject sent to on the main thread: delivered before sendNext returns.
let subject = BehaviorSubject(0)
var latest = -1
subject.subscribeNext { latest = $0 }
subject.sendNext(7)
precondition(latest == 7, "latest \(latest)")
