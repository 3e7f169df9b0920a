// A @MainActor class that observe(owner: self)s a subject sent to only from the main actor.
import Ripple

@MainActor final class Screen {
    var count = 0
    var last = ""
    func bind(_ titles: Subject<String>) {
        titles.observe(owner: self) { screen, title in
            screen.count += 1
            screen.last = title
        }
    }
}

@MainActor func run() {
    let titles = Subject<String>()
    let screen = Screen()
    screen.bind(titles)
    titles.sendNext("a")
    titles.sendNext("b")
    precondition(screen.count == 2 && screen.last == "b", "\(screen.count) \(screen.last)")
}
run()
