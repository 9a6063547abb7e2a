import Logging
import ZeroMQ

/// The broker's sockets and poll loop around its ``BrokerCore``: the ROUTER
/// for commands, the XPUB for the stream, the ZAP handler when keys are
/// configured, and the fsync thread's wake-up. Owned by one thread: the one in
/// ``run(until:)``.
///
/// All it decides is when: it reads what the sockets hold and hands it to the
/// core, then lets the core commit, feed its consumers and run its timers.
/// Everything the core sends goes out through the ``SocketOutput`` it was given.
final class BrokerLoop {
    let core: BrokerCore
    private let context: Context
    private let router: Socket
    private let stream: Socket
    /// Authenticates CURVE peers; `nil` when no keys are configured.
    private let zap: ZAPHandler?
    private let logger: Logger
    private var zapTicked: UInt64 = 0

    /// Binds both sockets (CURVE and ZAP first, when keys are configured),
    /// then opens the log through the core.
    init(config: BrokerConfig, logger: Logger) throws {
        self.logger = logger
        context = try Context(ioThreads: 1)
        router = try Socket(context: context, type: .router)
        stream = try Socket(context: context, type: .xpub)
        var zap: ZAPHandler?
        do {
            try router.setRouterMandatory(true)
            try router.setSendHighWaterMark(config.peerHighWaterMark)
            try router.setReceiveHighWaterMark(config.peerHighWaterMark)
            try router.setMaxMessageSize(config.maxFrameBytes)
            try router.setLinger(0)
            try stream.setSendHighWaterMark(config.streamHighWaterMark)
            try stream.setXPubNoDrop(true)  // so that a full subscriber is seen: see publishToStream
            try stream.setLinger(0)
            try BindPolicy.check(config.commandEndpoint, option: "--command", config: config)
            try BindPolicy.check(config.streamEndpoint, option: "--stream", config: config)
            try BindPolicy.refuseIPCInUse(config.commandEndpoint, option: "--command")
            try BindPolicy.refuseIPCInUse(config.streamEndpoint, option: "--stream")
            if let keys = config.security {
                try keys.validate()
                // The ZAP handler must be bound before a CURVE socket accepts a peer.
                zap = try ZAPHandler(context: context, clients: keys.clients, logger: logger)
                for socket in [router, stream] {
                    try socket.makeCurveServer(secretKey: keys.secretKey)
                    try socket.setZAPDomain("eventbus")
                }
                try stream.setXPubManual(true)
            }
            try router.bind(BindPolicy.bindable(config.commandEndpoint))
            try stream.bind(BindPolicy.bindable(config.streamEndpoint))
            try BindPolicy.restrictIPC(try router.lastEndpoint, mode: config.ipcFileMode)
            try BindPolicy.restrictIPC(try stream.lastEndpoint, mode: config.ipcFileMode)
            core = try BrokerCore(config: config, logger: logger, output: SocketOutput(router: router, stream: stream))
        } catch {
            router.close()
            stream.close()
            zap?.socket.close()
            throw error
        }
        self.zap = zap
    }

    /// The endpoint the command socket is bound to, with the real port.
    var commandEndpoint: String { (try? router.lastEndpoint) ?? core.config.commandEndpoint }
    /// The endpoint the stream socket is bound to, with the real port.
    var streamEndpoint: String { (try? stream.lastEndpoint) ?? core.config.streamEndpoint }

    /// Serves until `stopped` returns true or a failed fsync stops the core,
    /// then lets the core commit, save offsets and close, and closes the sockets.
    func run(until stopped: () -> Bool) {
        var poller = Poller()
        poller.add(router)
        poller.add(stream)
        let syncIndex = core.syncWorker.map { worker in
            poller.add(fileDescriptor: worker.wakeup.fileDescriptor)
            return 2
        }
        let zapIndex = zap.map { zap in
            poller.add(zap.socket)
            return syncIndex == nil ? 2 : 3
        }
        while !stopped() && core.fatal == nil {
            do {
                let timeout = min(core.consumersBlocked ? 1 : 20, core.commitDelayMilliseconds ?? 20)
                let ready = try poller.poll(timeoutMilliseconds: timeout)
                if let zapIndex, ready[zapIndex].contains(.readable) { zap?.drain() }
                if let syncIndex, ready[syncIndex].contains(.readable) { core.finishCommits() }
                if ready[1].contains(.readable) { drainSubscriptions() }
                if ready[0].contains(.readable) { drainCommands() }
            } catch {
                if error.contextTerminated { break }
                logger.error("poll failed", metadata: ["error.type": "\(error)"])
            }
            core.advanceCommit()
            core.pumpConsumers()
            core.runTimers()
            tickZAP()
        }
        core.close()
        router.close()
        stream.close()
        zap?.socket.close()
        logger.info("broker stopped", metadata: ["bus.head_seq": "\(core.log.headSeq)"])
    }

    private func drainCommands() {
        for _ in 0..<20_000 {
            let received: (frames: [[UInt8]], userID: String?)?
            do {
                if zap != nil {
                    received = try router.receiveWithUserID(dontWait: true)
                } else {
                    received = try router.receive(dontWait: true).map { ($0, nil) }
                }
            } catch {
                logger.error("receive failed", metadata: ["error.type": "\(error)"])
                return
            }
            guard let received else { return }
            core.handle(received.frames, userID: received.userID)
        }
    }

    private func drainSubscriptions() {
        // XPUB passes subscriptions up as messages; they must be read so they do
        // not queue. The first byte is 1 (subscribe) or 0 (unsubscribe).
        while let (message, userID) = try? stream.receiveWithUserID(dontWait: true) {
            guard let frame = message.first else { continue }
            core.subscriptionChanged(frame, userID: userID)
        }
    }

    /// The ZAP handler's refusal log, once a second.
    private func tickZAP() {
        guard let zap else { return }
        let now = Clock.monotonicMilliseconds()
        guard now - zapTicked >= 1_000 else { return }
        zapTicked = now
        zap.tick()
    }
}
