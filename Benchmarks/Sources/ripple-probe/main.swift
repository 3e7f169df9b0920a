import Foundation
import RippleWorkloads

// ripple-probe: one workload of the suite, Ripple only, exactly N operations, once: no warm-up,
// no timing, no counting. What the instruction gate (.ci/instruction-gate) runs under callgrind,
// so the work is the same on every run; the benchmarks themselves run on package-benchmark
// (`swift package benchmark`, Benchmarks/README.md).
//
// Usage: ripple-probe --workload NAME --operations N
let usage = "usage: ripple-probe --workload NAME --operations N"
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ripple-probe: \(message)\n\(usage)\n".utf8))
    exit(2)
}

var workload: String?, operations: Int?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--workload":
        guard let name = arguments.popFirst() else { fail("--workload needs a name") }
        workload = name
    case "--operations":
        guard let word = arguments.popFirst(), let count = Int(word), count > 0 else { fail("--operations needs a positive number") }
        operations = count
    default:
        fail("unknown argument '\(argument)'")
    }
}
guard let workload, let operations else { fail("both --workload and --operations are needed") }
guard let found = Suite.cases.first(where: { $0.workload == workload && $0.system == System.ripple }) else {
    let names = Suite.cases.filter { $0.system == System.ripple }.map(\.workload).joined(separator: ", ")
    fail("no Ripple workload is named '\(workload)' (workloads: \(names))")
}
let iteration = found.make(operations)
iteration.run()
print("\(workload): \(iteration.operations) operations")
