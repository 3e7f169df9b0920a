import Foundation

/// Splits a byte stream into lines: `\n`-terminated, a trailing `\r` removed, invalid
/// UTF-8 repaired. Keeps the unfinished last line until more bytes or the end arrive.
struct LineSplitter {
    private var pending: [UInt8] = []

    /// Appends bytes and returns every line they complete.
    mutating func append<Bytes: Sequence>(_ bytes: Bytes) -> [String] where Bytes.Element == UInt8 {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
            }
        }
        return lines
    }

    /// The unfinished last line at the end of the stream, if any.
    mutating func finish() -> String? {
        defer { pending = [] }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }

    /// Drops an unfinished line (after truncation or rotation).
    mutating func reset() { pending = [] }
}

extension Signal where Value == String {
    /// The lines read from `handle` (a pipe, a socket, standard input, a file), then
    /// completion at end of input; a read error fails the signal.
    ///
    /// Reads on a thread of its own, waiting with `poll(2)` so that disposing stops it within
    /// 100 ms even when no data comes. An unfinished last line is sent at the end. The
    /// descriptor belongs to the caller and is not closed.
    ///
    ///     Signal.lines(from: FileHandle.standardInput).subscribeNext { print("> \($0)") }
    public static func lines(from handle: FileHandle) -> Signal<String> {
        Signal { subscriber in
            let descriptor = handle.fileDescriptor
            let stop = CancellationFlag()
            let thread = Thread {
                var splitter = LineSplitter()
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while !stop.isDisposed && !subscriber.isDisposed {
                    var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&request, 1, 100)
                    if ready == 0 || (ready < 0 && errno == EINTR) { continue }
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count > 0 {
                        for line in splitter.append(buffer[0..<count]) { subscriber.sendNext(line) }
                    } else if count == 0 {
                        if let last = splitter.finish() { subscriber.sendNext(last) }
                        subscriber.sendCompleted()
                        return
                    } else if errno != EAGAIN && errno != EINTR {
                        subscriber.sendError(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                        return
                    }
                }
            }
            thread.name = "ripple.lines"
            thread.start()
            return stop
        }
    }
}
