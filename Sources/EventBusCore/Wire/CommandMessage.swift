/// One request from the command socket, split into its parts: shared by the broker and
/// the JetStream gateway, which speak the same EB1 front.
///
/// Frame numbers in error messages count as the client sends them: frame 0 is
/// the signature, frame 1 the verb, frame 2 CORR, frame 3 the first argument.
package struct CommandMessage {
    /// The ROUTER routing id of the peer that sent it.
    package let peer: [UInt8]
    package let verb: Verb
    package let correlation: [UInt8]
    package let arguments: ArraySlice<[UInt8]>

    /// A `PUBS` as the `PUB` it stands for: STAGE, then each event of its BATCH as an EVENT frame.
    /// Any other message as it is.
    ///
    /// - Throws: `bad_frame` for a missing STAGE or BATCH, a frame after BATCH or a malformed
    ///   BATCH; `too_large` for more events than one batch may hold.
    package func unbatched() throws(BusError) -> CommandMessage {
        guard verb == .pubs else { return self }
        guard arguments.count == 2 else {
            throw BusError(.badFrame, "PUBS: STAGE (frame 3) and one BATCH (frame 4), then nothing (got \(arguments.count) argument frames)")
        }
        let stage = arguments[arguments.startIndex]
        let frames = try PublishBatch.split(arguments[arguments.startIndex + 1], limit: WireProtocol.maxBatchEvents,
                                            after: [stage])
        return CommandMessage(peer: peer, verb: .pub, correlation: correlation, arguments: frames[...])
    }

    /// The verbs a peer may send, the commonest first.
    /// Argument `position` (frame 3 + `position`), or `bad_frame` naming the missing frame.
    package func argument(_ position: Int, _ name: String) throws(BusError) -> [UInt8] {
        let index = arguments.startIndex + position
        guard index < arguments.endIndex else {
            throw BusError(.badFrame, "\(verb.rawValue): frame \(3 + position) (\(name)) is missing")
        }
        return arguments[index]
    }

    package static let requestVerbs: [Verb] = [.pub, .pubs, .ack, .ping, .consume, .req, .hello, .cancel, .stats]

    /// Splits `frames` (routing id first, as the ROUTER delivers them).
    ///
    /// - Throws: A fault carrying the CORR to answer with (empty when the
    ///   message is too broken to have one).
    package static func parse(_ frames: [[UInt8]]) throws(CommandFault) -> CommandMessage {
        guard let peer = frames.first else {
            throw CommandFault(correlation: [], BusError(.badFrame, "empty message"))
        }
        let correlation = frames.count > 3 && frames[3].count <= WireProtocol.maxCorrelationBytes ? frames[3] : []
        guard frames.count > 1, frames[1] == WireProtocol.signature else {
            throw CommandFault(peer: peer, correlation: correlation,
                               BusError(.badFrame, "frame 0: the signature must be \"EB1\""))
        }
        guard frames.count >= 4 else {
            throw CommandFault(peer: peer, correlation: correlation,
                               BusError(.badFrame, "missing frames: a command is \"EB1\", VERB, CORR and its arguments (got \(frames.count - 1) frames)"))
        }
        guard frames[3].count <= WireProtocol.maxCorrelationBytes else {
            throw CommandFault(peer: peer, correlation: [],
                               BusError(.badFrame, "frame 2: CORR is \(frames[3].count) bytes, at most \(WireProtocol.maxCorrelationBytes)"))
        }
        // Compared as bytes: this is on every command's path.
        guard let verb = requestVerbs.first(where: { $0.bytes == frames[2] }) else {
            let shown = String(decoding: frames[2].prefix(32), as: UTF8.self)
            throw CommandFault(peer: peer, correlation: correlation,
                               BusError(.badVerb, "frame 1: unknown verb \"\(shown)\""))
        }
        return CommandMessage(peer: peer, verb: verb, correlation: correlation, arguments: frames[4...])
    }
}

/// A request refused before or while it was handled: what to answer, and to whom.
package struct CommandFault: Error {
    package var peer: [UInt8]
    package var correlation: [UInt8]
    package var error: BusError

    package init(peer: [UInt8] = [], correlation: [UInt8], _ error: BusError) {
        self.peer = peer
        self.correlation = correlation
        self.error = error
    }
}
