import Foundation

extension Signal where Value == String {
    /// Follows a growing file like `tail -F -n 0`: the lines appended to `path` from now on.
    ///
    /// It starts at the current end of the file, or waits for the file if it does not exist
    /// yet (and then reads it from the start). It keeps following across truncation (reads
    /// again from the start) and rotation by rename (finishes the old file, then reads the new
    /// one from the start). The file is polled every `pollInterval` on a private queue; the
    /// descriptor Ripple opened is closed on dispose. It never completes.
    ///
    ///     Signal.follow(path: "/var/log/app.log").subscribeNext { print($0) }
    public static func follow(path: String, pollInterval: Duration = .milliseconds(50)) -> Signal<String> {
        Signal { subscriber in
            let follower = FileFollower(path: path, subscriber: subscriber)
            let timer = DispatchSource.makeTimerSource(queue: follower.queue)
            let interval = DispatchTimeInterval.nanoseconds(pollInterval.clampedNanoseconds)
            timer.schedule(deadline: .now(), repeating: interval)
            timer.setEventHandler { follower.poll() }
            follower.queue.sync { follower.start() }
            timer.resume()
            return ActionDisposable {
                timer.cancel()
                follower.queue.async { follower.close() }
            }
        }
    }
}

/// The state of one `follow(path:)` subscription. Every member is used only on `queue`.
final class FileFollower: @unchecked Sendable {  // the `var`s are touched only on `queue`, a serial queue
    let queue = DispatchQueue(label: "ripple.follow")
    private let path: String
    private let subscriber: PassthroughSubscriber<String>
    private var descriptor: Int32 = -1
    private var inode: UInt64 = 0
    private var offset: Int64 = 0
    private var splitter = LineSplitter()

    init(path: String, subscriber: PassthroughSubscriber<String>) {
        self.path = path
        self.subscriber = subscriber
    }

    /// Opens the file at its end, if it exists (`tail -n 0`).
    func start() {
        if open(atEnd: true) { return }
    }

    func poll() {
        if subscriber.isDisposed { return close() }
        var info = stat()
        let exists = stat(path, &info) == 0
        if descriptor < 0 {
            if exists && open(atEnd: false) { readAvailable() }
            return
        }
        if exists && UInt64(info.st_ino) != inode {
            // Rotated by rename: finish what was written to the old file, then switch.
            readAvailable()
            if let last = splitter.finish() { subscriber.sendNext(last) }
            close()
            if open(atEnd: false) { readAvailable() }
            return
        }
        var current = stat()
        if fstat(descriptor, &current) == 0, Int64(current.st_size) < offset {
            // Truncated: read again from the start.
            offset = 0
            lseek(descriptor, 0, SEEK_SET)
            splitter.reset()
        }
        readAvailable()
    }

    func close() {
        if descriptor >= 0 { Foundation.close(descriptor) }
        descriptor = -1
    }

    private func open(atEnd: Bool) -> Bool {
        let opened = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { return false }
        var info = stat()
        fstat(opened, &info)
        descriptor = opened
        inode = UInt64(info.st_ino)
        offset = atEnd ? Int64(info.st_size) : 0
        lseek(descriptor, off_t(offset), SEEK_SET)
        splitter.reset()
        return true
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while descriptor >= 0 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            offset += Int64(count)
            for line in splitter.append(buffer[0..<count]) {
                if subscriber.isDisposed { return }
                subscriber.sendNext(line)
            }
        }
    }
}
