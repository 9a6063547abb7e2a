import EventBusBroker
import Foundation
import Yams

/// What `eventbus up` runs: the broker's configuration and the pipeline.
///
/// A YAML file (`--config FILE`) may set any of these; command-line options win:
///
/// ```yaml
/// data_dir: .eventbus
/// command: tcp://127.0.0.1:7750
/// stream: tcp://127.0.0.1:7751
/// fsync: always            # always | periodic | off
/// security: security.yaml  # CURVE keys and client roles (docs/security.md)
/// allow_insecure_bind: false
/// allow_shared_data_dir: false  # true: accept a data_dir group or others may read
/// pipeline:
///   - receipt-reducer      # a built-in plugin, by name
///   - name: my-filter      # a plugin started with a command of its own
///     command: ["python3", "examples/python-plugin/plugin.py"]
///   - name: audit          # a plugin that connects by itself
///     external: true
/// ```
public struct SupervisorConfig: Sendable {
    /// The broker's settings; `pipeline` there is filled from ``pipeline``.
    public var broker: BrokerConfig
    /// The stages and how to start their plugins.
    public var pipeline: Pipeline
    /// Restart backoff: first wait, doubling up to ``maximumBackoff``.
    public var initialBackoff: Duration = .milliseconds(200)
    /// The longest wait between restarts of a plugin that keeps failing.
    public var maximumBackoff: Duration = .seconds(10)
    /// Exits in a row, each sooner than ``stableAfter`` after its start, that make a crash loop.
    public var crashLoopLimit = 5
    /// A plugin that ran this long before exiting is not crash looping.
    public var stableAfter: Duration = .seconds(10)
    /// The wait between restarts of a crash-looping plugin.
    public var crashLoopBackoff: Duration = .seconds(30)
    /// How long a plugin gets to stop after SIGTERM before SIGKILL.
    public var stopTimeout: Duration = .seconds(10)
    /// The HTTP ingress to run beside the plugins (`eventbus up --http`), if any.
    public var http: HTTPIngressLaunch?

    public init(broker: BrokerConfig, pipeline: Pipeline) {
        self.broker = broker
        self.pipeline = pipeline
    }

    /// Reads the YAML config file at `path` over `base` (defaults), resolving plugin names in `pluginDirectory`.
    public static func load(path: String, base: BrokerConfig, pluginDirectory: String) throws(PipelineError) -> (BrokerConfig, Pipeline?) {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw PipelineError(.configFile, "cannot read config file \(path): \(error.localizedDescription)")
        }
        let node: Any?
        do { node = try Yams.load(yaml: text) } catch {
            throw PipelineError(.configFile, "config file \(path) is not valid YAML: \(error)")
        }
        guard let root = node as? [String: Any] else {
            throw PipelineError(.configFile, "config file \(path): the top level must be a mapping")
        }
        let known: Set<String> = ["data_dir", "command", "stream", "fsync", "pipeline", "security", "allow_insecure_bind", "allow_shared_data_dir"]
        if let unknown = root.keys.first(where: { !known.contains($0) }) {
            throw PipelineError(.configFile, "config file \(path): unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        var broker = base
        if let value = root["data_dir"] { broker.dataDirectory = try string(value, "data_dir", path) }
        if let value = root["command"] { broker.commandEndpoint = try string(value, "command", path) }
        if let value = root["stream"] { broker.streamEndpoint = try string(value, "stream", path) }
        if let value = root["fsync"] {
            let text = try string(value, "fsync", path)
            guard let policy = FsyncPolicy(rawValue: text) else {
                throw PipelineError(.configFile, "config file \(path): fsync must be always, periodic or off")
            }
            broker.fsync = policy
        }
        if let value = root["security"] {
            let file = try string(value, "security", path)
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            let resolved = file.hasPrefix("/") ? file : folder.appendingPathComponent(file).path
            broker.security = try SecurityConfigFile.load(path: resolved)
            broker.securityFile = resolved
        }
        if let value = root["allow_insecure_bind"] {
            guard let allow = value as? Bool else { throw PipelineError(.configFile, "config file \(path): allow_insecure_bind must be true or false") }
            broker.allowInsecureBind = allow
        }
        if let value = root["allow_shared_data_dir"] {
            guard let allow = value as? Bool else { throw PipelineError(.configFile, "config file \(path): allow_shared_data_dir must be true or false") }
            broker.allowSharedDataDirectory = allow
        }
        guard let list = root["pipeline"] else { return (broker, nil) }
        guard let entries = list as? [Any] else {
            throw PipelineError(.configFile, "config file \(path): pipeline must be a list of stages")
        }
        var stages: [PipelineStage] = []
        for (index, entry) in entries.enumerated() {
            let field = "pipeline[\(index)]"
            if let name = entry as? String {
                stages.append(PipelineStage(name: name, launch: .process(executable: try Pipeline.builtin(name, in: pluginDirectory), arguments: [])))
                continue
            }
            guard let map = entry as? [String: Any], let name = map["name"] as? String else {
                throw PipelineError(.configFile, "config file \(path): \(field) must be a name or a mapping with a name")
            }
            let allowed: Set<String> = ["name", "command", "args", "external"]
            if let unknown = map.keys.first(where: { !allowed.contains($0) }) {
                throw PipelineError(.configFile, "config file \(path): \(field) has an unknown key \"\(unknown)\"")
            }
            let arguments = try strings(map["args"] ?? [String](), "\(field).args", path)
            if map["external"] as? Bool == true {
                stages.append(PipelineStage(name: name, launch: .external))
            } else if let command = map["command"] {
                let words = try strings(command, "\(field).command", path)
                guard let executable = words.first else { throw PipelineError(.configFile, "config file \(path): \(field).command is empty") }
                stages.append(PipelineStage(name: name, launch: .process(executable: executable, arguments: Array(words.dropFirst()) + arguments)))
            } else {
                stages.append(PipelineStage(name: name, launch: .process(executable: try Pipeline.builtin(name, in: pluginDirectory), arguments: arguments)))
            }
        }
        return (broker, try Pipeline(stages: stages))
    }

    private static func string(_ value: Any, _ key: String, _ path: String) throws(PipelineError) -> String {
        guard let text = value as? String else { throw PipelineError(.configFile, "config file \(path): \(key) must be a string") }
        return text
    }

    private static func strings(_ value: Any, _ key: String, _ path: String) throws(PipelineError) -> [String] {
        guard let list = value as? [Any], list.allSatisfy({ $0 is String }) else {
            throw PipelineError(.configFile, "config file \(path): \(key) must be a list of strings")
        }
        return list.compactMap { $0 as? String }
    }
}
