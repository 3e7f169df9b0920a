/// The built-in demos: scripts shipped in the executable, runnable by name (`demo NAME`) or
/// as text (`run -`). The subject demos reproduce seeds/003 event for event.
public struct Demo: Sendable {
    /// The name `demo NAME` runs it by, such as `"replay-maxage"`.
    ///
    ///     Demo.all.first { $0.name == "subject" }?.summary   // "RACSubject: no history; …"
    public let name: String
    /// One line on what the demo shows, printed by `ripple-playground list`.
    ///
    ///     for demo in Demo.all { print(demo.name, demo.summary) }
    public let summary: String
    /// The demo's script, in the playground language, runnable with `Script.parse(_:)` and `Interpreter`.
    ///
    ///     if case .success(let script) = Script.parse(Demo.all[0].script) {
    ///         Interpreter { print($0) }.run(script)
    ///     }
    public let script: String

    /// Every built-in demo, in tour order (the order `ripple-playground` with no argument runs them).
    ///
    ///     print(Demo.all.map(\.name).joined(separator: ", "))   // subject, behavior-subject, …
    public static let all: [Demo] = [
        Demo(name: "subject", summary: "RACSubject: no history; a subscriber sees only later values", script: """
            # seeds/003: RACSubject keeps no history: a value sent before anyone subscribed is lost.
            subject subject
            send subject ooo
            subscribe s1 to subject
            send subject aaa
            subscribe s2 to subject
            send subject bbb
            """),
        Demo(name: "behavior-subject", summary: "RACBehaviorSubject: each new subscriber first gets the latest value", script: """
            # seeds/003: a behaviour subject replays its latest value (nil by default) to each new subscriber.
            behavior b nil
            subscribe s1 to b
            send b 1
            subscribe s2 to b
            send b 2
            subscribe s3 to b
            send b 3
            subscribe s4 to b
            send b 4
            complete b
            """),
        Demo(name: "replay-subject", summary: "RACReplaySubject: every new subscriber gets every value so far", script: """
            # seeds/003: a replay subject with no capacity replays everything to each new subscriber.
            replay r
            subscribe s1 to r
            send r 1
            subscribe s2 to r
            send r 2
            subscribe s3 to r
            """),
        Demo(name: "replay-capacity", summary: "ReplaySubject(capacity: 2): only the last two values are replayed", script: """
            # Capacity bounds the cache: a late subscriber gets the last 2 values, then the end.
            replay recent 2
            send recent a b c d
            complete recent
            subscribe late to recent
            """),
        Demo(name: "replay-maxage", summary: "ReplaySubject(maxAge:): values older than the age are never replayed", script: """
            # maxage drops values older than 50ms on the virtual clock, even when nothing new is sent.
            replay fresh 10 maxage 50ms
            send fresh a
            wait 30ms
            send fresh b
            wait 30ms
            subscribe at60 to fresh
            wait 30ms
            print "at 90ms a is 90ms old and b 60ms: both expired, at90 gets nothing"
            subscribe at90 to fresh
            """),
        Demo(name: "cold-vs-hot", summary: "a cold signal runs once per subscriber; a subject is shared", script: """
            # Cold: each subscription starts its own run of the marbles at its own time.
            cold c "-1-2|"
            subscribe first to c
            wait 20ms
            subscribe second to c
            wait 50ms
            # Hot: a subject is shared; a late subscriber misses what was sent before.
            subject h
            subscribe early to h
            send h x
            wait 10ms
            subscribe late to h
            send h y
            marbles
            """),
        Demo(name: "multicast", summary: "publish + connect: one run of a cold signal shared by all subscribers", script: """
            # publish turns the cold signal hot: nothing runs until connect, then both share one run.
            cold ticks "-a-b-c|"
            let shared = ticks |> publish
            subscribe s1 to shared
            subscribe s2 to shared
            wait 20ms
            connect shared
            wait 30ms
            print "s3 joins late and misses a and b"
            subscribe s3 to shared
            wait 50ms
            """),
        Demo(name: "map-filter", summary: "map and filter, and what happens to a value that is not a number", script: """
            subject numbers
            let doubledEvens = numbers |> filter even |> map *10
            subscribe s to doubledEvens
            send numbers 1 2 3 4
            let sums = numbers |> scan +
            subscribe total to sums
            send numbers 5 six 7
            """),
        Demo(name: "merge-concat", summary: "merge interleaves by time; concat waits for the first to complete", script: """
            cold a "-1--2|"
            cold b "--x--y|"
            let merged = a |> merge b
            let concatenated = a |> concat b
            subscribe m to merged
            subscribe c to concatenated
            wait 120ms
            marbles
            """),
        Demo(name: "combinelatest-zip", summary: "combineLatest pairs the latest values; zip pairs them in order", script: """
            subject letters
            subject digits
            let latest = letters |> combineLatest digits
            let pairs = letters |> zip digits
            subscribe cl to latest
            subscribe z to pairs
            send letters a
            send digits 1
            send letters b c
            send digits 2
            """),
        Demo(name: "throttle-debounce", summary: "throttle: first, then the latest per window; debounce: after quiet", script: """
            subject typing
            let throttled = typing |> throttle 30ms
            let debounced = typing |> debounce 30ms
            subscribe t to throttled
            subscribe d to debounced
            send typing h
            wait 10ms
            send typing he
            wait 10ms
            send typing hel
            wait 60ms
            send typing help
            wait 50ms
            marbles
            """),
        Demo(name: "promise", summary: "SwiftSignalKit Promise: set replaces the source, get replays the latest", script: """
            # seeds/000 testPromise1: get() before any value sends nothing; set runs the source at once.
            promise p
            subscribe get1 to p
            cold source "a----b"
            set p source
            subscribe get2 to p
            wait 60ms
            cold other "z"
            set p other
            """),
        Demo(name: "value-promise", summary: "SwiftSignalKit ValuePromise with ignoreRepeated", script: """
            # seeds/000 testValuePromise1: the current value first, then each new one; repeats are ignored.
            valuepromise v testA ignoreRepeated
            subscribe d1 to v
            set v testA---testB
            set v testA---testB
            subscribe d2 to v
            dispose d1
            set v testC
            """),
        Demo(name: "delegate", summary: "replacing a delegate: weak-owner observers stop when the owner goes", script: """
            # A download reports progress through a subject, not a delegate protocol.
            subject progress
            owner screen
            observe statusLine to progress owner screen
            subscribe logger to progress
            send progress 10 50
            print "the screen is released"
            release screen
            send progress 100
            complete progress
            """),
    ]

    /// The demo named `name`, if any.
    public static func named(_ name: String) -> Demo? {
        all.first { $0.name == name }
    }
}
