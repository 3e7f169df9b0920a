import Foundation

// ripple-bench: every workload, every system, one process, systems alternating.
// Usage: ripple-bench [--csv] [--quick] [--filter WORD] [--workload NAME] [--operations N]
//   --workload NAME   only the workload named exactly NAME (--filter matches parts: fanout-10
//                     is also in fanout-100 and behavior-fanout-10)
//   --operations N    Ripple only, each workload's size fixed at N operations (fanout-10: N / 10
//                     sends), one repetition, no warm-up: the same work on every run, for
//                     instruction counts (.ci/instruction-gate); the times it prints mean little
let usage = "usage: ripple-bench [--csv] [--quick] [--filter WORD] [--workload NAME] [--operations N]"
var csv = false, quick = false, filter: String?, exact: String?, operations: Int?
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
    case "--workload":
        guard let name = arguments.popFirst() else {
            FileHandle.standardError.write(Data("ripple-bench: --workload needs a name\n".utf8))
            exit(2)
        }
        exact = name
    case "--operations":
        guard let word = arguments.popFirst(), let count = Int(word), count > 0 else {
            FileHandle.standardError.write(Data("ripple-bench: --operations needs a positive number\n".utf8))
            exit(2)
        }
        operations = count
    default:
        FileHandle.standardError.write(Data("ripple-bench: unknown argument '\(argument)'\n\(usage)\n".utf8))
        exit(2)
    }
}

let harness = operations == nil
    ? Harness(repetitions: quick ? 5 : 7)
    : Harness(repetitions: 1, warmUp: false, systems: [System.ripple])
let workloads = Workloads(scale: quick ? 100 : 1, fixedSize: operations)
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

if let exact, !plan.contains(where: { $0.0 == exact }) {
    let names = plan.map(\.0).joined(separator: ", ")
    FileHandle.standardError.write(Data("ripple-bench: no workload is named '\(exact)' (workloads: \(names))\n".utf8))
    exit(2)
}

var rows: [Row] = []
for (name, run) in plan where (filter.map({ name.contains($0) }) ?? true) && (exact.map({ name == $0 }) ?? true) {
    rows += run()
}
print(csv ? Report.csv(rows) : Report.table(rows))
