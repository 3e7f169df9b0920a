import Foundation

/// The `ripple-playground` command line: parses arguments, runs demos and scripts, and
/// returns the exit status (0 success, 2 a bad script or command line, 1 anything else).
/// Input and output are injected, so tests run it without spawning a process.
public struct PlaygroundCommand {
    /// The usage text printed for `--help` and after a bad command line.
    ///
    ///     print(PlaygroundCommand.usage)
    public static let usage = """
        usage: ripple-playground                   the tour: every built-in demo in order (on a terminal:
                                                   the interactive mode, as 'repl')
               ripple-playground list              the built-in demos
               ripple-playground demo NAME         one built-in demo
               ripple-playground run FILE          a script file; FILE "-" reads standard input
               ripple-playground check FILE        parse and check only
               ripple-playground repl              interactive: each statement runs as it is typed
               ripple-playground help              the language: statements and every operator
        options: --marbles (draw a marble diagram after the run)  --times (prefix each event with its virtual time)
                 --svg FILE (write the run as an SVG marble diagram)  --html FILE (a self-contained page:
                 the script, the event log and the diagram); both with 'run' and 'demo'
        """

    let readStandardInput: () -> [UInt8]
    let standardOutput: (String) -> Void
    let standardError: (String) -> Void
    let isTerminal: Bool
    let readLine: () -> String?
    let prompt: (String) -> Void

    /// Creates a command with injected input and output, so tests need no process.
    ///
    ///     var out = ""
    ///     let command = PlaygroundCommand(readStandardInput: { [] },
    ///                                     standardOutput: { out += $0 }, standardError: { _ in })
    ///     let status = command.run(["list"])   // 0, with the demos in `out`
    ///
    /// - Parameters:
    ///   - readStandardInput: All of standard input, for `run -`.
    ///   - standardOutput: Writes one line (or several, joined by newlines) to standard output.
    ///   - standardError: Writes one line to standard error.
    ///   - isTerminal: Whether standard input is a terminal: with no arguments, the
    ///     interactive mode starts instead of the tour.
    ///   - readLine: The next line typed, without its newline, or nil at the end of input
    ///     (the interactive mode).
    ///   - prompt: Writes the interactive prompt, without a newline.
    public init(
        readStandardInput: @escaping () -> [UInt8],
        standardOutput: @escaping (String) -> Void,
        standardError: @escaping (String) -> Void,
        isTerminal: Bool = false,
        readLine: @escaping () -> String? = { nil },
        prompt: @escaping (String) -> Void = { _ in }
    ) {
        self.readStandardInput = readStandardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.isTerminal = isTerminal
        self.readLine = readLine
        self.prompt = prompt
    }

    /// Runs the command line `arguments` (without the program name).
    public func run(_ arguments: [String]) -> Int32 {
        var options = Interpreter.Options()
        var words: [String] = []
        var pictures = Pictures()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--svg", "--html":
                guard let path = remaining.popFirst(), !path.isEmpty else { return usageError("'\(argument)' needs a file name") }
                if argument == "--svg" { pictures.svg = path } else { pictures.html = path }
            case "--marbles": options.marbles = true
            case "--times": options.times = true
            case "-h", "--help":
                standardOutput(Self.usage)
                return 0
            case "help":
                standardOutput(Self.usage + "\n\n" + Language.reference)
                return 0
            default:
                if argument.hasPrefix("--") {
                    return usageError("unknown option '\(argument)'")
                }
                words.append(argument)
            }
        }
        if pictures.wanted, !(words.count == 2 && (words[0] == "run" || words[0] == "demo")) {
            return usageError("--svg and --html go with 'run FILE' or 'demo NAME'")
        }
        // A picture never overwrites the script it draws, or the other picture, and is a file.
        for path in [pictures.svg, pictures.html].compactMap({ $0 }) {
            if path == "-" { return usageError("'-' is not a file name for a picture: --svg and --html write files") }
            if words.first == "run", words.count == 2, Self.sameFile(path, words[1]) {
                return usageError("'\(path)' is the script itself: write the picture to another file")
            }
        }
        if let svg = pictures.svg, let html = pictures.html, Self.sameFile(svg, html) {
            return usageError("--svg and --html name the same file '\(svg)'")
        }
        switch (words.first, words.count) {
        case (nil, _):
            return isTerminal ? repl(options) : tour(options)
        case ("repl", 1):
            return repl(options)
        case ("list", 1):
            listDemos()
            return 0
        case ("demo", 2):
            guard let demo = Demo.named(words[1]) else {
                return usageError("unknown demo '\(words[1])'; 'ripple-playground list' shows them")
            }
            return execute(Array(demo.script.utf8), file: "demo:\(demo.name)", options: options, pictures: pictures,
                           title: "ripple-playground demo \(demo.name)")
        case ("run", 2), ("check", 2):
            guard let (bytes, file) = read(words[1]) else { return 1 }
            if words[0] == "check" {
                switch Script.parse(bytes) {
                case .success: return 0
                case .failure(let errors): return report(errors, file: file)
                }
            }
            let title = file == "<stdin>" ? file : URL(fileURLWithPath: file).lastPathComponent
            return execute(bytes, file: file, options: options, pictures: pictures, title: title)
        case ("list", _), ("demo", _), ("run", _), ("check", _), ("repl", _):
            return usageError("wrong number of arguments for '\(words[0])'")
        default:
            return usageError("unknown command '\(words[0])'")
        }
    }

    /// Whether two paths name one file (the same path, or resolving to the same one).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let resolved = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
        return resolved(a) == resolved(b)
    }

    func listDemos() {
        let width = Demo.all.map(\.name.count).max() ?? 0
        for demo in Demo.all {
            standardOutput(demo.name + String(repeating: " ", count: width - demo.name.count + 2) + demo.summary)
        }
    }

    func tour(_ options: Interpreter.Options) -> Int32 {
        for (index, demo) in Demo.all.enumerated() {
            if index > 0 { standardOutput("") }
            standardOutput("== \(demo.name): \(demo.summary) ==")
            let status = execute(Array(demo.script.utf8), file: "demo:\(demo.name)", options: options)
            if status != 0 { return status }
        }
        return 0
    }

    /// Where to write pictures of the run, if anywhere.
    struct Pictures {
        var svg: String?
        var html: String?
        var wanted: Bool { svg != nil || html != nil }
    }

    func execute(_ bytes: [UInt8], file: String, options: Interpreter.Options,
                         pictures: Pictures = Pictures(), title: String = "") -> Int32 {
        switch Script.parse(bytes) {
        case .failure(let errors):
            return report(errors, file: file)
        case .success(let script):
            let interpreter = Interpreter(options: options, output: standardOutput)
            interpreter.run(script)
            guard pictures.wanted else { return 0 }
            let picture = MarblePicture(title: title, rows: interpreter.recorded.rows, end: interpreter.finalTime)
            var writes: [(String, String)] = []
            if let svg = pictures.svg { writes.append((svg, picture.svg)) }
            if let html = pictures.html {
                let page = MarblePage(title: title, script: String(decoding: bytes, as: UTF8.self), picture: picture,
                                      transcript: interpreter.transcript)
                writes.append((html, page.html))
            }
            for (path, text) in writes {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
                } catch {
                    standardError("ripple-playground: cannot write '\(path)': \(error.localizedDescription)")
                    return 1
                }
            }
            return 0
        }
    }

    private func report(_ errors: ScriptErrors, file: String) -> Int32 {
        for diagnostic in errors.diagnostics { standardError(diagnostic.formatted(file: file)) }
        return 2
    }

    private func read(_ path: String) -> ([UInt8], String)? {
        if path == "-" { return (readStandardInput(), "<stdin>") }
        guard let data = FileManager.default.contents(atPath: path) else {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            let reason = !exists ? "no such file" : isDirectory.boolValue ? "it is a directory" : "it cannot be read"
            standardError("ripple-playground: cannot read '\(path)': \(reason)")
            return nil
        }
        return ([UInt8](data), path)
    }

    private func usageError(_ message: String) -> Int32 {
        standardError("ripple-playground: \(message)")
        standardError(Self.usage)
        return 2
    }
}
