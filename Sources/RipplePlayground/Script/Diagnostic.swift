/// A problem found in a script, at a line and column (both 1-based).
public struct Diagnostic: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 1-based line of the problem.
    ///
    ///     Diagnostic(line: 3, column: 7, message: "unknown name 'x'").line   // 3
    public let line: Int
    /// The 1-based column of the problem, counted in characters.
    ///
    ///     Diagnostic(line: 3, column: 7, message: "unknown name 'x'").column   // 7
    public let column: Int
    /// What is wrong, in one line, without the position.
    ///
    ///     Diagnostic(line: 3, column: 7, message: "unknown name 'x'").message   // unknown name 'x'
    public let message: String

    /// Creates a diagnostic at a position.
    ///
    ///     let problem = Diagnostic(line: 3, column: 7, message: "unknown name 'x'")
    ///     print(problem.formatted(file: "a.rp"))   // a.rp:3:7: error: unknown name 'x'
    ///
    /// - Parameters:
    ///   - line: The 1-based line.
    ///   - column: The 1-based column.
    ///   - message: What is wrong.
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `LINE:COLUMN: error: MESSAGE`; prefix the file name for the full form.
    public var description: String { "\(line):\(column): error: \(message)" }

    /// `FILE:LINE:COLUMN: error: MESSAGE`, the form printed on standard error.
    public func formatted(file: String) -> String { "\(file):\(line):\(column): error: \(message)" }
}

/// Shortens user text quoted in a message, so a huge token cannot flood the terminal.
func quoted(_ text: String) -> String {
    "'\(shortened(text))'"
}

/// User text cut to 40 characters and an ellipsis, for messages.
func shortened(_ text: String) -> String {
    let limit = 40
    return text.count > limit ? String(text.prefix(limit)) + "…" : text
}

/// Every problem found in a script, in line order.
public struct ScriptErrors: Error, Equatable, Sendable {
    /// The problems, in line order; never empty.
    ///
    ///     if case .failure(let errors) = Script.parse("send") {
    ///         for d in errors.diagnostics { print(d.formatted(file: "<stdin>")) }
    ///     }
    public let diagnostics: [Diagnostic]
}
