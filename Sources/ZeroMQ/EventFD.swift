import Glibc

/// A Linux `eventfd`: a counter another thread can bump to wake a ``Poller``.
///
/// The thread that owns a poll loop adds ``fileDescriptor`` to its ``Poller``;
/// any thread calls ``signal()``; the owner calls ``drain()`` when the poller
/// reports it readable. Signals coalesce: several before one drain wake once.
///
/// Swift's Glibc module does not export `<sys/eventfd.h>`, so the C function is
/// looked up once with `dlsym` and called through a C function pointer.
public final class EventFD: Sendable {
    /// The descriptor to poll for `.readable`.
    public let fileDescriptor: Int32

    private typealias EventFDFunction = @convention(c) (UInt32, Int32) -> Int32

    /// `eventfd(3)` from the C library, resolved once.
    private static let create: EventFDFunction? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "eventfd") else { return nil }
        return unsafeBitCast(symbol, to: EventFDFunction.self)
    }()

    /// Creates a non-blocking, close-on-exec eventfd with the counter at zero.
    public init() throws(ZMQError) {
        guard let create = Self.create else { throw ZMQError(code: ENOSYS, operation: "eventfd") }
        // EFD_NONBLOCK and EFD_CLOEXEC are defined as O_NONBLOCK and O_CLOEXEC.
        let fd = create(0, O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw ZMQError(code: errno, operation: "eventfd") }
        fileDescriptor = fd
    }

    deinit { close(fileDescriptor) }

    /// Wakes the poller; safe from any thread.
    public func signal() {
        var one: UInt64 = 1
        // Only fails when the counter would overflow, i.e. a wake-up is already pending.
        _ = write(fileDescriptor, &one, 8)
    }

    /// Resets the counter so that the poller blocks again.
    public func drain() {
        var value: UInt64 = 0
        _ = read(fileDescriptor, &value, 8)
    }
}
