/// One word of a script line: its text (quotes removed) and where it starts.
struct Token: Equatable {
    let text: String
    /// 1-based column of the token's first character (the opening quote, when quoted).
    let column: Int
    /// Whether it was written in double quotes.
    let quoted: Bool
}

/// A script line split into tokens.
struct Line {
    let number: Int
    let tokens: [Token]
}

/// Splits a script into lines of tokens: spaces (and tabs) separate tokens, `#` outside
/// quotes starts a comment, a double-quoted value may hold spaces. Works on raw bytes, so
/// invalid UTF-8 and control characters are reported with their position instead of
/// crashing or being silently replaced.
enum Lexer {
    static func lines(of bytes: [UInt8]) -> (lines: [Line], diagnostics: [Diagnostic]) {
        var lines: [Line] = []
        var diagnostics: [Diagnostic] = []
        var lineNumber = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var lineBytes = Array(rawLine)
            if lineBytes.last == UInt8(ascii: "\r") { lineBytes.removeLast() }
            guard let text = String(validating: lineBytes, as: UTF8.self) else {
                diagnostics.append(Diagnostic(line: lineNumber, column: invalidUTF8Column(lineBytes),
                                              message: "invalid UTF-8"))
                continue
            }
            switch tokenize(text, line: lineNumber) {
            case .success(let tokens): if !tokens.isEmpty { lines.append(Line(number: lineNumber, tokens: tokens)) }
            case .failure(let diagnostic): diagnostics.append(diagnostic)
            }
        }
        return (lines, diagnostics)
    }

    private static func tokenize(_ text: String, line: Int) -> Result<[Token], Diagnostic> {
        var tokens: [Token] = []
        var current = ""
        var start = 0
        var inQuotes = false
        var quotedToken = false
        var column = 0
        func finish() {
            if !current.isEmpty || quotedToken { tokens.append(Token(text: current, column: start, quoted: quotedToken)) }
            current = ""
            quotedToken = false
        }
        for character in text {
            column += 1
            if inQuotes {
                if character == "\"" { inQuotes = false; finish() } else { current.append(character) }
                continue
            }
            switch character {
            case " ", "\t":
                finish()
            case "#" where current.isEmpty:
                return .success(tokens)
            case "\"":
                if !current.isEmpty {
                    return .failure(Diagnostic(line: line, column: column, message: "unexpected quote inside \(quoted(current))"))
                }
                inQuotes = true
                quotedToken = true
                start = column
            default:
                if let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1,
                   scalar.value < 0x20 || scalar.value == 0x7F {
                    let code = String(scalar.value, radix: 16, uppercase: true)
                    return .failure(Diagnostic(line: line, column: column,
                                               message: "unexpected control character U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code)"))
                }
                if current.isEmpty { start = column }
                current.append(character)
            }
        }
        if inQuotes { return .failure(Diagnostic(line: line, column: start, message: "unterminated quote")) }
        finish()
        return .success(tokens)
    }

    /// The column (in characters) of the first byte that is not valid UTF-8.
    private static func invalidUTF8Column(_ bytes: [UInt8]) -> Int {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var column = 1
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: column += 1
            case .emptyInput, .error: return column
            }
        }
    }
}
