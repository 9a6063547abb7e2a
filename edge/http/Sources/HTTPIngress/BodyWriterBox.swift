import Hummingbird

/// A response's body writer, handed from the body closure to the one task of a stream that
/// writes (``StreamSession``), so that the stream can cancel a write that a client that
/// reads nothing keeps waiting. Only that task touches it while it runs; the closure takes
/// it back once the task has ended.
final class BodyWriterBox: @unchecked Sendable {
    var writer: any ResponseBodyWriter

    init(_ writer: any ResponseBodyWriter) {
        self.writer = writer
    }
}
