import Foundation
import RipplePlayground

// ripple-playground: the scripted playground. Everything lives in RipplePlayground, so it is
// unit-tested without spawning this process; this file only wires it to the real streams.
let command = PlaygroundCommand(
    readStandardInput: { [UInt8](FileHandle.standardInput.readDataToEndOfFile()) },
    standardOutput: { print($0) },
    standardError: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
let status = command.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
