/// A problem found in a script, at a line and column (both 1-based).
public struct Diagnostic: Error, Equatable, Sendable, CustomStringConvertible {
    public let line: Int
    public let column: Int
    public let message: String

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
    public let diagnostics: [Diagnostic]
}
