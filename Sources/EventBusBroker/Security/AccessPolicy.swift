import EventBus

/// What each ``Role`` may do on a broker with a given pipeline (docs/security.md).
///
/// | verb | backend | plugin:NAME | subscriber | admin |
/// |---|---|---|---|---|
/// | PING, HELLO | yes | yes (may declare services) | yes | yes (may declare services) |
/// | PUB | `in` | its output stage and `diag` | no | any stage |
/// | CONSUME | no | its input stage | `out`, `diag` | any stage |
/// | ACK, CANCEL | no | yes | yes | yes |
/// | consumer names | — | `NAME`, `NAME.…` | the client's name, `CLIENT.…` | any |
/// | REQ | yes | no | no | yes |
/// | STATS | no | no | no | yes |
/// | stream | no | no | `out`, `diag` | every prefix |
struct AccessPolicy: Sendable {
    /// The plugin stages, in order.
    let pipeline: [String]

    /// The stages `role` may PUB to; `nil` for every stage.
    func publishStages(_ role: Role) -> Set<String>? {
        switch role {
        case .admin: return nil
        case .backend: return [Stage.in]
        case .subscriber: return []
        case .plugin(let name):
            guard let index = pipeline.firstIndex(of: name) else { return [] }
            return [index == pipeline.count - 1 ? Stage.out : name, Stage.diag]
        }
    }

    /// The stages `role` may CONSUME; `nil` for every stage.
    func consumeStages(_ role: Role) -> Set<String>? {
        switch role {
        case .admin: return nil
        case .backend: return []
        case .subscriber: return [Stage.out, Stage.diag]
        case .plugin(let name):
            guard let index = pipeline.firstIndex(of: name) else { return [] }
            return [index == 0 ? Stage.in : pipeline[index - 1]]
        }
    }

    /// The stages whose events `role` may receive on the stream; `nil` for every prefix.
    func streamStages(_ role: Role) -> Set<String>? {
        switch role {
        case .admin: return nil
        case .subscriber: return [Stage.out, Stage.diag]
        case .backend, .plugin: return []
        }
    }

    /// Whether `role` may use `verb` at all (arguments are checked apart).
    func allows(_ verb: Verb, _ role: Role) -> Bool {
        switch verb {
        case .ping, .hello: return true
        case .pub, .pubs: return publishStages(role).map { !$0.isEmpty } ?? true
        case .consume, .ack, .cancel: return consumeStages(role).map { !$0.isEmpty } ?? true
        case .req: return role == .backend || role == .admin
        case .stats: return role == .admin
        case .ok, .err, .evt, .evts, .end: return true  // not requests; parse refuses them
        }
    }

    /// Whether `role`, held by the client named `client`, may name the durable consumer `name`
    /// (CONSUME, ACK, CANCEL).
    ///
    /// Names belong to principals, not to whoever says them first: `plugin:NAME` owns `NAME`
    /// and `NAME.…`; any other role owns the client's own name and `CLIENT.…`, except names
    /// of a pipeline plugin's namespace; `admin` may name (and take over) every consumer.
    func mayName(consumer name: String, _ role: Role, client: String?) -> Bool {
        switch role {
        case .admin:
            return true
        case .plugin(let plugin):
            return Self.isNamed(name, under: plugin)
        case .backend, .subscriber:
            guard let client, Self.isNamed(name, under: client) else { return false }
            return !pipeline.contains { Self.isNamed(name, under: $0) }
        }
    }

    /// The consumer names `roles` of client `client` may use, in words (for a refusal).
    func namespaces(_ roles: [Role], client: String?) -> String {
        var owners: [String] = []
        for role in roles {
            switch role {
            case .admin: return "any name (admin)"
            case .plugin(let plugin): owners.append(plugin)
            case .backend, .subscriber: if let client, !pipeline.contains(client) { owners.append(client) }
            }
        }
        guard !owners.isEmpty else { return "none" }
        return Array(Set(owners)).sorted().map { "\($0) or \($0).*" }.joined(separator: ", ")
    }

    /// `name` is `owner` or `owner.` followed by more.
    static func isNamed(_ name: String, under owner: String) -> Bool {
        name == owner || (name.hasPrefix(owner) && name.utf8.dropFirst(owner.utf8.count).first == UInt8(ascii: "."))
    }

    /// Whether `role` may declare the services it answers in HELLO.
    func mayDeclareServices(_ role: Role) -> Bool {
        switch role {
        case .admin, .plugin: true
        case .backend, .subscriber: false
        }
    }
}
