import Foundation
import RipplePlayground

// ripple-playground: the scripted playground. Everything lives in RipplePlayground, so it is
// unit-tested without spawning this process; this file only wires it to the real streams.
let command = PlaygroundCommand(
    readStandardInput: { [UInt8](FileHandle.standardInput.readDataToEndOfFile()) },
    standardOutput: { print($0) },
    standardError: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
    isTerminal: isatty(0) == 1,
    readLine: { Swift.readLine(strippingNewline: true) },
    prompt: { text in
        print(text, terminator: "")
        fflush(nil)  // every stream: naming `stdout` is not concurrency-safe in Swift 6
    })
let status = command.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
