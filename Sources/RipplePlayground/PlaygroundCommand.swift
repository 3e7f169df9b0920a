import Foundation

/// The `ripple-playground` command line: parses arguments, runs demos and scripts, and
/// returns the exit status (0 success, 2 a bad script or command line, 1 anything else).
/// Input and output are injected, so tests run it without spawning a process.
public struct PlaygroundCommand {
    /// The usage text printed for `--help` and after a bad command line.
    ///
    ///     print(PlaygroundCommand.usage)
    public static let usage = """
        usage: ripple-playground                   the tour: every built-in demo in order
               ripple-playground list              the built-in demos
               ripple-playground demo NAME         one built-in demo
               ripple-playground run FILE          a script file; FILE "-" reads standard input
               ripple-playground check FILE        parse and check only
               ripple-playground help              the language: statements and every operator
        options: --marbles (draw a marble diagram after the run)  --times (prefix each event with its virtual time)
        """

    let readStandardInput: () -> [UInt8]
    let standardOutput: (String) -> Void
    let standardError: (String) -> Void

    /// Creates a command with injected input and output, so tests need no process.
    ///
    ///     var out = ""
    ///     let command = PlaygroundCommand(readStandardInput: { [] },
    ///                                     standardOutput: { out += $0 }, standardError: { _ in })
    ///     let status = command.run(["list"])   // 0, with the demos in `out`
    ///
    /// - Parameters:
    ///   - readStandardInput: Reads all of standard input (for `run -`).
    ///   - standardOutput: Writes text to standard output.
    ///   - standardError: Writes text to standard error.
    public init(
        readStandardInput: @escaping () -> [UInt8],
        standardOutput: @escaping (String) -> Void,
        standardError: @escaping (String) -> Void
    ) {
        self.readStandardInput = readStandardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// Runs the command line `arguments` (without the program name).
    public func run(_ arguments: [String]) -> Int32 {
        var options = Interpreter.Options()
        var words: [String] = []
        for argument in arguments {
            switch argument {
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
        switch (words.first, words.count) {
        case (nil, _):
            return tour(options)
        case ("list", 1):
            let width = Demo.all.map(\.name.count).max() ?? 0
            for demo in Demo.all {
                standardOutput(demo.name + String(repeating: " ", count: width - demo.name.count + 2) + demo.summary)
            }
            return 0
        case ("demo", 2):
            guard let demo = Demo.named(words[1]) else {
                return usageError("unknown demo '\(words[1])'; 'ripple-playground list' shows them")
            }
            return execute(Array(demo.script.utf8), file: "demo:\(demo.name)", options: options)
        case ("run", 2), ("check", 2):
            guard let (bytes, file) = read(words[1]) else { return 1 }
            if words[0] == "check" {
                switch Script.parse(bytes) {
                case .success: return 0
                case .failure(let errors): return report(errors, file: file)
                }
            }
            return execute(bytes, file: file, options: options)
        case ("list", _), ("demo", _), ("run", _), ("check", _):
            return usageError("wrong number of arguments for '\(words[0])'")
        default:
            return usageError("unknown command '\(words[0])'")
        }
    }

    private func tour(_ options: Interpreter.Options) -> Int32 {
        for (index, demo) in Demo.all.enumerated() {
            if index > 0 { standardOutput("") }
            standardOutput("== \(demo.name): \(demo.summary) ==")
            let status = execute(Array(demo.script.utf8), file: "demo:\(demo.name)", options: options)
            if status != 0 { return status }
        }
        return 0
    }

    private func execute(_ bytes: [UInt8], file: String, options: Interpreter.Options) -> Int32 {
        switch Script.parse(bytes) {
        case .failure(let errors):
            return report(errors, file: file)
        case .success(let script):
            Interpreter(options: options, output: standardOutput).run(script)
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
