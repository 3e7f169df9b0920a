import Foundation

// ripple-bench: every workload, every system, one process, systems alternating.
// Usage: ripple-bench [--csv] [--quick] [--filter WORD]
var csv = false, quick = false, filter: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--csv": csv = true
    case "--quick": quick = true
    case "--filter":
        guard let word = arguments.popFirst() else {
            FileHandle.standardError.write(Data("ripple-bench: --filter needs a word\n".utf8))
            exit(2)
        }
        filter = word
    default:
        FileHandle.standardError.write(Data("ripple-bench: unknown argument '\(argument)'\nusage: ripple-bench [--csv] [--quick] [--filter WORD]\n".utf8))
        exit(2)
    }
}

let harness = Harness(repetitions: quick ? 5 : 7)
let workloads = Workloads(scale: quick ? 100 : 1)
let plan: [(String, () -> [Row])] = [
    ("fanout-1", { harness.measure(workloads.fanout(1)) }),
    ("fanout-10", { harness.measure(workloads.fanout(10)) }),
    ("fanout-100", { harness.measure(workloads.fanout(100)) }),
    ("fanout-1000", { harness.measure(workloads.fanout(1000)) }),
    ("behavior-fanout-10", { harness.measure(workloads.behaviorFanout()) }),
    ("replay-send", { harness.measure(workloads.replaySend()) }),
    ("replay-subscribe", { harness.measure(workloads.replaySubscribe()) }),
    ("cold-pipeline", { harness.measure(workloads.coldPipeline()) }),
    ("subscribe-dispose-10", { harness.measure(workloads.subscribeDispose(live: 10)) }),
    ("subscribe-dispose-1000", { harness.measure(workloads.subscribeDispose(live: 1_000)) }),
    ("subscribe-dispose-10000", { harness.measure(workloads.subscribeDispose(live: 10_000)) }),
    ("deliver-serial", { harness.measure(workloads.deliverSerial()) }),
    ("actor-hop", { harness.measure(workloads.actorHop()) }),
    ("contended-send", { harness.measure(workloads.contendedSend()) }),
    ("idle-subscriptions", { workloads.idleSubscriptions(harness: harness) }),
]

var rows: [Row] = []
for (name, run) in plan where filter.map({ name.contains($0) }) ?? true {
    rows += run()
}
print(csv ? Report.csv(rows) : Report.table(rows))
