import Foundation

/// Where the tests find the executables they start. The bus's own (`eventbus`, the
/// built-in plugins) are in the root package's build folder; each example is a package
/// of its own under examples/, which `make test` builds before the tests, all of them in
/// one scratch folder (`.build-packages`) apart from the root's. The Makefile's TEST_ENV
/// names them: EVENTBUS_BIN, EVENTBUS_HTTP and EVENTBUS_EXAMPLE_*_BIN; without it, each
/// package's own `.build`.
public enum BuildFolder {
    /// The repository root: the nearest folder above this file with Sources/EventBusBroker
    /// (this file is compiled from the root package, whichever package's tests use it).
    public static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Sources/EventBusBroker").path) { return folder }
            folder.deleteLastPathComponent()
        }
        fatalError("no Sources/EventBusBroker above \(#filePath)")
    }()

    /// The `eventbus` executable: EVENTBUS_BIN, or the root's debug build's.
    public static var eventbus: String {
        ProcessInfo.processInfo.environment["EVENTBUS_BIN"] ?? root.appendingPathComponent(".build/debug/eventbus").path
    }

    /// The folder of `eventbus` and the built-in plugins: EVENTBUS_BIN's, or the root's debug build.
    public static var bus: String {
        URL(fileURLWithPath: eventbus).deletingLastPathComponent().path
    }

    /// The `eventbus-http` executable (edge/http, a package of its own): EVENTBUS_HTTP, the
    /// variable `eventbus up --http` finds it by, or edge/http's debug build's.
    public static var http: String {
        ProcessInfo.processInfo.environment["EVENTBUS_HTTP"] ?? root.appendingPathComponent("edge/http/.build/debug/eventbus-http").path
    }

    /// The build folder of the example package examples/`package` (plugins, chat-backend,
    /// gateway): EVENTBUS_EXAMPLE_<PACKAGE>_BIN (e.g. EVENTBUS_EXAMPLE_CHAT_BACKEND_BIN),
    /// or its debug build.
    public static func example(_ package: String) -> String {
        let variable = "EVENTBUS_EXAMPLE_\(package.uppercased().replacingOccurrences(of: "-", with: "_"))_BIN"
        if let path = ProcessInfo.processInfo.environment[variable] { return path }
        return root.appendingPathComponent("examples/\(package)/.build/debug").path
    }
}
