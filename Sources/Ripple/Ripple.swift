/// Ripple: hot and cold signals for Swift on Linux.
public enum Ripple {
    /// The library's version.
    public static let version = "0.1.0"
}
