import Foundation
import RippleWorkloads

// ripple-probe: one workload of the suite, Ripple by default, exactly N operations, once: no
// warm-up, no timing, no counting. What the instruction gate (.ci/instruction-gate) runs under
// callgrind, so the work is the same on every run; `--system` runs another system of the
// workload the same way (for comparing instruction counts); the benchmarks themselves run on
// package-benchmark (`swift package benchmark`, Benchmarks/README.md).
//
// Usage: ripple-probe --workload NAME --operations N [--system SYSTEM]
let usage = "usage: ripple-probe --workload NAME --operations N [--system SYSTEM]"
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ripple-probe: \(message)\n\(usage)\n".utf8))
    exit(2)
}

var workload: String?, operations: Int?, system = System.ripple
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--workload":
        guard let name = arguments.popFirst() else { fail("--workload needs a name") }
        workload = name
    case "--operations":
        guard let word = arguments.popFirst(), let count = Int(word), count > 0 else { fail("--operations needs a positive number") }
        operations = count
    case "--system":
        guard let name = arguments.popFirst() else { fail("--system needs a name") }
        system = name
    default:
        fail("unknown argument '\(argument)'")
    }
}
guard let workload, let operations else { fail("both --workload and --operations are needed") }
guard let found = Suite.cases.first(where: { $0.workload == workload && $0.system == system }) else {
    let names = Suite.cases.filter { $0.system == system }.map(\.workload).joined(separator: ", ")
    let systems = Suite.cases.filter { $0.workload == workload }.map(\.system).joined(separator: ", ")
    fail("no \(system) workload is named '\(workload)' (\(system)'s workloads: \(names.isEmpty ? "none" : names); \(workload)'s systems: \(systems.isEmpty ? "none" : systems))")
}
let iteration = found.make(operations)
iteration.run()
print("\(workload) (\(system)): \(iteration.operations) operations")
