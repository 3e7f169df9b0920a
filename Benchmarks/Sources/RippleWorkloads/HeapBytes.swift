import CHeapBytes
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// glibc's count of bytes in use (`mallinfo2().uordblks`), corrected for the size header
/// package-benchmark's malloc interposer puts in front of every `malloc`, `calloc` and
/// `realloc` block when it is loaded: 16 bytes per live block, counted from the interposer's
/// own statistics (found with `dlsym`, so a process without the interposer reads glibc's
/// figure as is).
struct HeapBytes {
    let inUse: Int
    let interposedBlocks: Int

    static func now() -> HeapBytes {
        HeapBytes(inUse: Int(heap_bytes_in_use()), interposedBlocks: InterposerStats.liveBlocks() ?? 0)
    }

    /// The bytes allocated since `earlier`, as glibc would count them without the interposer.
    func bytesSince(_ earlier: HeapBytes) -> Double {
        Double((inUse - earlier.inUse) - InterposerStats.headerSize * (interposedBlocks - earlier.interposedBlocks))
    }
}

/// The malloc interposer's counters, when the process has it (package-benchmark's benchmark
/// executables, with the `MallocInterposer` trait).
enum InterposerStats {
    /// The interposer's per-block header (`malloc_header_t`, malloc-interposer 1.6.1).
    static let headerSize = 16
    private typealias GetStats = @convention(c) (
        UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?,
        UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?
    ) -> Void
    private static let getStats: GetStats? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_interposer_get_stats") else { return nil }
        return unsafeBitCast(symbol, to: GetStats.self)
    }()

    /// Blocks allocated minus blocks freed since the interposer's last reset, or nil without it.
    static func liveBlocks() -> Int? {
        guard let getStats else { return nil }
        var mallocCount: Int64 = 0, mallocBytes: Int64 = 0, small: Int64 = 0, large: Int64 = 0
        var freeCount: Int64 = 0, freeBytes: Int64 = 0
        getStats(&mallocCount, &mallocBytes, &small, &large, &freeCount, &freeBytes)
        return Int(mallocCount - freeCount)
    }
}
