/// The interactive mode (`ripple-playground repl`, and no arguments on a terminal): each
/// statement runs as soon as it is typed, on one virtual clock that lives as long as the
/// session; events print as they happen, with their time. A bad line is explained
/// (`<repl>:LINE:COLUMN: error: …`) and runs nothing; the session goes on.
extension PlaygroundCommand {
    static let greeting = """
        ripple-playground: statements run as you type them, on a virtual clock starting at 0ms.
        Begin with a statement:  subject s   then   subscribe a to s   then   send s 1 2   then   wait 10ms
        Or:  demo NAME  one built-in demo (list: their names)   tour  all of them   help  the language
        marbles draws what happened so far; quit (or Ctrl-D) ends the session.
        """

    func repl(_ options: Interpreter.Options) -> Int32 {
        standardOutput(Self.greeting)
        var sessionOptions = options
        sessionOptions.times = true
        let interpreter = Interpreter(options: sessionOptions, output: standardOutput)
        var parser = Parser()
        var number = 0
        session: while true {
            prompt("[\(Int(interpreter.now / .milliseconds(1)))ms] > ")
            guard let text = readLine() else {
                standardOutput("")
                break
            }
            number += 1
            let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            switch (words.first, words.count) {
            case ("quit", 1), ("exit", 1):
                break session
            case ("help", 1):
                standardOutput(Language.reference)
                continue
            case ("list", 1):
                listDemos()
                continue
            case ("tour", 1):
                _ = tour(options)
                continue
            case ("demo", 2):
                if let demo = Demo.named(words[1]) {
                    standardOutput("== \(demo.name): \(demo.summary) ==")
                    _ = execute(Array(demo.script.utf8), file: "demo:\(demo.name)", options: options)
                } else {
                    standardError("<repl>:\(number):6: error: unknown demo \(quoted(words[1])); 'list' shows them")
                }
                continue
            default:
                break
            }
            let (lines, problems) = Lexer.lines(of: Array(text.utf8))
            if let problem = problems.first {
                standardError(Diagnostic(line: number, column: problem.column, message: problem.message).formatted(file: "<repl>"))
                continue
            }
            guard let tokens = lines.first?.tokens else { continue }  // blank or a comment
            // A refused statement leaves no trace: the names it would define stay free.
            let saved = parser
            switch parser.statement(Line(number: number, tokens: tokens)) {
            case .success(let statement):
                interpreter.refillBudget()
                interpreter.perform(statement)
            case .failure(let diagnostic):
                parser = saved
                standardError(diagnostic.formatted(file: "<repl>"))
            }
        }
        interpreter.finish()
        return 0
    }
}
