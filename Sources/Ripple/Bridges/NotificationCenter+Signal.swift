import Foundation

extension NotificationCenter {
    /// The notifications named `name` (from `object`, or any sender when nil), as a cold signal.
    ///
    /// Subscribing adds an observer; disposing removes it. Notifications arrive on the
    /// posting thread (a subscription made on an actor gets them on that actor); it never
    /// completes. `Notification` is not `Sendable` (its `userInfo` is `[AnyHashable: Any]`):
    /// treat what it carries as handed over by the poster.
    ///
    ///     NotificationCenter.default.signal(for: .configChanged).subscribeNext { reload($0) }
    public func signal(for name: Notification.Name, object: AnyObject? = nil) -> Signal<Notification> {
        let objectBox = UncheckedSendable(object)
        return Signal { [self] subscriber in
            // `Notification` is not `Sendable`: NotificationCenter hands it over on the posting
            // thread, as it would to any observer block; the passthrough serializes delivery.
            let target = UncheckedSendable(subscriber)
            let observer = addObserver(forName: name, object: objectBox.value, queue: nil) { notification in
                target.value.sendNext(notification)
            }
            let observerBox = UncheckedSendable(observer)
            return ActionDisposable { [self] in removeObserver(observerBox.value) }
        }
    }
}
