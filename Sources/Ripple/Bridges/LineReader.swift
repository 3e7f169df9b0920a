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
    /// Reads on a thread of its own, waiting with `poll(2)` on the descriptor and on a wake-up
    /// descriptor of its own. An unfinished last line is sent at the end. The descriptor belongs
    /// to the caller and is not closed.
    ///
    /// Once `dispose()` returns, the descriptor is never read again: the caller may close it at
    /// once, even if its number is then reused by an unrelated file. `dispose()` wakes the
    /// reader and waits at most for a `read(2)` already under way, never for a callback; called
    /// from a callback (on the reader thread) it does not wait at all.
    ///
    ///     let input = Signal.lines(from: FileHandle.standardInput).subscribeNext { print("> \($0)") }
    ///     input.dispose()
    ///     try FileHandle.standardInput.close()   // safe: the reader is done with it
    ///
    /// - Parameter handle: The handle to read; it stays open and the caller's.
    /// - Returns: A signal of the lines, completing at end of input.
    public static func lines(from handle: FileHandle) -> Signal<String> {
        Signal { subscriber in
            let reader: DescriptorReader
            do { reader = try DescriptorReader(descriptor: handle.fileDescriptor) } catch {
                subscriber.sendError(error)
                return ActionDisposable()
            }
            let thread = Thread { reader.run(subscriber) }
            thread.name = "ripple.lines"
            thread.start()
            return ActionDisposable { reader.stop() }
        }
    }
}

/// The reader thread of one `lines(from:)` subscription, and `stop()`, which guarantees that no
/// `read(2)` of the descriptor starts after it returns.
///
/// The thread polls the descriptor and a self-pipe that `stop()` writes to. Each read
/// begins only after checking, under `state`, that the reader is not stopped, and marks itself
/// in progress; `stop()` marks it stopped under the same lock and, if a read is in progress,
/// waits for it to end. Callbacks run after a read has ended, so a `stop()` from one never waits.
final class DescriptorReader: Sendable {
    /// Guarded by `state`.
    private struct State: Sendable {
        /// Set by `stop()`; no read starts after it.
        var isStopped = false
        /// A `read(2)` of the descriptor is under way.
        var isReading = false
        /// `stop()` waits on `readEnded` for the read under way.
        var stopperIsWaiting = false
        /// The thread has ended and closed `wake`.
        var isFinished = false
    }

    private let descriptor: Int32
    /// The self-pipe: the thread polls `wake`, `stop()` writes a byte to `wakeWriter`. Both are
    /// closed by the thread as it ends, under `state`, so `stop()` never writes to a reused number.
    private let wake: Int32, wakeWriter: Int32
    private let state = Lock(State())
    private let readEnded = DispatchSemaphore(value: 0)

    init(descriptor: Int32) throws {
        self.descriptor = descriptor
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        (wake, wakeWriter) = (ends[0], ends[1])
    }

    /// Stops the reader: no read of the descriptor starts after this returns.
    func stop() {
        let mustWait = state.withLock { state -> Bool in
            guard !state.isStopped else { return false }
            state.isStopped = true
            if !state.isFinished {
                var byte: UInt8 = 1
                _ = write(wakeWriter, &byte, 1)
            }
            state.stopperIsWaiting = state.isReading
            return state.isReading
        }
        if mustWait { readEnded.wait() }
    }

    /// The thread's body: reads, splits and sends lines until the end, an error or `stop()`.
    func run(_ subscriber: some SubscriberProtocol<String>) {
        defer {
            state.withLock { state in
                state.isFinished = true
                close(wake)
                close(wakeWriter)
            }
        }
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !subscriber.isDisposed {
            var requests = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                            pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&requests, nfds_t(requests.count), 100)
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            if requests[1].revents != 0 { return }  // woken by stop()
            guard beginRead() else { return }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            let readError = errno
            endRead()
            if count > 0 {
                for line in splitter.append(buffer[0..<count]) { subscriber.sendNext(line) }
            } else if count == 0 {
                if let last = splitter.finish() { subscriber.sendNext(last) }
                subscriber.sendCompleted()
                return
            } else if readError != EAGAIN && readError != EINTR {
                subscriber.sendError(POSIXError(POSIXErrorCode(rawValue: readError) ?? .EIO))
                return
            }
        }
    }

    /// False if stopped; else marks a read under way.
    private func beginRead() -> Bool {
        state.withLock { state in
            if state.isStopped { return false }
            state.isReading = true
            return true
        }
    }

    /// Marks the read ended and releases a `stop()` waiting for it.
    private func endRead() {
        let stopperIsWaiting = state.withLock { state in
            state.isReading = false
            defer { state.stopperIsWaiting = false }
            return state.stopperIsWaiting
        }
        if stopperIsWaiting { readEnded.signal() }
    }
}
