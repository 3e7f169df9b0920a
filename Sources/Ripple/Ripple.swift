/// The version of the Ripple library.
///
/// A global constant rather than a `Ripple` type: a type named like the module would hide
/// the module name, and `Ripple.Subject` must keep meaning the module's `Subject`.
public let rippleVersion = "0.1.0"
