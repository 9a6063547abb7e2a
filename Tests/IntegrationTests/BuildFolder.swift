import Foundation

/// Where the tests find the executables they start. The bus's own (`eventbus`, the
/// built-in plugins) are in the root package's build folder; each example is a
/// package of its own under examples/ with its own build folder, which `make test`
/// builds before the tests. This file is shared (a symlink) by the example
/// packages' tests, so it finds the repository root from wherever it is compiled.
enum BuildFolder {
    /// The repository root: the nearest folder above this file with Sources/EventBusBroker.
    static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Sources/EventBusBroker").path) { return folder }
            folder.deleteLastPathComponent()
        }
        fatalError("no Sources/EventBusBroker above \(#filePath)")
    }()

    /// The folder of `eventbus` and the built-in plugins: EVENTBUS_BIN's, or the root's debug build.
    static var bus: String {
        if let path = ProcessInfo.processInfo.environment["EVENTBUS_BIN"] {
            return URL(fileURLWithPath: path).deletingLastPathComponent().path
        }
        return root.appendingPathComponent(".build/debug").path
    }

    /// The build folder of the example package examples/`package` (plugins, chat-backend,
    /// gateway): EVENTBUS_EXAMPLE_<PACKAGE>_BIN (e.g. EVENTBUS_EXAMPLE_CHAT_BACKEND_BIN),
    /// or its debug build.
    static func example(_ package: String) -> String {
        let variable = "EVENTBUS_EXAMPLE_\(package.uppercased().replacingOccurrences(of: "-", with: "_"))_BIN"
        if let path = ProcessInfo.processInfo.environment[variable] { return path }
        return root.appendingPathComponent("examples/\(package)/.build/debug").path
    }
}
