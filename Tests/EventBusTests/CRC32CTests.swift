import Testing

@testable import EventBus
@testable import EventBusCore

@Suite("CRC32C")
struct CRC32CTests {
    @Test func checkValueOfDigitsIsE3069283() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test func thirtyTwoZeroBytesGive8A9136AA() {
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    }

    @Test func thirtyTwoOnesGive62A8AB43() {
        // RFC 3720 (iSCSI) test vector.
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    }

    @Test func emptyInputGivesZero() {
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test(arguments: [0, 1, 7, 8, 9, 100, 1_000])
    func checksumsChainAcrossSplits(split: Int) {
        let bytes = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let whole = CRC32C.checksum(bytes)
        let first = CRC32C.checksum(Array(bytes[..<split]))
        #expect(CRC32C.checksum(Array(bytes[split...]), seed: first) == whole)
    }

    @Test func theCPUInstructionAndTheTablesAgreeOnEveryLengthAndSeed() {
        let bytes = (0..<4_099).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 3) }
        for length in [0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 300, 4_099] {
            for seed: UInt32 in [0, 1, 0xE306_9283] {
                let prefix = Array(bytes[..<length])
                let table = prefix.withUnsafeBytes { CRC32C.software($0, seed: seed) }
                #expect(CRC32C.checksum(prefix, seed: seed) == table, "length \(length), seed \(seed)")
            }
        }
    }

    @Test func thisMachineUsesTheInstruction() {
        // The CI machines are x86-64 with SSE4.2; elsewhere the tables serve.
        #if arch(x86_64)
        #expect(CRC32C.usesHardware)
        #endif
    }
}
