import CZeroMQ

/// The ZeroMQ socket patterns this project uses.
public enum SocketType: Sendable, CaseIterable {
    case pair, pub, sub, req, rep, dealer, router, pull, push, xpub, xsub

    var raw: Int32 {
        switch self {
        case .pair: ZMQ_PAIR
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .pull: ZMQ_PULL
        case .push: ZMQ_PUSH
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        }
    }
}
