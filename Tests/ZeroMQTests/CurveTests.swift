import CZeroMQ
import Foundation
import Testing
@testable import ZeroMQ

/// CURVE, ZAP and the `User-Id` metadata, on libzmq itself (inproc ZAP, tcp loopback peers).
@Suite struct CurveTests {
    let context: Context
    init() throws { context = try Context() }

    /// A minimal ZAP handler: admits `admitted` (binary key → user id), refuses the rest.
    func answerZAP(_ zap: Socket, admitted: [[UInt8]: String]) throws {
        let request = try #require(try zap.receive())
        #expect(request[0] == Array("1.0".utf8))
        #expect(String(decoding: request[5], as: UTF8.self) == "CURVE")
        if let user = admitted[request[6]] {
            try zap.send([request[0], request[1], Array("200".utf8), Array("OK".utf8), Array(user.utf8), []])
        } else {
            try zap.send([request[0], request[1], Array("400".utf8), Array("no".utf8), [], []])
        }
    }

    @Test func keyPairsAreZ85AndThePublicKeyFollowsFromTheSecret() throws {
        #expect(CurveKeyPair.isSupported)
        let a = try CurveKeyPair.generate(), b = try CurveKeyPair.generate()
        #expect(a != b)
        #expect(a.publicKey.utf8.count == 40 && a.secretKey.utf8.count == 40)
        #expect(CurveKeyPair.isValidKey(a.publicKey) && CurveKeyPair.isValidKey(a.secretKey))
        #expect(try CurveKeyPair(secretKey: a.secretKey) == a)
        #expect(CurveKeyPair.binaryKey(a.publicKey)?.count == 32)
        #expect(!CurveKeyPair.isValidKey("short"))
        #expect(!CurveKeyPair.isValidKey(String(repeating: "\"", count: 40)))
        #expect(throws: ZMQError.self) { try CurveKeyPair(secretKey: "not a key") }
    }

    @Test func keyFilesRoundTripAndSecretFilesMustBePrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curve-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pair = try CurveKeyPair.generate()
        let secret = directory.appendingPathComponent("k.secret").path
        try CurveKeyFile.write(pair.secretKey, comment: "test", to: secret, mode: 0o600)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: secret)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try CurveKeyFile.read(secret, secret: true) == pair.secretKey)
        chmod(secret, 0o644)
        #expect(throws: CurveKeyFileError.self) { try CurveKeyFile.read(secret, secret: true) }
        #expect(try CurveKeyFile.read(secret, secret: false) == pair.secretKey)
    }

    @Test func zapAdmitsListedKeysAndEveryMessageCarriesTheUserID() throws {
        let server = try CurveKeyPair.generate(), client = try CurveKeyPair.generate()
        let zap = try Socket(context: context, type: .rep)
        try zap.bind("inproc://zeromq.zap.01")
        try zap.setReceiveTimeout(5_000)
        let router = try Socket(context: context, type: .router)
        try router.makeCurveServer(secretKey: server.secretKey)
        try router.setZAPDomain("test")
        try router.setReceiveTimeout(5_000)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setLinger(0)
        try dealer.makeCurveClient(keys: client, serverKey: server.publicKey)
        try dealer.connect(try router.lastEndpoint)
        try answerZAP(zap, admitted: [try #require(CurveKeyPair.binaryKey(client.publicKey)): "alice"])
        try dealer.send([Array("hello".utf8), Array("world".utf8)])
        let received = try #require(try router.receiveWithUserID())
        #expect(received.frames.dropFirst().map { $0 } == [Array("hello".utf8), Array("world".utf8)])
        #expect(received.userID == "alice")
        #expect(try router.usesCurve)
    }

    @Test func zapRefusesAnUnknownKeyAndNothingArrives() throws {
        let server = try CurveKeyPair.generate(), stranger = try CurveKeyPair.generate()
        let zap = try Socket(context: context, type: .rep)
        try zap.bind("inproc://zeromq.zap.01")
        try zap.setReceiveTimeout(5_000)
        let router = try Socket(context: context, type: .router)
        try router.makeCurveServer(secretKey: server.secretKey)
        try router.setReceiveTimeout(500)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setLinger(0)
        try dealer.makeCurveClient(keys: stranger, serverKey: server.publicKey)
        try dealer.connect(try router.lastEndpoint)
        try answerZAP(zap, admitted: [:])
        _ = try dealer.send([Array("let me in".utf8)], dontWait: true)
        #expect(try router.receiveWithUserID() == nil)
    }

    @Test func aClientInTheClearCannotTalkToACurveServer() throws {
        let server = try CurveKeyPair.generate()
        let router = try Socket(context: context, type: .router)
        try router.makeCurveServer(secretKey: server.secretKey)
        try router.setReceiveTimeout(500)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setLinger(0)
        try dealer.connect(try router.lastEndpoint)
        _ = try dealer.send([Array("plain".utf8)], dontWait: true)
        #expect(try router.receiveWithUserID() == nil)
    }

    /// The broker relies on this: with CURVE, a manual XPUB's subscription
    /// messages carry the subscriber's `User-Id`, and a subscription applied
    /// with `subscribe` counts for that subscriber only.
    @Test func manualXPubSubscriptionsCarryTheUserIDAndApplyPerPeer() throws {
        let server = try CurveKeyPair.generate(), alice = try CurveKeyPair.generate(), bob = try CurveKeyPair.generate()
        let names = [try #require(CurveKeyPair.binaryKey(alice.publicKey)): "alice", try #require(CurveKeyPair.binaryKey(bob.publicKey)): "bob"]
        let zap = try Socket(context: context, type: .rep)
        try zap.bind("inproc://zeromq.zap.01")
        try zap.setReceiveTimeout(5_000)
        let xpub = try Socket(context: context, type: .xpub)
        try xpub.makeCurveServer(secretKey: server.secretKey)
        try xpub.setXPubManual(true)
        try xpub.setReceiveTimeout(5_000)
        try xpub.bind("tcp://127.0.0.1:*")
        var subscribers: [String: Socket] = [:]
        for (name, keys) in [("alice", alice), ("bob", bob)] {
            let sub = try Socket(context: context, type: .sub)
            try sub.setLinger(0)
            try sub.setReceiveTimeout(300)
            try sub.makeCurveClient(keys: keys, serverKey: server.publicKey)
            try sub.subscribe(Array("secret/".utf8))
            try sub.connect(try xpub.lastEndpoint)
            try answerZAP(zap, admitted: names)
            let message = try #require(try xpub.receiveWithUserID())
            #expect(message.frames == [[1] + Array("secret/".utf8)])
            #expect(message.userID == name)
            // Only alice's subscription is applied.
            if name == "alice" { try xpub.subscribe(Array("secret/".utf8)) }
            subscribers[name] = sub
        }
        var aliceGot: [[UInt8]]?
        for _ in 0..<20 where aliceGot == nil {
            try xpub.send([Array("secret/x".utf8)])
            aliceGot = try subscribers["alice"]!.receive()
        }
        #expect(aliceGot == [Array("secret/x".utf8)])
        #expect(try subscribers["bob"]!.receive() == nil)
    }
}
