import Foundation
import RippleWorkloads

// ripple-probe: one workload of the suite, Ripple by default, exactly N operations, once: no
// warm-up, no timing, no counting. What the instruction gate (.ci/instruction-gate) runs under
// callgrind, so the work is the same on every run; `--system` runs another system of the
// workload the same way (for comparing instruction counts); the benchmarks themselves run on
// package-benchmark (`swift package benchmark`, Benchmarks/README.md). With `--held H` it runs
// one of the size sweeps (Sweeps.swift, Ripple only): H of the operation's kind held, then N
// operations; the gate runs each at two sizes and fails when the cost per operation grows.
//
// Usage: ripple-probe --workload NAME --operations N [--system SYSTEM]
//        ripple-probe --workload SWEEP --held H --operations N
let usage = """
    usage: ripple-probe --workload NAME --operations N [--system SYSTEM]
           ripple-probe --workload SWEEP --held H --operations N
    """
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ripple-probe: \(message)\n\(usage)\n".utf8))
    exit(2)
}

var workload: String?, operations: Int?, held: Int?, requestedSystem: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--workload":
        guard let name = arguments.popFirst() else { fail("--workload needs a name") }
        workload = name
    case "--operations":
        guard let word = arguments.popFirst(), let count = Int(word), count > 0 else { fail("--operations needs a positive number") }
        operations = count
    case "--held":
        guard let word = arguments.popFirst(), let count = Int(word), count > 0 else { fail("--held needs a positive number") }
        held = count
    case "--system":
        guard let name = arguments.popFirst() else { fail("--system needs a name") }
        requestedSystem = name
    default:
        fail("unknown argument '\(argument)'")
    }
}
guard let workload, let operations else { fail("both --workload and --operations are needed") }
let sweepNames = Sweeps.workloads.map(\.name).joined(separator: ", ")
if let sweep = Sweeps.workloads.first(where: { $0.name == workload }) {
    guard let held else { fail("\(workload) is a size sweep: it needs --held H (how many of its kind are held)") }
    if requestedSystem != nil { fail("\(workload) is a size sweep: Ripple only, no --system") }
    let iteration = sweep.make(held, operations)
    iteration.run()
    print("\(workload) (Ripple, held \(held)): \(iteration.operations) operations")
    exit(0)
}
if held != nil { fail("--held is for the size sweeps (\(sweepNames)); '\(workload)' is not one") }
let system = requestedSystem ?? System.ripple
guard let found = Suite.cases.first(where: { $0.workload == workload && $0.system == system }) else {
    let names = Suite.cases.filter { $0.system == system }.map(\.workload).joined(separator: ", ")
    let systems = Suite.cases.filter { $0.workload == workload }.map(\.system).joined(separator: ", ")
    fail("no \(system) workload is named '\(workload)' (\(system)'s workloads: \(names.isEmpty ? "none" : names); \(workload)'s systems: \(systems.isEmpty ? "none" : systems); size sweeps, with --held: \(sweepNames))")
}
let iteration = found.make(operations)
iteration.run()
print("\(workload) (\(system)): \(iteration.operations) operations")
