import Foundation

extension NotificationCenter {
    /// The notifications named `name` (from `object`, or any sender when nil), as a cold signal.
    ///
    /// Subscribing adds an observer; disposing removes it. Notifications arrive on the
    /// posting thread; it never completes.
    ///
    ///     NotificationCenter.default.signal(for: .configChanged).subscribeNext { reload($0) }
    public func signal(for name: Notification.Name, object: AnyObject? = nil) -> Signal<Notification> {
        let objectBox = UncheckedSendable(object)
        return Signal { [self] subscriber in
            let observer = addObserver(forName: name, object: objectBox.value, queue: nil) { notification in
                subscriber.sendNext(notification)
            }
            let observerBox = UncheckedSendable(observer)
            return ActionDisposable { [self] in removeObserver(observerBox.value) }
        }
    }
}
