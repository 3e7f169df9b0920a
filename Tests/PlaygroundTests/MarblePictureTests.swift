import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import RipplePlayground
import RippleTestSupport

/// What one subscriber received, as the `--times` event log says and as the picture draws it.
struct DrawnEvent: Equatable, CustomStringConvertible {
    let time: Int
    let kind: String
    let value: String?
    var description: String { "\(time)ms \(kind)\(value.map { " " + $0 } ?? "")" }
}

/// Runs `arguments` with `--svg` and `--times`, returning the event log and the picture.
func runWithPicture(_ arguments: [String]) throws -> (run: Run, svg: String) {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).svg")
    defer { try? FileManager.default.removeItem(at: file) }
    let run = Run(arguments + ["--times", "--svg", file.path])
    #expect(run.status == 0, "\(run.stderr)")
    return (run, try String(contentsOf: file, encoding: .utf8))
}

/// The events of subscriber `sub` in a `--times` log.
func loggedEvents(of sub: String, in lines: [String]) -> [DrawnEvent] {
    lines.compactMap { line in
        // "[ 120ms] SUB: next VALUE"
        guard line.hasPrefix("["), let close = line.firstIndex(of: "]") else { return nil }
        let time = Int(line[line.index(after: line.startIndex)..<close].trimmingCharacters(in: .whitespaces).dropLast(2))!
        let rest = line[line.index(close, offsetBy: 2)...]
        guard rest.hasPrefix("\(sub): ") else { return nil }
        let event = rest.dropFirst(sub.count + 2)
        if event == "completed" { return DrawnEvent(time: time, kind: "completed", value: nil) }
        if event.hasPrefix("next ") { return DrawnEvent(time: time, kind: "next", value: String(event.dropFirst(5))) }
        if event.hasPrefix("error ") { return DrawnEvent(time: time, kind: "error", value: String(event.dropFirst(6))) }
        return nil
    }
}

extension XMLElement {
    /// An attribute's value (`attribute(forName:)` finds nothing under FoundationXML's default namespace).
    func value(of name: String) -> String? {
        attributes?.first { $0.name == name }?.stringValue
    }
}

/// Every SVG the playground draws is well-formed XML whose subscriber timelines hold exactly the
/// events of the log, in order, each at its time on the axis.
@Suite(.leakChecked, .offThePool) struct MarblePictureTests {
    static let runs: [[String]] = Demo.all.map { ["demo", $0.name] } + operatorScripts.map { ["run", operatorScriptPath($0)] }

    @Test(arguments: runs)
    func everyPictureIsXMLAndDrawsEachSubscribersEventsAtTheirTimes(arguments: [String]) throws {
        let (run, svg) = try runWithPicture(arguments)
        let document = try XMLDocument(data: Data(svg.utf8))
        let root = try #require(document.rootElement())
        #expect(root.name == "svg")
        let x0 = try #require(Double(root.value(of: "data-x0") ?? ""))
        let width = try #require(Double(root.value(of: "width") ?? ""))
        let scale = try #require(Double(root.value(of: "data-scale") ?? ""))
        let rows = try root.nodes(forXPath: "//*[@class='row']").compactMap { $0 as? XMLElement }
        let subscribers = rows.filter { $0.value(of: "data-kind") == "subscriber" }
        #expect(!subscribers.isEmpty)
        for row in subscribers {
            let name = try #require(row.value(of: "data-row"))
            let marks = try row.nodes(forXPath: ".//*[@class='event']").compactMap { $0 as? XMLElement }
            let drawn = marks.map { mark in
                DrawnEvent(time: Int(Double(mark.value(of: "data-time")!)!),
                           kind: mark.value(of: "data-kind")!,
                           value: mark.value(of: "data-value"))
            }
            #expect(drawn == loggedEvents(of: name, in: run.stdout), "row \(name) of \(arguments)")
            // Each at its time on the axis, never left of it, in order left to right.
            var previousX = -Double.infinity
            for (mark, event) in zip(marks, drawn) {
                let exact = Double(mark.value(of: "data-exact-x")!)!
                let x = Double(mark.value(of: "data-x")!)!
                #expect(abs(exact - (x0 + Double(event.time) * scale)) < 0.01, "\(name) \(event)")
                #expect(x >= exact - 0.01 && x > previousX, "\(name) \(event)")
                #expect(x + 10 <= width, "\(name) \(event) at x \(x) is outside the picture (width \(width))")
                previousX = x
            }
        }
    }

    @Test func aPictureNeverOverwritesItsScriptOrTheOtherPictureAndIsAFile() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).ripple")
        defer { try? FileManager.default.removeItem(at: script) }
        try "subject s\n".write(to: script, atomically: true, encoding: .utf8)
        for arguments in [["run", script.path, "--html", script.path], ["run", script.path, "--svg", "x.svg", "--html", "x.svg"],
                          ["run", "-", "--svg", "-"]] {
            let run = Run(arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.first?.hasPrefix("ripple-playground: ") == true, "\(run.stderr)")
        }
        #expect(try String(contentsOf: script, encoding: .utf8) == "subject s\n")
    }

    @Test func releasingAnOwnerEndsItsObserversRowsInThePicture() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).ripple")
        defer { try? FileManager.default.removeItem(at: script) }
        try "subject s\nowner o\nobserve a to s owner o\nsend s 1\nwait 20ms\nrelease o\nwait 50ms\nsend s 2\nwait 30ms\n"
            .write(to: script, atomically: true, encoding: .utf8)
        let (_, svg) = try runWithPicture(["run", script.path])
        let root = try #require(try XMLDocument(data: Data(svg.utf8)).rootElement())
        let x0 = try #require(Double(root.value(of: "data-x0") ?? ""))
        let scale = try #require(Double(root.value(of: "data-scale") ?? ""))
        let row = try #require(try root.nodes(forXPath: "//*[@data-row='a']").first as? XMLElement)
        let line = try #require(try row.nodes(forXPath: "./*[local-name()='line']").first as? XMLElement)
        let end = try #require(Double(line.value(of: "x2") ?? ""))
        #expect(abs(end - (x0 + 20 * scale)) < 0.01, "the row ends at \(end), not at the release (20 ms)")
        #expect(!row.xmlString.contains("l-8 -5 v10 z"), "no 'still alive' arrowhead on the released row")
    }

    @Test func manyEventsAtOneTimeStayInsideThePicture() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).ripple")
        defer { try? FileManager.default.removeItem(at: file) }
        try "subject s\nsubscribe a to s\nsend s \((1...60).map(String.init).joined(separator: " "))\nwait 20ms\ndispose a\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let (_, svg) = try runWithPicture(["run", file.path])
        let root = try #require(try XMLDocument(data: Data(svg.utf8)).rootElement())
        let width = try #require(Double(root.value(of: "width") ?? ""))
        let xs = try root.nodes(forXPath: "//*[@data-row='a']//*[@class='event']").compactMap { ($0 as? XMLElement)?.value(of: "data-x").flatMap(Double.init) }
        #expect(xs.count == 60)
        #expect((xs.max() ?? 0) + 10 <= width, "the last marble at \(xs.max() ?? 0), the picture \(width) wide")
    }

    @Test func thePageIsSelfContainedWithTheScriptTheLogAndThePicture() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: file) }
        let script = "subject s\nlet d = s |> filter <3\nsubscribe a to d\nsend s 1 \"<b>&\"\nwait 10ms\ncomplete s\n"
        let run = Run(["run", "-", "--html", file.path], stdin: Array(script.utf8))
        #expect(run.status == 0)
        let page = try String(contentsOf: file, encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.contains("let d = s |&gt; filter &lt;3"))
        #expect(page.contains("[   0ms] a: next 1"))
        #expect(page.contains("[   0ms] a: error not an integer: &lt;b&gt;&amp;"))
        // The picture inline, and nothing fetched from anywhere.
        let svgStart = try #require(page.range(of: "<svg "))
        let svgEnd = try #require(page.range(of: "</svg>"))
        _ = try XMLDocument(data: Data(page[svgStart.lowerBound..<svgEnd.upperBound].utf8))
        for outside in ["src=", "href", "url(", "@import", "<link", "<script"] {
            #expect(!page.contains(outside), "\(outside)")
        }
        #expect(page.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "").contains("http") == false)
    }

    @Test func valuesThatAreNotXMLAreEscapedOrReplaced() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: file) }
        let run = Run(["run", "-", "--svg", file.path], stdin: Array("subject s\nsubscribe a to s\nsend s \"<&>'\" x\nfail s \"</svg>\"\n".utf8))
        #expect(run.status == 0)
        let document = try XMLDocument(contentsOf: file)
        let values = try document.nodes(forXPath: "//*[@class='event']/@data-value").map(\.stringValue)
        #expect(values == ["<&>'", "x", "</svg>", "<&>'", "x", "</svg>"])
    }

    @Test func aPictureOfAHundredThousandEventsOrOfALongWaitIsDrawnInTime() throws {
        // Drawn in time only if no x position recomputes the axis from all events: that quadratic
        // walk would not end in ten minutes for this script.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: file) }
        var script = "cold c \"(0123456789)\"\nlet x1 = c |> flatMap c\n"
        for level in 2...5 { script += "let x\(level) = x\(level - 1) |> flatMap c\n" }
        script += "subscribe a to x5\n"
        let many = try launchBounded(["run", "-", "--svg", file.path], stdin: script)
        #expect(many.status == 0)
        let long = try launchBounded(["run", "-", "--svg", file.path],
                                     stdin: "subject s\nsubscribe a to s\nsend s 1\nwait 999999999s\nsend s 2\n")
        #expect(long.status == 0)
        let document = try XMLDocument(contentsOf: file)
        let ticks = try document.nodes(forXPath: "//*[@class='axis']/*[local-name()='text']")
        #expect((2...12).contains(ticks.count))
        let times = try document.nodes(forXPath: "//*[@class='event']").compactMap { ($0 as? XMLElement)?.value(of: "data-time") }
        #expect(times == ["0", "999999999000", "0", "999999999000"])  // row s, then row a
    }

    @Test func picturesNeedARunOrADemoAndAFileName() {
        #expect(Run(["--svg", "/tmp/x.svg"]).status == 2)
        #expect(Run(["list", "--html", "/tmp/x.html"]).status == 2)
        let missing = Run(["demo", "subject", "--svg"])
        #expect(missing.status == 2)
        #expect(missing.stderr.first == "ripple-playground: '--svg' needs a file name")
        let unwritable = Run(["demo", "subject", "--svg", "/nonexistent/folder/x.svg"])
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.first?.hasPrefix("ripple-playground: cannot write '/nonexistent/folder/x.svg'") == true)
    }

    /// The pictures in the documentation are the ones `.ci/marbles` draws from today's scripts.
    @Test(arguments: operatorScripts)
    func theCommittedPictureOfEachOperatorIsUpToDate(name: String) throws {
        let committed = repositoryRoot.appendingPathComponent("Sources/Ripple/Ripple.docc/Resources/marble-\(name).svg")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ripple-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: file) }
        // Run as .ci/marbles does (from Docs/marbles), so the title is the file name.
        let run = Run(["run", operatorScriptPath(name), "--svg", file.path])
        #expect(run.status == 0)
        let fresh = try String(contentsOf: file, encoding: .utf8)
        let expected = try? String(contentsOf: committed, encoding: .utf8)
        let upToDate = fresh == expected
        #expect(upToDate, "Sources/Ripple/Ripple.docc/Resources/marble-\(name).svg is stale or missing: run .ci/marbles")
    }

    /// Operator headings that have no picture, each with the reason: the playground cannot
    /// express the operator, and the text diagram under the heading stands alone.
    static let headingsWithoutPictures: [String: String] = [
        "Transforming.md: scan(into:_:)": "the playground's `scan +` is scan(_:_:); an in-place update draws the same picture",
        "Combining.md: Signal.deferred(_:)": "a signal made per subscription draws the picture of the signal it makes",
        "Combining.md: merge(maxConcurrent:)": "the playground has no signal of signals with a limit; flatMapMax draws the same picture",
        "ErrorOperators.md: retry()": "a failing script signal retried without a limit never ends: no run to draw",
        "ErrorOperators.md: retry(when:)": "the playground cannot write the handler that turns errors into a trigger",
        "Sharing.md: multicast(makeSubject:)": "a fresh subject shows only on a reconnect; a first run draws the picture of multicast(_:)",
    ]

    /// In the operator articles (those with marble slots), every heading that names a symbol
    /// (`### name(…)`, `### Type.name(…)`) has a slot right under it, but for the listed
    /// exceptions; and each exception is such a heading, still without a slot.
    @Test func everyOperatorHeadingHasAMarbleSlotButTheListedExceptions() throws {
        let folder = repositoryRoot.appendingPathComponent("Sources/Ripple/Ripple.docc")
        let symbol = /^### [A-Za-z_][A-Za-z0-9_.]*\(.*\)$/
        var withoutSlot: Set<String> = []
        var headings = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".md") {
            let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.contains(where: { $0.hasPrefix("<!-- marble: ") }) else { continue }
            for (index, line) in lines.enumerated() where line.wholeMatch(of: symbol) != nil {
                headings += 1
                let next = lines[(index + 1)...].first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                if next?.hasPrefix("<!-- marble: ") != true {
                    withoutSlot.insert("\(file): \(line.dropFirst("### ".count))")
                }
            }
        }
        #expect(headings >= 67)
        let unexpected = withoutSlot.subtracting(Self.headingsWithoutPictures.keys).sorted()
        #expect(unexpected.isEmpty, "operator headings without a <!-- marble: --> slot: \(unexpected)")
        let stale = Set(Self.headingsWithoutPictures.keys).subtracting(withoutSlot).sorted()
        #expect(stale.isEmpty, "listed as without a picture, but now with a slot or gone: \(stale)")
    }

    /// Every operator heading of the articles (`<!-- marble: NAME -->`) shows a picture drawn from
    /// an operator script, and every operator script's picture is shown somewhere.
    @Test func everyMarbleSlotInTheArticlesHasItsPicture() throws {
        let folder = repositoryRoot.appendingPathComponent("Sources/Ripple/Ripple.docc")
        var shown: Set<String> = []
        var slots = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".md") {
            let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.hasPrefix("<!-- marble: ") {
                slots += 1
                // The slot, a blank line, then the picture.
                let picture = index + 2 < lines.count ? lines[index + 2] : ""
                guard let open = picture.range(of: "](marble-"), picture.hasPrefix("!["), picture.hasSuffix(".svg)") else {
                    Issue.record("\(file):\(index + 1): \(line) has no picture under it")
                    continue
                }
                let name = String(picture[open.upperBound...].dropLast(".svg)".count))
                #expect(operatorScripts.contains(name), "\(file):\(index + 3): marble-\(name).svg has no script Docs/marbles/\(name).ripple")
                shown.insert(name)
            }
        }
        #expect(slots >= 67)
        #expect(Set(operatorScripts).subtracting(shown).isEmpty, "pictures in no article: \(Set(operatorScripts).subtracting(shown).sorted())")
    }
}
