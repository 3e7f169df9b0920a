import Ripple

/// What happened on virtual time, row by row, for marble diagrams: one row per source and
/// per subscriber, in the order they were declared.
final class Timeline {
    struct Row {
        let label: String
        /// What the row shows, for pictures.
        var kind: Kind = .source
        /// How the row's signal was made, e.g. `doubled = numbers |> map *2`, for pictures.
        var caption: String = ""
        /// When a subscriber subscribed, and when it was disposed (nil: it was not).
        var start: Duration = .zero
        var end: Duration?
        var events: [(frame: Int, symbol: String)] = []
        /// The same events at their exact times, with their values and messages.
        var marks: [Mark] = []
        /// An `interval`'s period: its ticks are drawn up to the time of the diagram.
        var period: Duration?
    }

    enum Kind: Equatable {
        /// A subject or promise: what it sent.
        case source
        /// A cold signal's marbles, relative to each subscription.
        case cold
        /// What a subscriber received.
        case subscriber
    }

    /// One event on a row at its exact time.
    struct Mark: Equatable {
        enum Event: Equatable {
            case next(String), error(String), completed
        }
        let time: Duration
        let event: Event
    }

    static let frame: Duration = .milliseconds(10)
    /// The most characters of frames a diagram draws, all rows together.
    static let maximumCharacters = 1_000_000

    private(set) var rows: [Row] = []
    private var indexByLabel: [String: Int] = [:]

    /// Adds an empty row; returns its index.
    @discardableResult
    func addRow(_ label: String, kind: Kind = .source, caption: String = "", start: Duration = .zero) -> Int {
        rows.append(Row(label: label, kind: kind, caption: caption, start: start))
        indexByLabel[label] = rows.count - 1
        return rows.count - 1
    }

    func record(_ event: Event<String>, row: Int, at time: Duration) {
        let symbol: String
        switch event {
        case .next(let value): symbol = value; rows[row].marks.append(Mark(time: time, event: .next(value)))
        case .error(let error): symbol = "#"; rows[row].marks.append(Mark(time: time, event: .error("\(error)")))
        case .completed: symbol = "|"; rows[row].marks.append(Mark(time: time, event: .completed))
        }
        rows[row].events.append((Int(time / Self.frame), symbol))
    }

    /// Records a cold signal's definition (frames relative to each subscription).
    func recordDefinition(row: Int, frames: [[MarbleEvent]]) {
        for (index, events) in frames.enumerated() {
            for event in events {
                let time = Self.frame * index
                switch event {
                case .value(let value):
                    rows[row].events.append((index, value))
                    rows[row].marks.append(Mark(time: time, event: .next(value)))
                case .completed:
                    rows[row].events.append((index, "|"))
                    rows[row].marks.append(Mark(time: time, event: .completed))
                case .error:
                    rows[row].events.append((index, "#"))
                    rows[row].marks.append(Mark(time: time, event: .error("error")))
                }
            }
        }
    }

    /// The most ticks an `interval`'s row draws (the diagram of a long run stays small).
    static let maximumTicks = 1_000

    /// Makes `row` an interval's: ticks 0, 1, 2, … at 1 ×, 2 ×, … `period` after each
    /// subscription, drawn up to the time of the diagram (see `extendTicks`).
    func recordTicks(row: Int, period: Duration) {
        rows[row].period = period
    }

    /// Draws every interval row's ticks up to `now` (at most `maximumTicks` each).
    func extendTicks(until now: Duration) {
        for index in rows.indices {
            guard let period = rows[index].period else { continue }
            var tick = rows[index].marks.count
            while tick < Self.maximumTicks, period * (tick + 1) <= now {
                record(.next(String(tick)), row: index, at: period * (tick + 1))
                tick += 1
            }
        }
    }

    /// Marks a subscriber's row as disposed at `time` (the first time only).
    func recordEnd(row: Int, at time: Duration) {
        if rows[row].end == nil { rows[row].end = time }
    }

    /// The diagram up to `now`: one frame per 10 ms, every frame the same width, so all rows
    /// stay aligned on the grid. Frames are one character wide when every value is; with
    /// longer values each frame is as wide as the widest one plus a `-`, so neighbours
    /// never run together.
    ///
    /// A diagram of more than `maximumCharacters` (a long wait, or long values) is not drawn:
    /// one line says how big it would be, instead of a run that never ends or runs out of memory.
    func render(now: Duration) -> [String] {
        let lastEventFrame = rows.flatMap { $0.events.map(\.frame) }.max() ?? 0
        let frameCount = max(Int(now / Self.frame), lastEventFrame) + 1
        // The size first, from the frames that hold events, before building any row.
        var widestCell = 1
        for row in rows {
            var widthByFrame: [Int: (count: Int, width: Int)] = [:]
            for event in row.events {
                let cell = widthByFrame[event.frame, default: (0, 2)]
                widthByFrame[event.frame] = (cell.count + 1, cell.width + event.symbol.count)
            }
            for cell in widthByFrame.values {
                widestCell = max(widestCell, cell.count == 1 ? cell.width - 2 : cell.width)  // "(ab)" or "a"
            }
        }
        let frameWidth = widestCell > 1 ? widestCell + 1 : 1
        let (size, overflow) = frameCount.multipliedReportingOverflow(by: frameWidth * max(1, rows.count))
        if overflow || size > Self.maximumCharacters {
            return ["marbles: 0ms to \(Int(now / .milliseconds(1)))ms is too big to draw: \(rows.count) rows of \(frameCount) frames, "
                    + "\(frameWidth) \(frameWidth == 1 ? "character" : "characters") each (at most \(Self.maximumCharacters) characters)"]
        }
        let cells = rows.map { row -> [String] in
            var byFrame = [[String]](repeating: [], count: frameCount)
            for (frame, symbol) in row.events where frame < frameCount { byFrame[frame].append(symbol) }
            return byFrame.map { symbols in
                symbols.count <= 1 ? (symbols.first ?? "") : "(" + symbols.joined() + ")"
            }
        }
        let widest = cells.flatMap { $0 }.map(\.count).max() ?? 1
        let width = widest > 1 ? widest + 1 : 1
        let labelWidth = rows.map(\.label.count).max() ?? 0
        let unit = width == 1 ? "one character" : "\(width) characters"
        var lines = ["marbles: \(unit) per 10 ms, 0ms to \(Int(now / .milliseconds(1)))ms"]
        for (row, rowCells) in zip(rows, cells) {
            let label = row.label + String(repeating: " ", count: labelWidth - row.label.count)
            let frames = rowCells.map { cell in
                (cell.isEmpty ? "-" : cell) + String(repeating: "-", count: width - max(1, cell.count))
            }
            lines.append("  \(label)  \(frames.joined())")
        }
        return lines
    }
}
