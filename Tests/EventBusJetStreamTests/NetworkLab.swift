import Foundation
import Glibc
import Synchronization

/// Network namespaces a partition test creates, and removes when the value goes: a hub
/// namespace holding a bridge, and one namespace per node joined to the bridge by a veth
/// pair. Every address (`10.213.0.K`, the hub's `10.213.0.254`) exists only inside them, so
/// nothing of the machine's own network changes and labs never collide.
///
/// A node is cut off by a blackhole route in a namespace: ``cut(from:to:)`` drops what one
/// node sends another, one direction; cutting both directions is two calls. The test
/// itself reaches the servers from the hub (``inHub(_:)``) and the gateways through `ipc://`
/// sockets, which live in the file system and so cross namespaces.
///
/// Needs root (`ip netns`), as `make test` in CI has.
final class NetworkLab: Sendable {
    /// The prefix of every namespace this lab made: `ebXXXXXX-hub`, `ebXXXXXX-n1`, …
    let name: String
    let nodes: Int
    private let cuts = Cuts()

    init(nodes: Int) throws {
        guard geteuid() == 0 else { throw TestFailure("a partition test needs root, for ip netns") }
        name = "eb" + UUID().uuidString.prefix(6).lowercased()
        self.nodes = nodes
        do {
            try Self.ip(["netns", "add", hub])
            try Self.ip(["-n", hub, "link", "set", "lo", "up"])
            try Self.ip(["-n", hub, "link", "add", "br0", "type", "bridge"])
            try Self.ip(["-n", hub, "addr", "add", "\(Self.subnet).254/24", "dev", "br0"])
            try Self.ip(["-n", hub, "link", "set", "br0", "up"])
            for node in 1...nodes {
                try Self.ip(["netns", "add", namespace(node)])
                try Self.ip(["-n", namespace(node), "link", "set", "lo", "up"])
                try Self.ip(["-n", hub, "link", "add", "v\(node)", "type", "veth", "peer", "name", "eth0", "netns", namespace(node)])
                try Self.ip(["-n", hub, "link", "set", "v\(node)", "master", "br0"])
                try Self.ip(["-n", hub, "link", "set", "v\(node)", "up"])
                try Self.ip(["-n", namespace(node), "addr", "add", "\(address(node))/24", "dev", "eth0"])
                try Self.ip(["-n", namespace(node), "link", "set", "eth0", "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    static let subnet = "10.213.0"
    var hub: String { "\(name)-hub" }
    func namespace(_ node: Int) -> String { "\(name)-n\(node)" }
    func address(_ node: Int) -> String { "\(Self.subnet).\(node)" }

    /// From now on, node `from` drops every packet it sends to node `to`.
    func cut(from: Int, to: Int) throws {
        try Self.ip(["-n", namespace(from), "route", "add", "blackhole", "\(address(to))/32"])
        cuts.add(from: from, to: to)
    }

    /// Removes every cut.
    func heal() throws {
        for (from, to) in cuts.takeAll() {
            try Self.ip(["-n", namespace(from), "route", "del", "blackhole", "\(address(to))/32"])
        }
    }

    /// Starts `executable` inside node `node`'s namespace, its stderr (and stdout) to `log`.
    /// `ip netns exec` execs it, so the process's identifier is the program's own.
    func launch(in node: Int, _ executable: String, _ arguments: [String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.ipPath())
        process.arguments = ["netns", "exec", namespace(node), executable] + arguments
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// Runs `body` on a thread of its own that joined the hub's namespace, and waits for it.
    /// A socket opened there (a NATS connection) stays in the hub and can be used from any
    /// thread afterwards; the threads libnats starts for it are started from there too.
    func inHub<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let path = "/var/run/netns/\(hub)"
        let result = Outcome<T>()
        let thread = Thread {
            let descriptor = open(path, O_RDONLY)
            defer { if descriptor >= 0 { close(descriptor) } }
            guard descriptor >= 0, Self.setNetworkNamespace(descriptor) == 0 else {
                result.set(.failure(TestFailure("cannot join \(path): errno \(errno)")))
                return
            }
            result.set(Result { try body() })
        }
        thread.start()
        return try result.wait().get()
    }

    /// `setns(fd, CLONE_NEWNET)`: Swift's Glibc module does not declare it, so it is looked up.
    private static func setNetworkNamespace(_ descriptor: Int32) -> Int32 {
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else { return -1 }
        let cloneNewNet: Int32 = 0x4000_0000
        return unsafeBitCast(symbol, to: SetNS.self)(descriptor, cloneNewNet)
    }

    private func remove() {
        for node in (1...max(nodes, 1)).reversed() { try? Self.ip(["netns", "del", namespace(node)]) }
        try? Self.ip(["netns", "del", hub])
    }

    static func ipPath() throws -> String {
        let candidates = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestFailure("no ip command (iproute2) in \(candidates)")
        }
        return path
    }

    /// Runs `ip ARGUMENTS`, throwing with its stderr when it fails.
    static func ip(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ipPath())
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("ip \(arguments.joined(separator: " ")): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}

/// The cuts in place, to heal them.
private final class Cuts: Sendable {
    private let list = Mutex<[(Int, Int)]>([])
    func add(from: Int, to: Int) { list.withLock { $0.append((from, to)) } }
    func takeAll() -> [(Int, Int)] { list.withLock { list in defer { list.removeAll() }; return list } }
}

/// One result handed from a thread to the one waiting for it.
private final class Outcome<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)
    func set(_ result: Result<T, any Error>) {
        value.withLock { $0 = result }
        done.signal()
    }
    func wait() -> Result<T, any Error> {
        done.wait()
        return value.withLock { $0! }
    }
}
