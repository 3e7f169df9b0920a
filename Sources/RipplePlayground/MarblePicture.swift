/// A run drawn as a marble diagram in SVG: one timeline per source, cold signal and
/// subscriber, in the order the script made them; each value a coloured marble with its text
/// (the same value has the same colour on every row, so it can be followed through the
/// operators), completion a bar, an error a cross; a time axis in milliseconds below; each row
/// captioned with how its signal was made (the operator chain).
///
/// Every event is a `<g class="event">` carrying its row, time, kind and value as `data-`
/// attributes, and the root carries the axis's origin and scale, so tests check the picture
/// against the event log.
struct MarblePicture {
    let title: String
    let rows: [Timeline.Row]
    /// The end of the run: the axis goes at least this far.
    let end: Duration

    static let labelWidth = 170.0
    static let rowHeight = 64.0
    static let top = 44.0
    static let radius = 13.0
    static let palette = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#46a5b5", "#f032e6",
                          "#9a6324", "#808000", "#008080", "#e6a100", "#5b6abf"]

    /// How many milliseconds the axis shows: past the run's end and its last event, with room after.
    let axisMilliseconds: Int
    /// Pixels per millisecond: the axis 600 to 2,400 pixels wide (3 pixels per ms between).
    let scale: Double

    init(title: String, rows: [Timeline.Row], end: Duration) {
        self.title = title
        self.rows = rows
        self.end = end
        var last = end
        for row in rows {
            last = max(last, row.start, row.end ?? .zero, row.marks.last?.time ?? .zero)
        }
        let milliseconds = min(last / .milliseconds(1), 1e15)  // a far longer run is squeezed the same way
        axisMilliseconds = max(100, ((Int(milliseconds) + 30 + 9) / 10) * 10)
        scale = min(max(Double(axisMilliseconds) * 3, 600), 2_400) / Double(axisMilliseconds)
    }

    /// The x of a time on the axis.
    func x(_ time: Duration) -> Double {
        Self.labelWidth + 20 + Double(time / .microseconds(1)) / 1_000 * scale
    }

    var svg: String {
        let axisEnd = x(.milliseconds(axisMilliseconds))
        // Wide enough for the axis and for every marble and label: marbles close together in
        // time are moved right so that none covers another, past the axis if need be.
        let width = max(axisEnd + 30, rows.map(rightEdge).max() ?? 0)
        let height = Self.top + Double(rows.count) * Self.rowHeight + 56
        var out: [String] = []
        out.append("""
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" \
            font-family="Menlo, Consolas, 'DejaVu Sans Mono', monospace" font-size="12" data-x0="\(n(x(.zero)))" data-scale="\(scale)">
            """)
        out.append("<title>\(escape(title))</title>")
        out.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")
        out.append("<text x=\"12\" y=\"24\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">\(escape(title))</text>")
        for (index, row) in rows.enumerated() {
            out += draw(row, index: index, axisEnd: axisEnd)
        }
        out += axis(y: Self.top + Double(rows.count) * Self.rowHeight + 8, axisEnd: axisEnd)
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    private func draw(_ row: Timeline.Row, index: Int, axisEnd: Double) -> [String] {
        let y = Self.top + Double(index) * Self.rowHeight + Self.rowHeight / 2
        let kind = row.kind == .subscriber ? "subscriber" : row.kind == .cold ? "cold" : "source"
        var out = ["<g class=\"row\" data-row=\"\(escape(row.label))\" data-kind=\"\(kind)\">"]
        let labelColour = row.kind == .subscriber ? "#1a4d8f" : "#333"
        out.append("<text x=\"12\" y=\"\(n(y + 4))\" font-weight=\"bold\" fill=\"\(labelColour)\">\(escape(cut(row.label, 22)))</text>")
        if !row.caption.isEmpty {
            out.append("<text x=\"\(n(x(.zero)))\" y=\"\(n(y - 20))\" font-size=\"10\" fill=\"#777\">\(escape(cut(row.caption, 110)))</text>")
        }
        // The line: a subscriber's from its subscription to its end (terminal event or
        // dispose), a cold signal's dashed (it restarts for every subscription).
        let terminal = row.marks.first { mark in
            if case .next = mark.event { return false }
            return true
        }
        let start = row.kind == .subscriber ? x(row.start) : x(.zero)
        let stop = [terminal?.time, row.end].compactMap { $0 }.min().map(x) ?? axisEnd
        let dash = row.kind == .cold ? " stroke-dasharray=\"6 4\"" : ""
        out.append("<line x1=\"\(n(start))\" y1=\"\(n(y))\" x2=\"\(n(stop))\" y2=\"\(n(y))\" stroke=\"#555\" stroke-width=\"2\"\(dash)/>")
        if terminal == nil, row.end == nil {
            out.append("<path d=\"M\(n(axisEnd)) \(n(y)) l-8 -5 v10 z\" fill=\"#555\"/>")
        }
        if row.kind == .subscriber {
            out.append("<line x1=\"\(n(start))\" y1=\"\(n(y - 6))\" x2=\"\(n(start))\" y2=\"\(n(y + 6))\" stroke=\"#555\" stroke-width=\"2\"/>")
        }
        // Marbles never cover each other: one that would touch the previous one moves right
        // (events at the same time stand side by side, in order), and a tick on the line
        // keeps its exact time.
        var right = -Double.infinity
        for mark in row.marks {
            let exact = x(mark.time)
            let half = width(of: mark) / 2
            let placed = max(exact, right + 3 + half)
            right = placed + half
            if placed > exact + 0.5 {
                out.append("<line x1=\"\(n(exact))\" y1=\"\(n(y - 17))\" x2=\"\(n(exact))\" y2=\"\(n(y + 17))\" stroke=\"#999\" stroke-width=\"1\"/>")
            }
            out += draw(mark, row: row.label, x: placed, exact: exact, y: y)
        }
        // After the marbles that came before it, so none hides it.
        if let end = row.end, terminal.map({ $0.time > end }) ?? true {
            out.append("<text x=\"\(n(max(x(end) + 4, right + 6)))\" y=\"\(n(y + 4))\" font-size=\"10\" fill=\"#777\">disposed</text>")
        }
        out.append("</g>")
        return out
    }

    /// The right edge of what a row draws: its last marble, placed as `draw` places it, and its
    /// `disposed` label.
    private func rightEdge(of row: Timeline.Row) -> Double {
        var right = -Double.infinity
        for mark in row.marks {
            let half = width(of: mark) / 2
            right = max(x(mark.time), right + 3 + half) + half
        }
        if let end = row.end { right = max(right, max(x(end) + 4, right + 6) + 60) }
        return right + 20
    }

    /// How wide a mark is drawn.
    private func width(of mark: Timeline.Mark) -> Double {
        switch mark.event {
        case .next(let value): return max(Self.radius * 2, Double(cut(value, 10).count) * 7.4 + 10)
        case .completed: return 4
        case .error: return 20
        }
    }

    private func draw(_ mark: Timeline.Mark, row: String, x: Double, exact: Double, y: Double) -> [String] {
        let milliseconds = n(Double(mark.time / .microseconds(1)) / 1_000)
        let common = "class=\"event\" data-row=\"\(escape(row))\" data-time=\"\(milliseconds)\" data-x=\"\(n(x))\" data-exact-x=\"\(n(exact))\""
        switch mark.event {
        case .next(let value):
            let shown = cut(value, 10)
            let width = width(of: mark)
            let colour = Self.palette[colourIndex(value)]
            return [
                "<g \(common) data-kind=\"next\" data-value=\"\(escape(value))\">",
                "<title>\(milliseconds) ms: next \(escape(value))</title>",
                "<rect x=\"\(n(x - width / 2))\" y=\"\(n(y - Self.radius))\" width=\"\(n(width))\" height=\"\(n(Self.radius * 2))\" "
                    + "rx=\"\(n(Self.radius))\" fill=\"\(colour)\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                "<text x=\"\(n(x))\" y=\"\(n(y + 4))\" text-anchor=\"middle\" fill=\"#fff\" font-weight=\"bold\">\(escape(shown))</text>",
                "</g>",
            ]
        case .completed:
            return [
                "<g \(common) data-kind=\"completed\">",
                "<title>\(milliseconds) ms: completed</title>",
                "<line x1=\"\(n(x))\" y1=\"\(n(y - 15))\" x2=\"\(n(x))\" y2=\"\(n(y + 15))\" stroke=\"#222\" stroke-width=\"3\"/>",
                "</g>",
            ]
        case .error(let message):
            return [
                "<g \(common) data-kind=\"error\" data-value=\"\(escape(message))\">",
                "<title>\(milliseconds) ms: error \(escape(message))</title>",
                "<path d=\"M\(n(x - 9)) \(n(y - 9)) L\(n(x + 9)) \(n(y + 9)) M\(n(x + 9)) \(n(y - 9)) L\(n(x - 9)) \(n(y + 9))\" "
                    + "stroke=\"#d00\" stroke-width=\"3.5\" stroke-linecap=\"round\"/>",
                "<text x=\"\(n(x))\" y=\"\(n(y + 26))\" text-anchor=\"middle\" font-size=\"10\" fill=\"#d00\">\(escape(cut(message, 30)))</text>",
                "</g>",
            ]
        }
    }

    private func axis(y: Double, axisEnd: Double) -> [String] {
        var out = ["<g class=\"axis\">"]
        out.append("<line x1=\"\(n(x(.zero)))\" y1=\"\(n(y))\" x2=\"\(n(axisEnd))\" y2=\"\(n(y))\" stroke=\"#999\"/>")
        // About one tick per 60 pixels, at a round number of milliseconds.
        let steps = [10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000]
        let step = steps.first { Double($0) * scale >= 60 } ?? max(1, axisMilliseconds / 10)
        var tick = 0
        while tick <= axisMilliseconds {
            let tx = x(.milliseconds(tick))
            out.append("<line x1=\"\(n(tx))\" y1=\"\(n(y))\" x2=\"\(n(tx))\" y2=\"\(n(y + 5))\" stroke=\"#999\"/>")
            out.append("<text x=\"\(n(tx))\" y=\"\(n(y + 18))\" text-anchor=\"middle\" font-size=\"10\" fill=\"#666\">\(tick)ms</text>")
            tick += step
        }
        out.append("<text x=\"12\" y=\"\(n(y + 18))\" font-size=\"10\" fill=\"#666\">virtual time</text>")
        out.append("</g>")
        return out
    }

    /// A number as SVG wants it: at most two decimals, no trailing zeros.
    private func n(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    private func cut(_ text: String, _ limit: Int) -> String {
        text.count > limit ? String(text.prefix(limit - 1)) + "…" : text
    }

    /// A value's colour: neighbouring integers and letters get different ones; other values
    /// one picked by a hash that is the same in every run.
    private func colourIndex(_ value: String) -> Int {
        let count = Self.palette.count
        if let n = Int(value) { return (n % count + count) % count }
        if value.unicodeScalars.count == 1, let scalar = value.unicodeScalars.first { return Int(scalar.value) % count }
        return stableHash(value) % count
    }

    /// The same number for the same value in every run (Swift's `hashValue` is seeded per process).
    private func stableHash(_ text: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % 1_000_003)
    }
}

/// Text escaped for XML content and attributes; characters XML 1.0 cannot hold become U+FFFD.
func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
        default:
            let v = scalar.value
            let allowed = v >= 0x20 && v != 0xFFFE && v != 0xFFFF
            out.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
        }
    }
    return out
}

/// The self-contained page of a run: the script, the diagram and the event log, with no
/// link to anything outside it.
struct MarblePage {
    let title: String
    let script: String
    let picture: MarblePicture
    let transcript: [(time: Duration, text: String)]

    var html: String {
        let log = transcript.map { entry -> String in
            let milliseconds = String(Int(entry.time / .milliseconds(1)))
            return "[" + String(repeating: " ", count: max(0, 4 - milliseconds.count)) + milliseconds + "ms] " + entry.text
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(escape(title)) — ripple-playground</title>
            <style>
            body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; background: #fafafa; }
            h1 { font-size: 20px; margin: 0 0 16px; }
            h2 { font-size: 15px; margin: 24px 0 8px; }
            pre { font-family: Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 13px; background: #fff; white-space: pre-wrap;
                  border: 1px solid #ddd; border-radius: 6px; padding: 10px 14px; overflow-x: auto; }
            .diagram { background: #fff; border: 1px solid #ddd; border-radius: 6px; overflow-x: auto; }
            .columns { display: flex; gap: 24px; flex-wrap: wrap; }
            .columns > div { flex: 1 1 320px; min-width: 0; }
            </style>
            </head>
            <body>
            <h1>\(escape(title))</h1>
            <div class="diagram">
            \(picture.svg)</div>
            <div class="columns">
            <div><h2>Script</h2>
            <pre class="script">\(escape(script))</pre></div>
            <div><h2>Event log</h2>
            <pre class="log">\(escape(log.joined(separator: "\n")))</pre></div>
            </div>
            </body>
            </html>

            """
    }
}
