@testable import ChatBackend
import EventBus
import Testing

/// How the backend answers each kind of bus failure (the mapping alone, no I/O).
@Suite struct ChatBackendErrorTests {
    @Test(arguments: [
        (BusError(.badEvent, "event 0: data.user_id: must not start with @"), 422, "data.user_id"),
        (BusError(.unknownType, "event 0: type: message.typing is not an ingress type"), 422, "event"),
        (BusError(.badRequest, "params.page_size: must be 1 to 1000"), 400, "page_size"),
        (BusError(.notFound, "no message m9 in messaging:general"), 404, nil),
        (BusError(.timeout, "no reply within 2 s"), 503, nil),
        (BusError(.busy, "client closed"), 503, nil),
        (BusError(.unknownService, "no service receipts"), 503, nil),
    ] as [(BusError, Int, String?)])
    func aBusErrorBecomesTheStatusThatNamesTheField(_ error: BusError, _ status: Int, _ field: String?) {
        let answer = APIError.bus(error)
        #expect(answer.status.code == status)
        #expect(answer.field == field)
    }
}
