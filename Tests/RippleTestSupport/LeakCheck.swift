import Foundation
import Testing
import Ripple

/// A trait that fails a test which leaves subscriptions alive.
///
/// Each test runs in its own `RippleDebug.Scope`; when it returns, the subscriptions it
/// created must all be gone (after a grace period of up to `Workload.hangLimit`, for work a
/// scheduler's thread finishes after the test body: on a busy machine that thread may wait
/// seconds for a core). Tests run in parallel, so the global
/// `RippleDebug.liveSubscriptions` cannot be compared per test; the scope counts only
/// what this test's task created. Applied to a suite it checks every test in it.
///
///     @Suite(.leakChecked) struct SubjectTests { … }
public struct LeakCheck: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }  // the suite itself
        let scope = RippleDebug.Scope()
        try await RippleDebug.counting(in: scope) { try await function() }
        let deadline = ContinuousClock.now + .seconds(Workload.hangLimit)
        while scope.liveSubscriptions != 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(scope.liveSubscriptions == 0, "\(scope.liveSubscriptions) subscriptions created by this test are still alive")
    }
}

extension Trait where Self == LeakCheck {
    /// Fails a test that leaves any subscription it created alive.
    public static var leakChecked: Self { LeakCheck() }
}

/// The live subscriptions the running test's task created (see `LeakCheck`).
public var liveSubscriptionsInThisTest: Int {
    RippleDebug.currentScope?.liveSubscriptions ?? RippleDebug.liveSubscriptions
}
