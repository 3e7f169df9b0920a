import Testing
@testable import Ripple
import RippleTestSupport

/// The seed documents' examples, reproduced line for line (timestamps dropped).
@Suite(.leakChecked) struct SeedExampleTests {
    // seeds/003: RACSubject
    @Test func racSubjectExamplePrintsInTheSeedsOrder() {
        var output: [String] = []
        let subject = Subject<String>()
        subject.sendNext("ooo")
        subject.subscribeNext { output.append("订阅者1\($0)") }
        subject.sendNext("aaa")
        subject.subscribeNext { output.append("订阅者2\($0)") }
        subject.sendNext("bbb")
        #expect(output == ["订阅者1aaa", "订阅者1bbb", "订阅者2bbb"])
    }

    // seeds/003: RACBehaviorSubject with no default value (nil prints as "(null)")
    @Test func racBehaviorSubjectExamplePrintsInTheSeedsOrder() {
        var output: [String] = []
        let subject = BehaviorSubject<Int?>(nil)
        func show(_ value: Int?) -> String { value.map(String.init) ?? "(null)" }
        subject.subscribeNext { output.append("1st Sub: \(show($0))") }
        subject.sendNext(1)
        subject.subscribeNext { output.append("2nd Sub: \(show($0))") }
        subject.sendNext(2)
        subject.subscribeNext { output.append("3rd Sub: \(show($0))") }
        subject.sendNext(3)
        subject.subscribeNext { output.append("4th Sub: \(show($0))") }
        subject.sendNext(4)
        subject.sendCompleted()
        #expect(output == [
            "1st Sub: (null)",
            "1st Sub: 1", "2nd Sub: 1",
            "1st Sub: 2", "2nd Sub: 2", "3rd Sub: 2",
            "1st Sub: 3", "2nd Sub: 3", "3rd Sub: 3", "4th Sub: 3",
            "1st Sub: 4", "2nd Sub: 4", "3rd Sub: 4", "4th Sub: 4",
        ])
    }

    // seeds/003: behaviorSubjectWithDefaultValue:@0
    @Test func racBehaviorSubjectWithADefaultSendsItToTheFirstSubscriber() {
        var output: [String] = []
        let subject = BehaviorSubject(0)
        subject.subscribeNext { output.append("1st Sub: \($0)") }
        #expect(output == ["1st Sub: 0"])
    }

    // seeds/003: RACReplaySubject
    @Test func racReplaySubjectExamplePrintsInTheSeedsOrder() {
        var output: [String] = []
        let subject = ReplaySubject<Int>()
        subject.subscribeNext { output.append("\($0)") }
        subject.sendNext(1)
        subject.subscribeNext { output.append("\($0)") }
        subject.sendNext(2)
        subject.subscribeNext { output.append("\($0)") }
        #expect(output == ["1", "1", "2", "2", "1", "2"])
    }

    // seeds/000: testPromise1, with DispatchQueue.asyncAfter(2 s) on a TestScheduler
    @Test func swiftSignalKitPromiseExamplePrintsInTheSeedsOrder() {
        let log = Box<[String]>([])
        @Sendable func print(_ line: String) { log.mutate { $0.append(line) } }
        let clock = TestScheduler()

        let promise1 = Promise<String>()
        var promise1Value: String? = nil
        let dispose0 = promise1.get().subscribe(next: { list in
            print("dispose0 get1--\(list)")
            promise1Value = list
        })
        dispose0.dispose()
        let promise1Value2 = rawValue(promise1)
        print("promise1Value--\(promise1Value ?? "nil") promise1Value2:\(promise1Value2 ?? "nil")")
        let dispose1 = promise1.get().subscribe(next: { list in print("dispose1 get1--\(list)") })
        promise1.set(Signal<String> { subscriber in
            print("设置值--aaa")
            subscriber.sendNext("aaaa")
            clock.schedule(after: .seconds(2)) {
                print("设置值--bbb")
                subscriber.sendNext("bbb")
            }
            return SerialDisposable()
        })
        let dispose2 = promise1.get().subscribe(next: { list in print("dispose2 get2--\(list)") })
        let promise1Value3 = rawValue(promise1)
        print("promise1Value3:\(promise1Value3 ?? "nil")")
        clock.advance(by: .seconds(2))

        #expect(log.value == [
            "promise1Value--nil promise1Value2:nil",
            "设置值--aaa",
            "dispose1 get1--aaaa",
            "dispose2 get2--aaaa",
            "promise1Value3:aaaa",
            "设置值--bbb",
            "dispose1 get1--bbb",
            "dispose2 get2--bbb",
        ])
        dispose1.dispose()
        dispose2.dispose()
    }

    // seeds/000: testValuePromise1
    @Test func swiftSignalKitValuePromise1PrintsInTheSeedsOrder() {
        var output: [String] = []
        let promise1 = ValuePromise("testA", ignoreRepeated: true)
        var promise1Value = "nil"
        output.append("promise1Value: \(promise1Value)")
        let promise1Dispose1 = promise1.get().subscribe(next: { value in
            output.append("promise1Dispose1-next:\(value)")
            promise1Value = value
        })
        output.append("promise1Value: \(promise1Value)")
        promise1.set(promise1Value + "---" + "testB")
        let promise1Dispose2 = promise1.get().subscribe(next: { value in
            output.append("promise1Dispose2-next: \(value)")
        })
        output.append("promise1Value: \(promise1Value)")
        promise1Dispose1.dispose()
        promise1Dispose2.dispose()
        #expect(output == [
            "promise1Value: nil",
            "promise1Dispose1-next:testA",
            "promise1Value: testA",
            "promise1Dispose1-next:testA---testB",
            "promise1Dispose2-next: testA---testB",
            "promise1Value: testA---testB",
        ])
    }

    // seeds/000: testValuePromise2
    @Test func swiftSignalKitValuePromise2PrintsInTheSeedsOrder() {
        var output: [String] = []
        let promise2 = ValuePromise("testX", ignoreRepeated: true)
        var promise2Value = "nil"
        output.append("promise2Value: \(promise2Value)")
        let promise2Dispose1 = promise2.get().subscribe(next: { value in
            output.append("promise2Dispose1-next:\(value)")
            promise2Value = value
        })
        promise2Dispose1.dispose()
        output.append("promise2Value: \(promise2Value)")
        promise2.set(promise2Value + "---" + "testY")
        let promise2Dispose2 = promise2.get().subscribe(next: { value in
            output.append("promise2Dispose2-next: \(value)")
        })
        output.append("promise2Value: \(promise2Value)")
        promise2Dispose2.dispose()
        #expect(output == [
            "promise2Value: nil",
            "promise2Dispose1-next:testX",
            "promise2Value: testX",
            "promise2Dispose2-next: testX---testY",
            "promise2Value: testX",
        ])
    }

    // seeds/000: testValuePromise3
    @Test func swiftSignalKitValuePromise3PrintsInTheSeedsOrder() {
        var output: [String] = []
        let promise3 = ValuePromise("aaa", ignoreRepeated: true)
        let promise3Value = rawValue(promise3)
        output.append("promise3Value: \(promise3Value)")
        promise3.set(promise3Value + "---" + "bbb")
        let promise3Dispose2 = promise3.get().subscribe(next: { value in
            output.append("promise3Dispose2-next: \(value)")
        })
        output.append("promise3Value: \(promise3Value)")
        promise3Dispose2.dispose()
        #expect(output == [
            "promise3Value: aaa",
            "promise3Dispose2-next: aaa---bbb",
            "promise3Value: aaa",
        ])
    }

    /// The seed's `rawValue` extension: subscribe, take what arrives synchronously, dispose.
    private func rawValue<T>(_ promise: Promise<T>) -> T? {
        var value: T?
        promise.get().subscribe(next: { value = $0 }).dispose()
        return value
    }

    private func rawValue<T>(_ promise: ValuePromise<T>) -> T {
        var value: T!
        promise.get().subscribe(next: { value = $0 }).dispose()
        return value
    }
}
