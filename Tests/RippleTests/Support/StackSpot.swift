import Foundation
import Testing
@testable import Ripple

/// Where a call runs: its thread and its depth on that thread's stack.
///
/// A test of "constant stack" records one at the first and at the last of many repeated steps:
/// a loop runs them on the same thread at about the same depth, while recursion would either
/// descend (the addresses drift apart) or, deep enough, be moved by `StackGuard` onto a fresh
/// thread's stack (the threads differ). Checking only that the work finishes cannot tell them apart.
struct StackSpot {
    let thread: pthread_t
    let address: UInt

    /// The calling frame's spot.
    @inline(never)
    static func here() -> StackSpot {
        var marker: UInt8 = 0
        let address = withUnsafeMutablePointer(to: &marker) { StackGuard.stackAddress(of: $0) }
        return StackSpot(thread: pthread_self(), address: address)
    }

    /// Expects `later` on this spot's thread, within `bytes` of this spot's depth.
    func expectSameThreadAndDepth(
        as later: StackSpot?, within bytes: UInt = 8 * 1024, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let later else {
            Issue.record("\(what): the last step was not recorded", sourceLocation: sourceLocation)
            return
        }
        #expect(pthread_equal(thread, later.thread) != 0, "\(what): moved to another thread (a fresh stack)", sourceLocation: sourceLocation)
        let distance = address > later.address ? address - later.address : later.address - address
        #expect(distance <= bytes, "\(what): the stack moved \(distance) bytes", sourceLocation: sourceLocation)
    }
}
