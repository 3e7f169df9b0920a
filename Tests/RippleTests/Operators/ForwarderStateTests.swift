import Testing
@testable import Ripple
import RippleTestSupport

/// `ForwarderState`, the pure state machine of a multi-source operator's forwarder: one test
/// per transition and per invariant.
@Suite(.leakChecked) struct ForwarderStateTests {
    typealias State = ForwarderState<Int>

    @Test func valuesAreAcceptedUntilATerminalEventWhichIsAcceptedOnce() {
        var state = State()
        let value = state.accept(.next(1))
        #expect(value)
        #expect(!state.isTerminated)
        let completion = state.accept(.completed)
        #expect(completion)
        #expect(state.isTerminated)
        let late = state.accept(.next(2))
        #expect(!late, "after a terminal event: dropped")
        let secondError = state.accept(.error(TestError()))
        #expect(!secondError, "a second terminal event: dropped")
        let secondCompletion = state.accept(.completed)
        #expect(!secondCompletion)
    }

    @Test func anErrorEndsTheStreamAsCompletionDoes() {
        var state = State()
        let error = state.accept(.error(TestError()))
        #expect(error)
        let late = state.accept(.next(1))
        #expect(!late)
    }

    @Test func aLookThatDeliversMarksTheLoopAsLooking() {
        var state = State()
        state.looked(.deliver(.next(1)))
        #expect(state.isLooking)
    }

    @Test func aLookThatDeliversForAWaitingThreadMarksTheLoopAsLooking() {
        var state = State()
        state.looked(.deliverFor(TurnWaiter.ofCurrentThread, .next(1), last: true))
        #expect(state.isLooking)
    }

    @Test(arguments: ["tidy", "handOff", "released"])
    func everyLookThatEndsTheLoopClearsLooking(kind: String) {
        var state = State()
        state.looked(.deliver(.next(1)))
        switch kind {
        case "tidy": state.looked(.tidy)
        case "handOff": state.looked(.handOff(TurnWaiter.ofCurrentThread))
        default: state.looked(.released)
        }
        #expect(!state.isLooking)
    }

    @Test func aDrainLooksOnlyWhenItsThreadHoldsTheTurn() {
        let state = State()
        #expect(state.drainStep(by: 0x1000, holder: 0x1000) == .look)
        #expect(state.drainStep(by: 0x1000, holder: 0x2000) == .done, "another thread holds it: that thread delivers")
        #expect(state.drainStep(by: 0x1000, holder: 0) == .done, "free: everything of this thread's was delivered")
    }

    /// Invariant 3: an event enqueued from inside a downstream callback is left to the loop up
    /// the stack, never delivered by a nested loop inside the callback.
    @Test func aDrainInsideTheRunningLoopLeavesItsEventsToThatLoop() {
        var state = State()
        state.looked(.deliver(.next(1)))
        #expect(state.drainStep(by: 0x1000, holder: 0x1000) == .done)
        state.looked(.released)
        #expect(state.drainStep(by: 0x1000, holder: 0x1000) == .look)
    }

    /// The state machine as the forwarder uses it: a value sent from inside the downstream's
    /// callback arrives after that callback returned, in order, and nothing after completion.
    /// The downstream does not serialize by itself (a `Subscriber` would queue the re-entrant
    /// value on its own turn and hide a forwarder that delivered it inside the callback).
    @Test func aForwarderDeliversAReentrantSendAfterTheCallbackInOrder() {
        final class Recorder: SubscriberProtocol, @unchecked Sendable {  // used on the test's thread only
            var log: [String] = []
            var onNext: (Int) -> Void = { _ in }
            func sendNext(_ value: Int) {
                log.append("begin \(value)")
                onNext(value)
                log.append("end \(value)")
            }
            func sendError(_ error: any Error) { log.append("error") }
            func sendCompleted() { log.append("completed") }
        }
        let recorder = Recorder()
        let forwarder = SerialForwarder<Int>(recorder)
        recorder.onNext = { value in if value == 1 { forwarder.send(.next(2)) } }
        forwarder.send(.next(1))
        forwarder.send(.completed)
        forwarder.send(.next(3))
        #expect(recorder.log == ["begin 1", "end 1", "begin 2", "end 2", "completed"])
        recorder.onNext = { _ in }
    }
}
