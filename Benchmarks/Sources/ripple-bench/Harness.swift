import Foundation
import MallocCounter

/// One system's figure for one workload.
struct Row {
    let workload: String
    let system: String
    var nsPerOp: Double
    var allocsPerOp: Double
    var bytesPerSub: Double?
}

/// A workload: for each system, a closure that runs one timed repetition and returns the
/// number of operations it performed. `prepare` runs untimed before each repetition.
struct Workload {
    let name: String
    let systems: [(name: String, run: () -> Int)]
}

/// A fixed system name order, so the floor and the peers read the same in every table.
enum System {
    static let ripple = "Ripple"
    static let openCombine = "OpenCombine"
    static let notificationCenter = "NotificationCenter"
    static let floor = "floor"
    static let peers: Set<String> = [openCombine, notificationCenter]
}

/// Runs workloads: a warm-up, then `repetitions` timed rounds in which the systems
/// alternate; each figure is the median of its rounds. Allocations are counted by the
/// interposed allocator over the same rounds.
struct Harness {
    let repetitions: Int
    /// Whether each system runs once untimed first.
    var warmUp = true
    /// Only these systems, when set (`--operations` runs Ripple alone).
    var systems: Set<String>? = nil

    func measure(_ workload: Workload) -> [Row] {
        let workload = Workload(name: workload.name, systems: workload.systems.filter { systems?.contains($0.name) ?? true })
        if warmUp { for system in workload.systems { _ = system.run() } }
        var times = [[Double]](repeating: [], count: workload.systems.count)
        var allocations = [[Double]](repeating: [], count: workload.systems.count)
        for _ in 0..<repetitions {
            for (index, system) in workload.systems.enumerated() {
                let allocationsBefore = malloc_counter_allocations()
                let start = DispatchTime.now().uptimeNanoseconds
                let operations = system.run()
                let elapsed = DispatchTime.now().uptimeNanoseconds - start
                let allocated = malloc_counter_allocations() - allocationsBefore
                times[index].append(Double(elapsed) / Double(max(1, operations)))
                allocations[index].append(Double(allocated) / Double(max(1, operations)))
            }
        }
        return workload.systems.enumerated().map { index, system in
            Row(workload: workload.name, system: system.name,
                nsPerOp: median(times[index]), allocsPerOp: median(allocations[index]))
        }
    }

    /// Bytes of heap per live subscription: `make` creates `count` subscriptions and returns
    /// what keeps them alive; the live-byte delta is divided by `count`.
    func bytesPerSubscription(count: Int, _ make: (Int) -> Any) -> Double {
        var samples: [Double] = []
        for _ in 0..<max(3, repetitions / 2) {
            let before = malloc_counter_live_bytes()
            let alive = make(count)
            let after = malloc_counter_live_bytes()
            samples.append(Double(Int64(after) - Int64(before)) / Double(count))
            withExtendedLifetime(alive) {}
        }
        return median(samples)
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

/// Prints rows as the table or as CSV, with Ripple's ratio to the best peer and to the floor.
enum Report {
    static func table(_ rows: [Row]) -> String {
        var lines = [String]()
        let header = ["workload", "system", "ns/op", "allocs/op", "bytes/sub", "Ripple ÷ best peer", "÷ floor"]
        var body: [[String]] = []
        for row in rows {
            let peers = rows.filter { $0.workload == row.workload && System.peers.contains($0.system) }
            let floor = rows.first { $0.workload == row.workload && $0.system == System.floor }
            var ratio = "", ratioToFloor = ""
            if row.system == System.ripple {
                if let best = peers.map(\.nsPerOp).min(), best > 0 { ratio = String(format: "%.2f×", row.nsPerOp / best) }
                if let floor, floor.nsPerOp > 0 { ratioToFloor = String(format: "%.2f×", row.nsPerOp / floor.nsPerOp) }
                if let bytes = row.bytesPerSub, let best = peers.compactMap(\.bytesPerSub).min(), best > 0 {
                    ratio = String(format: "%.2f× (bytes)", bytes / best)
                }
            }
            body.append([row.workload, row.system, format(row.nsPerOp), format(row.allocsPerOp),
                         row.bytesPerSub.map { String(format: "%.0f", $0) } ?? "", ratio, ratioToFloor])
        }
        let widths = header.indices.map { column in ([header] + body).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).enumerated().map { index, pair in
                let (cell, width) = pair
                let pad = String(repeating: " ", count: width - cell.count)
                return index < 2 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        lines.append(line(header))
        lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        var previous = ""
        for (row, cells) in zip(rows, body) {
            if !previous.isEmpty && row.workload != previous { lines.append("") }
            previous = row.workload
            lines.append(line(cells))
        }
        return lines.joined(separator: "\n")
    }

    static func csv(_ rows: [Row]) -> String {
        (["workload,system,ns_per_op,allocs_per_op,bytes_per_sub"] + rows.map { row in
            "\(row.workload),\(row.system),\(format(row.nsPerOp)),\(format(row.allocsPerOp)),\(row.bytesPerSub.map { String(format: "%.0f", $0) } ?? "")"
        }).joined(separator: "\n")
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}
