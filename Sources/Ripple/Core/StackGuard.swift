import CRippleThread
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps deep chains from overflowing the stack: when little stack is left, the work
/// continues on a fresh thread with a large stack while the caller waits.
///
/// Subscribing, delivering, disposing and releasing a chain of operators each recurse once
/// per operator: a chain of 100,000 `map`s built by a loop needs far more than a thread's
/// 8 MiB. Turning every operator into a state machine driven by a loop would make that
/// recursion go away, but not for the closures users write with `Signal { }`, and a
/// trampoline would stop a synchronous source from delivering during `subscribe`. Instead
/// Ripple does what rustc's `stacker` does: at the points where chains recurse
/// (`Signal.subscribe`, `Subscriber` and subject delivery, `CompoundDisposable.dispose`,
/// and the deinits of `Signal`, `Subscriber`, `CompoundDisposable`), it checks how much of
/// the thread's stack is left, and below `reserve` it runs the rest of the call on a new
/// thread with a `freshStackSize` stack and waits for it. The call stays synchronous and
/// ordered; only the thread differs. That thread sees the caller's `Schedulers.current`, its
/// `ImmediateScheduler` trampoline and its `RippleDebug.Scope`, so scheduling and leak
/// counting behave as on the caller's thread.
///
/// The check costs two thread-local loads and a compare; a chain of ordinary depth never
/// leaves its thread. Code that depends on the thread's identity (a thread-affine lock
/// held across a send, `Thread.current`, `DispatchQueue.getSpecific`) sees the new thread
/// once a chain is tens of thousands of operators deep.
@usableFromInline
enum StackGuard {
    /// Stack kept free below the deepest Ripple frame before it moves to a fresh stack:
    /// room for the user code and the frames between two checks.
    static let reserve = 256 * 1024
    /// Relay subscribers (one per `map`, `filter`, … level) check the stack only every this
    /// many levels; the frames of 32 levels fit in `reserve` many times over, even unoptimized.
    @inlinable static var relayStride: UInt32 { 32 }
    /// The stack of each continuation thread: 64 MiB, or 1 MiB under ThreadSanitizer (which
    /// lets a thread use only `threadSanitizerBudget` of it).
    static let freshStackSize = runsUnderThreadSanitizer ? 1024 * 1024 : 64 * 1024 * 1024

    /// How much of a thread's stack Ripple lets chains use when the ThreadSanitizer runtime is
    /// in the process.
    ///
    /// ThreadSanitizer pushes every instrumented call on a per-thread shadow stack of 65,536
    /// entries (compiler-rt's `kShadowStackSize`) and, in release builds of its runtime, does
    /// not check the bound: deeper recursion writes past it and corrupts the runtime's own
    /// memory (seen here as hangs in `MetaMap::FreeRange`, a failed CHECK in
    /// `MetaMap::ResetClocks`, and SEGVs). Every instrumented frame calls into the runtime,
    /// so it is at least 16 bytes; 768 KiB of stack is then at most 49,152 frames, and a
    /// chain that needs more continues on a fresh thread with a fresh shadow stack.
    static let threadSanitizerBudget = 768 * 1024

    /// Whether this process runs with the ThreadSanitizer runtime (its entry hook is exported).
    static let runsUnderThreadSanitizer = processSymbol("__tsan_func_entry") != nil

    /// Whether the current thread has more than `reserve` bytes of stack left.
    ///
    /// Runs on every send and (every `relayStride` levels) every delivery, so its common path
    /// is inline and a few instructions: the thread's bounds live in C thread-local storage
    /// (`ripple_stack_has_room`) and are compared with the stack pointer, which is always on
    /// the real stack (never in an AddressSanitizer fake frame). Only a thread's first check
    /// computes its bounds.
    @inlinable
    static func hasRoom() -> Bool {
        let room = ripple_stack_has_room()
        if _fastPath(room >= 0) { return room != 0 }
        return hasRoomOnNewThread()
    }

    /// `hasRoom` on a thread whose bounds are not computed yet: computes them, then checks.
    @usableFromInline @inline(never)
    static func hasRoomOnNewThread() -> Bool {
        _ = boundsOfCurrentThread()
        return ripple_stack_has_room() != 0
    }

    /// Runs `body` here when there is room, else on a fresh stack, and returns its result.
    @inlinable
    static func run<T>(_ body: () -> T) -> T {
        if hasRoom() { return body() }
        return onFreshStack(body)
    }

    /// Whether `address`, a local variable's, lies in the last `reserve` bytes of this
    /// thread's stack. A thread whose stack is unknown counts as having room.
    @usableFromInline
    static func isNearTheEnd(_ address: UInt) -> Bool {
        let bounds = boundsOfCurrentThread()
        let onStack = stackAddress(address, of: bounds)
        return onStack >= bounds.low && onStack < bounds.waterMark
    }

    /// The address on this thread's stack of the frame that holds `pointer`, a local
    /// variable's address.
    ///
    /// Usually the address itself. AddressSanitizer's use-after-return detection (on by
    /// default on Linux) moves locals into "fake stack" frames on the heap, where their
    /// addresses say nothing about the stack; ASan's interface maps such a frame back to the
    /// real frame it stands for. Tests that measure stack growth use this too.
    static func stackAddress(of pointer: UnsafeRawPointer) -> UInt {
        stackAddress(UInt(bitPattern: pointer), of: boundsOfCurrentThread())
    }

    /// `address` itself when it lies on the stack `bounds` describes; otherwise mapped from an
    /// AddressSanitizer fake frame to its real frame (unchanged when ASan is absent or the
    /// address is in no fake frame).
    private static func stackAddress(_ address: UInt, of bounds: StackBounds) -> UInt {
        if bounds.contains(address) { return address }
        guard let fakeStack = addressSanitizerFakeStack else { return address }
        let current = fakeStack.current()
        guard current != nil,
              let real = fakeStack.realFrame(current, UnsafeMutableRawPointer(bitPattern: address), nil, nil)
        else { return address }
        return UInt(bitPattern: real)
    }

    /// The current thread's stack bottom and water mark, computed once per thread and kept in
    /// C thread-local storage (`ripple_current_stack_bounds`: plain data, nothing to free).
    private static func boundsOfCurrentThread() -> StackBounds {
        let stored = ripple_current_stack_bounds()
        if stored.pointee.high == 0 {
            let bounds = computeBounds()
            // An unknown stack is stored as high = 1: computed, and no address is near its end.
            stored.pointee = ripple_stack_bounds(low: bounds.low, high: max(bounds.high, 1), water_mark: bounds.waterMark)
        }
        let bounds = stored.pointee
        return StackBounds(low: bounds.low, high: bounds.high, waterMark: bounds.water_mark)
    }

    private static func computeBounds() -> StackBounds {
        #if os(Linux)
        var attributes = pthread_attr_t()
        guard let getAttributes = pthreadGetAttributes,
              getAttributes(pthread_self(), &attributes) == 0 else { return .unknown }
        defer { pthread_attr_destroy(&attributes) }
        var base: UnsafeMutableRawPointer?
        var size = 0
        guard pthread_attr_getstack(&attributes, &base, &size) == 0, let base else { return .unknown }
        let low = UInt(bitPattern: base)
        #else
        let size = pthread_get_stacksize_np(pthread_self())
        let low = UInt(bitPattern: pthread_get_stackaddr_np(pthread_self())) - UInt(size)
        #endif
        // Chains may use the whole stack, or only its top `threadSanitizerBudget` under TSan.
        let usable = runsUnderThreadSanitizer ? min(size, threadSanitizerBudget) : size
        let bottom = low + UInt(size - usable)
        return StackBounds(low: low, high: low + UInt(size), waterMark: bottom + UInt(min(reserve, usable / 4)))
    }

    /// Runs `body` on a new thread with a `freshStackSize` stack and waits for it.
    ///
    /// Falls back to running `body` here if no thread can be created.
    @usableFromInline @discardableResult
    static func onFreshStack<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { body in
            var result: T?
            let continuation = Continuation { result = body() }
            if !continuation.runOnFreshThread() { continuation.work() }
            return result!
        }
    }

    /// The work handed to a continuation thread, with the thread-specific values it inherits.
    private final class Continuation {
        let work: () -> Void
        /// (key, value) pairs copied from the calling thread.
        let inherited: [(pthread_key_t, UnsafeMutableRawPointer?)]
        /// The caller's leak-counting scope (a task-local, which a new thread does not inherit).
        let debugScope: RippleDebug.Scope?
        /// The caller's identity for the delivery turn: the new thread acts as the caller, so
        /// its sends to the turns the caller holds count as re-entrant (see `WaitGraph`).
        let turnIdentity = TurnIdentity.current

        init(_ work: @escaping () -> Void) {
            self.work = work
            inherited = inheritedKeys.map { ($0, pthread_getspecific($0)) }
            debugScope = RippleDebug.currentScope
        }

        /// Starts the thread and joins it; false when it could not be started.
        func runOnFreshThread() -> Bool {
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            pthread_attr_setstacksize(&attributes, StackGuard.freshStackSize)
            let argument = Unmanaged.passRetained(self).toOpaque()
            #if os(Linux)
            var thread = pthread_t()
            #else
            var thread: pthread_t?
            #endif
            let status = pthread_create(&thread, &attributes, { argument in
                let continuation = Unmanaged<Continuation>.fromOpaque(argument!).takeRetainedValue()
                continuation.runHere()
                return nil
            }, argument)
            guard status == 0 else {
                Unmanaged<Continuation>.fromOpaque(argument).release()
                return false
            }
            #if os(Linux)
            pthread_join(thread, nil)
            #else
            pthread_join(thread!, nil)
            #endif
            return true
        }

        /// Installs the inherited values, runs the work, and takes back the values that are
        /// still the caller's (so the thread's exit does not release what it does not own).
        private func runHere() {
            for (key, value) in inherited { pthread_setspecific(key, value) }
            WaitGraph.acting(as: turnIdentity) {
                if let debugScope {
                    RippleDebug.counting(in: debugScope, work)
                } else {
                    work()
                }
            }
            for (key, value) in inherited where pthread_getspecific(key) == value {
                pthread_setspecific(key, nil)
            }
        }
    }
}

/// Thread-specific values a continuation thread takes over from its caller: the running
/// scheduler and the immediate scheduler's trampoline (both owned by the waiting caller).
private let inheritedKeys: [pthread_key_t] = [currentSchedulerKey, trampolineKey]

#if os(Linux)
/// glibc's `pthread_getattr_np` (the Glibc module hides it behind `_GNU_SOURCE`), looked up
/// once; nil where the C library lacks it, and then the stack check always passes.
private let pthreadGetAttributes: (@convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32)? = {
    guard let symbol = processSymbol("pthread_getattr_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32).self)
}()
#endif

/// A thread's stack, and the address below which it counts as near its end.
struct StackBounds {
    /// The lowest address of the stack.
    var low: UInt
    /// Just past the highest address of the stack.
    var high: UInt
    var waterMark: UInt
    /// For a thread whose stack cannot be found: no address is near the end.
    static let unknown = StackBounds(low: 0, high: 0, waterMark: 0)

    func contains(_ address: UInt) -> Bool { address >= low && address < high }
}

/// A symbol of the running process or a library it loaded (`dlsym(RTLD_DEFAULT, name)`).
private func processSymbol(_ name: String) -> UnsafeMutableRawPointer? {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
}

/// `__asan_get_current_fake_stack()`
private typealias CurrentFakeStack = @convention(c) () -> UnsafeMutableRawPointer?
/// `__asan_addr_is_in_fake_stack(fake_stack, addr, beg, end)`: the real frame, or nil.
private typealias RealFrameOfFakeAddress = @convention(c) (
    UnsafeMutableRawPointer?, UnsafeMutableRawPointer?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> UnsafeMutableRawPointer?

/// AddressSanitizer's fake-stack interface, looked up once; nil when ASan is not in the process.
private let addressSanitizerFakeStack: (current: CurrentFakeStack, realFrame: RealFrameOfFakeAddress)? = {
    guard let current = processSymbol("__asan_get_current_fake_stack"),
          let realFrame = processSymbol("__asan_addr_is_in_fake_stack") else { return nil }
    return (unsafeBitCast(current, to: CurrentFakeStack.self),
            unsafeBitCast(realFrame, to: RealFrameOfFakeAddress.self))
}()
