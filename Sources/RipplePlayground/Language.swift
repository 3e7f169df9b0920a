/// The script language as `ripple-playground help` prints it: every statement and every
/// operator, each with one line on what it means. The tests check that each operator's
/// example parses, so the reference cannot drift from the parser.
public enum Language {
    /// One row of the reference: how it is written, an example, and what it means.
    public struct Entry: Sendable {
        /// The form, e.g. `takeWhile PRED`.
        public let syntax: String
        /// A complete instance, e.g. `takeWhile <3` (for operators, what follows `|>`).
        public let example: String
        /// One line on what it does.
        public let meaning: String

        /// The statement's or operator's first word.
        public var keyword: String { String(syntax.prefix { $0 != " " }) }
    }

    /// Every statement.
    public static let statements: [Entry] = [
        Entry(syntax: "subject NAME", example: "subject s", meaning: "a Subject: subscribers see only later values"),
        Entry(syntax: "behavior NAME VALUE", example: "behavior b 0", meaning: "a BehaviorSubject with a default value"),
        Entry(syntax: "replay NAME [CAPACITY] [maxage DURATION]", example: "replay r 2 maxage 50ms",
              meaning: "a ReplaySubject (unlimited without CAPACITY)"),
        Entry(syntax: "cold NAME \"MARBLES\"", example: "cold c \"-a-(bc)-|\"",
              meaning: "a cold signal: one character per 10 ms; - nothing, | completed, # error, (ab) one frame"),
        Entry(syntax: "interval NAME PERIOD", example: "interval i 40ms",
              meaning: "a cold signal: 0, 1, 2, … every PERIOD after each subscription; never completes"),
        Entry(syntax: "timer NAME DUE", example: "timer t 50ms", meaning: "a cold signal: 0 at DUE after each subscription, then completed"),
        Entry(syntax: "let NAME = SOURCE |> OP |> OP …", example: "let d = s |> map +1",
              meaning: "a derived signal (any number of operators, below)"),
        Entry(syntax: "let NAME = Signal.merge NAME … [|> OP …]", example: "let m = Signal.merge a b c",
              meaning: "the array forms: Signal.merge, Signal.concat, Signal.zip and Signal.combineLatest ([a,b,…])"),
        Entry(syntax: "subscribe SUB to SOURCE", example: "subscribe a to s", meaning: "a subscriber; each event it gets prints at once"),
        Entry(syntax: "observe SUB to SOURCE owner NAME", example: "observe a to s owner o",
              meaning: "a weak-owner observer: nothing once its owner is released"),
        Entry(syntax: "dispose SUB", example: "dispose a", meaning: "ends that subscription"),
        Entry(syntax: "send NAME VALUE [VALUE …]", example: "send s 1 2 3", meaning: "sendNext each value, in order"),
        Entry(syntax: "complete NAME", example: "complete s", meaning: "sendCompleted"),
        Entry(syntax: "fail NAME [MESSAGE]", example: "fail s oops", meaning: "sendError"),
        Entry(syntax: "wait DURATION", example: "wait 100ms", meaning: "advance virtual time (NNms or NNs), running everything due"),
        Entry(syntax: "marbles", example: "marbles", meaning: "draw the marble diagram of everything so far"),
        Entry(syntax: "print TEXT", example: "print hello", meaning: "print TEXT as a line"),
        Entry(syntax: "promise NAME", example: "promise p", meaning: "a SwiftSignalKit Promise; subscribing is get()"),
        Entry(syntax: "valuepromise NAME VALUE [ignoreRepeated]", example: "valuepromise v 0",
              meaning: "a ValuePromise with an initial value"),
        Entry(syntax: "set NAME SOURCE | set NAME VALUE", example: "set p s",
              meaning: "Promise.set(SOURCE) (replaces the previous source) / ValuePromise.set(VALUE)"),
        Entry(syntax: "connect NAME", example: "connect d", meaning: "connects a signal made with '|> publish' or '|> multicast …'"),
        Entry(syntax: "owner NAME", example: "owner o", meaning: "an owner object for observe"),
        Entry(syntax: "release NAME", example: "release o", meaning: "drops the last reference to the owner, ending its lifetime"),
    ]

    /// Every operator (`OP` in `let`). PRED is `>N`, `<N`, `even`, `odd`, `=VALUE` or `!=VALUE`;
    /// NAME is another signal of the script.
    public static let operators: [Entry] = [
        Entry(syntax: "map +N | map *N", example: "map +1", meaning: "adds or multiplies each integer value"),
        Entry(syntax: "filter PRED", example: "filter even", meaning: "only the values PRED accepts"),
        Entry(syntax: "compactMap int", example: "compactMap int", meaning: "only the values that are integers; words are dropped"),
        Entry(syntax: "take N", example: "take 2", meaning: "the first N values, then completed"),
        Entry(syntax: "skip N", example: "skip 2", meaning: "drops the first N values"),
        Entry(syntax: "takeWhile PRED", example: "takeWhile <3", meaning: "values while PRED holds; the first that fails completes"),
        Entry(syntax: "takeWhile PRED inclusive", example: "takeWhile <3 inclusive", meaning: "like takeWhile, and sends the first value that fails before completing"),
        Entry(syntax: "skipWhile PRED", example: "skipWhile <3", meaning: "drops values while PRED holds, then forwards all"),
        Entry(syntax: "takeUntil NAME", example: "takeUntil s", meaning: "values until NAME sends or completes, then completed"),
        Entry(syntax: "skipUntil NAME", example: "skipUntil s", meaning: "drops values until NAME sends one; nothing passes if NAME completes first"),
        Entry(syntax: "takeDuring OWNER", example: "takeDuring o", meaning: "values until OWNER is released, then completed"),
        Entry(syntax: "first", example: "first", meaning: "the first value, then completed"),
        Entry(syntax: "last", example: "last", meaning: "the last value, when the source completes"),
        Entry(syntax: "takeLast N", example: "takeLast 2", meaning: "the last N values, when the source completes"),
        Entry(syntax: "elementAt N", example: "elementAt 2", meaning: "the value at index N (from 0), then completed; an error if the source completes first"),
        Entry(syntax: "takeFor DURATION", example: "takeFor 50ms", meaning: "values for DURATION after subscribing, then completed"),
        Entry(syntax: "skipFor DURATION", example: "skipFor 50ms", meaning: "drops the values of the first DURATION after subscribing"),
        Entry(syntax: "distinct [ignoringCase]", example: "distinct ignoringCase",
              meaning: "drops a value equal to the one before (with ignoringCase: equal ignoring case)"),
        Entry(syntax: "scan +", example: "scan +", meaning: "the running sum (the seed 0 is not sent)"),
        Entry(syntax: "reduce +", example: "reduce +", meaning: "the sum, once, on completion (0 for no values)"),
        Entry(syntax: "collect", example: "collect", meaning: "all values as one [a,b,…], on completion"),
        Entry(syntax: "buffer N", example: "buffer 2", meaning: "arrays of N values; completion sends the rest"),
        Entry(syntax: "buffer DURATION", example: "buffer 50ms", meaning: "the values of each span, as one array at its end"),
        Entry(syntax: "buffer N DURATION", example: "buffer 3 50ms", meaning: "the values of each DURATION window as one array, sent early when N are in (which starts the next window)"),
        Entry(syntax: "ignoreValues", example: "ignoreValues", meaning: "only the terminal event"),
        Entry(syntax: "materialize", example: "materialize", meaning: "each event as a value: next(V), error(M), completed"),
        Entry(syntax: "dematerialize", example: "dematerialize", meaning: "values next(V), error(M), completed back into events"),
        Entry(syntax: "startWith VALUE", example: "startWith 0", meaning: "sends VALUE first, then the source"),
        Entry(syntax: "delay DURATION", example: "delay 20ms", meaning: "shifts values and completion later; errors pass at once"),
        Entry(syntax: "throttle DURATION", example: "throttle 30ms", meaning: "the first value, then at most the latest one per window"),
        Entry(syntax: "throttle DURATION first", example: "throttle 30ms first", meaning: "the first value of each window; the rest are dropped"),
        Entry(syntax: "debounce DURATION", example: "debounce 30ms", meaning: "a value once DURATION passed without a newer one"),
        Entry(syntax: "timeout DURATION", example: "timeout 50ms", meaning: "fails unless the source ends within DURATION"),
        Entry(syntax: "timeout DURATION NAME", example: "timeout 50ms s", meaning: "switches to NAME unless the source ends within DURATION"),
        Entry(syntax: "sample NAME", example: "sample s", meaning: "the latest value each time NAME sends"),
        Entry(syntax: "sample NAME VALUE", example: "sample s 0", meaning: "like sample NAME, with VALUE for the ticks before the first value"),
        Entry(syntax: "withLatest NAME", example: "withLatest s", meaning: "(a,b): each value with NAME's latest; dropped until NAME has sent one"),
        Entry(syntax: "merge NAME", example: "merge s", meaning: "both signals' values, interleaved by time"),
        Entry(syntax: "concat NAME", example: "concat s", meaning: "NAME after the source completes"),
        Entry(syntax: "then NAME", example: "then s", meaning: "NAME after the source completes; its values ignored"),
        Entry(syntax: "zip NAME [NAME]", example: "zip s s", meaning: "pairs (a,b), or with two names (a,b,c), in order"),
        Entry(syntax: "combineLatest NAME [NAME]", example: "combineLatest s s",
              meaning: "(a,b) or (a,b,c) of the latest values, once all sent"),
        Entry(syntax: "zip NAME NAME NAME", example: "zip s s s", meaning: "the four-signal form: (a,b,c,d), in order"),
        Entry(syntax: "combineLatest NAME NAME NAME", example: "combineLatest s s s", meaning: "(a,b,c,d) of the latest values, once all sent"),
        Entry(syntax: "combinePrevious [VALUE]", example: "combinePrevious 0", meaning: "(previous,current) for each value; VALUE is the first one's previous, else pairs start at the second"),
        Entry(syntax: "flatMap NAME", example: "flatMap s", meaning: "each value v starts a run of NAME, sending (v,x); runs interleave"),
        Entry(syntax: "concatMap NAME", example: "concatMap s", meaning: "like flatMap, one run at a time, in order"),
        Entry(syntax: "flatMapLatest NAME", example: "flatMapLatest s", meaning: "like flatMap; a new value cancels the previous run"),
        Entry(syntax: "flatMapMax N NAME", example: "flatMapMax 2 s",
              meaning: "like flatMap, at most N runs at once; later values wait their turn, in order"),
        Entry(syntax: "flatMapFirst NAME", example: "flatMapFirst s",
              meaning: "like flatMap; values that arrive while a run is going are ignored"),
        Entry(syntax: "flatten", example: "flatten",
              meaning: "each value names a cold signal or subject; their events, merged"),
        Entry(syntax: "switchToLatest", example: "switchToLatest",
              meaning: "each value names a cold signal or subject; the latest one's events only"),
        Entry(syntax: "catch NAME", example: "catch s", meaning: "on error, switches to NAME"),
        Entry(syntax: "retry N", example: "retry 2", meaning: "on error, subscribes again, up to N times"),
        Entry(syntax: "retryBackoff N DURATION", example: "retryBackoff 3 10ms",
              meaning: "on error, subscribes again after DURATION, doubling the wait each time, up to N times"),
        Entry(syntax: "log [LABEL]", example: "log clicks", meaning: "prints [LABEL] next(V) … for each event (LABEL: the let's name)"),
        Entry(syntax: "onNext [LABEL]", example: "onNext clicks", meaning: "prints [LABEL] onNext V before passing each value on"),
        Entry(syntax: "onError [LABEL]", example: "onError", meaning: "prints [LABEL] onError MESSAGE before passing the error on"),
        Entry(syntax: "onCompleted [LABEL]", example: "onCompleted", meaning: "prints [LABEL] onCompleted before passing completion on"),
        Entry(syntax: "onSubscribe [LABEL]", example: "onSubscribe", meaning: "prints [LABEL] onSubscribe at each subscription, before the source's"),
        Entry(syntax: "onDispose [LABEL]", example: "onDispose", meaning: "prints [LABEL] onDispose once per subscription, however it ends"),
        Entry(syntax: "subscribeOn", example: "subscribeOn", meaning: "subscribes when the clock next runs (the next wait), not at once"),
        Entry(syntax: "deliverOn [N POLICY]", example: "deliverOn 1 dropOldest",
              meaning: "events wait for the clock (the next wait); N values at most (dropOldest, dropNewest, fail)"),
        Entry(syntax: "replay", example: "replay", meaning: "connects at once; each subscriber gets every value so far"),
        Entry(syntax: "replayLast", example: "replayLast", meaning: "connects at once; each subscriber gets the latest value"),
        Entry(syntax: "replayLazily [N]", example: "replayLazily 2",
              meaning: "connects at the first subscriber; each one gets up to N values so far (all without N)"),
        Entry(syntax: "publish", example: "publish", meaning: "shares one run, started by 'connect NAME'; last in its let unless autoconnect follows"),
        Entry(syntax: "multicast subject|behavior VALUE|replay [N]", example: "multicast behavior 0",
              meaning: "like publish, into a new subject of that kind"),
        Entry(syntax: "autoconnect", example: "publish |> autoconnect",
              meaning: "after publish or multicast: the first subscriber connects, the last leaving disconnects"),
        Entry(syntax: "share", example: "share", meaning: "shares one run while anyone is subscribed"),
        Entry(syntax: "shareReplay N", example: "shareReplay 1",
              meaning: "like share; a late subscriber first gets the run's last N values"),
    ]

    /// The reference as `help` prints it.
    public static var reference: String {
        func table(_ entries: [Entry]) -> [String] {
            let width = entries.map(\.syntax.count).max() ?? 0
            return entries.map { "  " + $0.syntax + String(repeating: " ", count: width - $0.syntax.count + 2) + $0.meaning }
        }
        return ([
            "Scripts: one statement per line; '#' starts a comment; a value with spaces is quoted.",
            "Values are integers or words; durations NNms or NNs; the clock is virtual and moves only with wait.",
            "",
            "Statements:",
        ] + table(statements) + [
            "",
            "Operators (let NAME = SOURCE |> OP |> OP …); PRED is >N, <N, even, odd, =VALUE or !=VALUE:",
        ] + table(operators) + [
            "",
            "Events print as 'SUB: next VALUE', 'SUB: error MESSAGE', 'SUB: completed'. Arithmetic or a",
            "comparison on a word fails that stream with an error naming the value.",
        ]).joined(separator: "\n")
    }
}
