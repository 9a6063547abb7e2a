import CNATS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The headers of a NATS message: names with values, in order, a name possibly repeated.
///
/// JetStream reads some of them (`Nats-Msg-Id` for de-duplication, `Nats-Expected-*`);
/// server features newer than libnats 3.4 (the atomic batch headers of nats-server
/// 2.12+) are plain headers too, set here like any other.
public struct Headers: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    /// The header lines as (name, value), in the order they were added.
    public private(set) var entries: [(name: String, value: String)]

    /// No headers.
    public init() { entries = [] }

    public init(dictionaryLiteral elements: (String, String)...) {
        entries = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, compared exactly as NATS does (case-sensitive); setting
    /// replaces every value of `name`, setting `nil` removes them.
    public subscript(name: String) -> String? {
        get { entries.first { $0.name == name }?.value }
        set {
            entries.removeAll { $0.name == name }
            if let newValue { entries.append((name: name, value: newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] { entries.filter { $0.name == name }.map(\.value) }

    /// Adds a value for `name`, after those it has.
    public mutating func add(_ name: String, _ value: String) { entries.append((name: name, value: value)) }

    public var isEmpty: Bool { entries.isEmpty }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { entries.makeIterator() }

    public static func == (lhs: Headers, rhs: Headers) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The header JetStream de-duplicates on.
    public static let messageID = "Nats-Msg-Id"
}

/// A message received on a core NATS subscription, copied out of libnats's buffer.
public struct Message: Sendable, Equatable {
    public var subject: String
    /// The reply subject, for a request.
    public var reply: String?
    public var payload: [UInt8]
    public var headers: Headers

    public init(subject: String, reply: String? = nil, payload: [UInt8], headers: Headers = Headers()) {
        self.subject = subject
        self.reply = reply
        self.payload = payload
        self.headers = headers
    }

    /// Copies `handle`'s subject, reply, payload and headers; does not destroy it.
    init(copying handle: OpaquePointer) {
        subject = string(natsMsg_GetSubject(handle)) ?? ""
        reply = string(natsMsg_GetReply(handle)).flatMap { $0.isEmpty ? nil : $0 }
        payload = NativeMessage.payload(of: handle)
        headers = NativeMessage.headers(of: handle)
    }
}

/// Building and reading libnats's `natsMsg`.
enum NativeMessage {
    /// A new `natsMsg` that the caller owns (and destroys unless libnats takes it).
    static func make(subject: String, payload: [UInt8], headers: Headers, operation: String) throws(NATSError) -> OpaquePointer {
        var handle: OpaquePointer?
        let status = payload.withUnsafeBytes { bytes in
            natsMsg_Create(&handle, subject, nil, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        }
        try NATSError.check(status, "\(operation) \(subject)")
        // natsMsg_Create returns NATS_OK only with a message.
        guard let handle else { throw NATSError(status: NATS_ERR.rawValue, operation: operation, text: "no message") }
        for (name, value) in headers {
            let added = natsMsgHeader_Add(handle, name, value)
            if added != NATS_OK {
                let error = NATSError.last(added, "\(operation) header \(name)")
                natsMsg_Destroy(handle)
                throw error
            }
        }
        return handle
    }

    static func payload(of handle: OpaquePointer) -> [UInt8] {
        let count = Int(natsMsg_GetDataLength(handle))
        guard count > 0, let data = natsMsg_GetData(handle) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: count))
    }

    static func headers(of handle: OpaquePointer) -> Headers {
        var result = Headers()
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        var keyCount: Int32 = 0
        guard natsMsgHeader_Keys(handle, &keys, &keyCount) == NATS_OK, let keys else { return result }
        // The array is ours to free, the strings in it are the message's.
        defer { free(keys) }
        for index in 0..<Int(keyCount) {
            guard let key = keys[index] else { continue }
            var values: UnsafeMutablePointer<UnsafePointer<CChar>?>?
            var valueCount: Int32 = 0
            guard natsMsgHeader_Values(handle, key, &values, &valueCount) == NATS_OK, let values else { continue }
            defer { free(values) }
            let name = String(cString: key)
            for valueIndex in 0..<Int(valueCount) {
                if let value = values[valueIndex] { result.add(name, String(cString: value)) }
            }
        }
        return result
    }
}
