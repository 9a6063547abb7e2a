import CLibFuzzer
import EventBusFuzzing
import Foundation

// The fuzzer of `make fuzz`. Built with `-sanitize=fuzzer,address` and
// EVENTBUS_LIBFUZZER it runs libFuzzer's driver (all libFuzzer options apply,
// e.g. `eventbus-fuzz -max_total_time=300 CORPUS_DIR`); built plainly it runs
// the seeded mutation harness: `eventbus-fuzz [--seconds N] [--seed N] CORPUS_DIR`.
// Either way an input that breaks an invariant of FuzzTarget stops it.

/// libFuzzer's entry point: one input. Whether libFuzzer's own `main` or the
/// driver call below starts the run depends on the linker; both end here.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try FuzzTarget.check(input)
    } catch {
        FileHandle.standardError.write(Data("eventbus-fuzz: \(error)\n".utf8))
        abort()  // libFuzzer saves the input as crash-<sha1>
    }
    return 0
}

if eventbus_libfuzzer_available() != 0 {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(eventbus_libfuzzer_run(&argc, &argv) { data, size in fuzzOneInput(data, size) })
}

var seconds = 60.0
var seed = UInt64(Date().timeIntervalSince1970)
var directories: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--seconds": seconds = Double(arguments.popFirst() ?? "") ?? seconds
    case "--seed": seed = UInt64(arguments.popFirst() ?? "") ?? seed
    default: directories.append(argument)
    }
}
guard !directories.isEmpty else {
    FileHandle.standardError.write(Data("usage: eventbus-fuzz [--seconds N] [--seed N] CORPUS_DIR…\n".utf8))
    exit(2)
}
do {
    let corpus = try directories.flatMap { try FuzzCorpus.load(from: $0) }
    let deadline = Date().addingTimeInterval(seconds)
    let checked = try FuzzHarness(corpus: corpus, seed: seed).run(iterations: .max) { Date() < deadline }
    print("eventbus-fuzz: seeded harness (no libFuzzer in this build), seed \(seed): \(checked) inputs, no invariant broken")
} catch {
    FileHandle.standardError.write(Data("eventbus-fuzz: seed \(seed): \(error)\n".utf8))
    exit(1)
}
