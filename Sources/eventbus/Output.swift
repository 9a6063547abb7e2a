import ArgumentParser
import EventBus
import Glibc

/// The CLI's output: results to stdout, errors and progress to stderr.
enum Output {
    /// Writes `text` and a newline to stdout, flushed (so that `tail` can be piped).
    static func line(_ text: String) {
        bytes(Array(text.utf8) + [0x0A])
    }

    /// Writes raw bytes to stdout, flushed.
    static func bytes(_ bytes: [UInt8]) {
        write(to: STDOUT_FILENO, bytes)
    }

    /// Writes `text` to stderr as it is (no newline added).
    static func stderr(_ text: String) {
        write(to: STDERR_FILENO, Array(text.utf8))
    }

    /// Writes all of `bytes` to `fd`, unbuffered (so output is never lost in a buffer at exit).
    private static func write(to fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                // Safe: `buffer` is not empty here, so it has a base address.
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return  // stdout closed (a pipe's reader left): nothing more to do
                }
                offset += n
            }
        }
    }

    /// Prints `error: CODE: MESSAGE` to stderr and returns the exit status 1 to throw.
    ///
    /// - Parameters:
    ///   - error: The error.
    ///   - detail: What was being done, put before the message.
    ///   - commandEndpoint: For a timeout, the endpoint to suggest checking.
    ///   - usesKeys: Whether the client connected with CURVE keys: a broker stays silent to a
    ///     key it does not admit, so a timeout may mean a refused key.
    static func fail(_ error: BusError, detail: String? = nil, commandEndpoint: String? = nil, usesKeys: Bool = false) -> ExitCode {
        var message = error.message
        if let detail { message = "\(detail): \(message)" }
        if error.code == .timeout, let commandEndpoint {
            message += ": the broker did not answer (is one running at \(commandEndpoint)?)"
            if usesKeys {
                message += "; a broker with keys also stays silent to a key it does not admit: check that this client's "
                    + "public key is listed in the broker's security file and that the server key is the broker's public key"
            }
        }
        stderr("error: \(error.code.wire): \(message)\n")
        return .failure
    }

    /// Prints `error: CONTEXT: ERROR` to stderr and returns the exit status its code
    /// calls for (``ExitStatus/of(_:)``) to throw.
    static func fail(_ error: any Error, _ context: String) -> ExitCode {
        stderr("error: \(context): \(error)\n")
        return ExitCode(ExitStatus.of(error))
    }

    /// Prints `error: ERROR` to stderr and returns the exit status its code calls for to throw.
    static func fail(_ error: any Error) -> ExitCode {
        stderr("error: \(error)\n")
        return ExitCode(ExitStatus.of(error))
    }

    /// Prints `error: MESSAGE` to stderr and returns the exit status 1 to throw.
    static func fail(_ message: String) -> ExitCode {
        stderr("error: \(message)\n")
        return .failure
    }
}
