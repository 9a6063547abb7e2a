import CCRC32C

/// CRC-32C (Castagnoli), the checksum of every log record.
///
/// With the CPU's CRC-32C instruction where it has one (x86-64 SSE4.2, ARMv8
/// CRC), else a portable slicing-by-8 implementation; both give the same
/// checksums. Checksums chain: `checksum(b, seed: checksum(a))` equals
/// `checksum(a + b)`.
package struct CRC32C: Sendable {
    /// Whether checksums use the CPU's instruction.
    package static let usesHardware = eventbus_crc32c_hardware_available() != 0

    /// Eight 256-entry tables, laid out one after another.
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            table[i] = crc
        }
        for i in 0..<256 {
            var crc = table[i]
            for k in 1..<8 {
                crc = table[Int(crc & 0xFF)] ^ (crc >> 8)
                table[k * 256 + i] = crc
            }
        }
        return table
    }()

    /// Computes the CRC-32C of `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: The bytes to checksum.
    ///   - seed: The checksum of the bytes before these, to continue a running
    ///     checksum; `0` to start a new one.
    /// - Returns: The checksum.
    package static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard usesHardware else { return software(bytes, seed: seed) }
        return ~eventbus_crc32c_hardware(~seed, bytes.baseAddress, bytes.count)
    }

    /// The portable implementation (slicing by 8), whatever the CPU.
    static func software(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        guard var p = bytes.baseAddress else { return seed }
        var n = bytes.count
        table.withUnsafeBufferPointer { t in
            while n >= 8 {
                let lo = p.loadUnaligned(as: UInt32.self).littleEndian ^ crc
                let hi = p.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
                crc = t[7 * 256 + Int(lo & 0xFF)]
                    ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)]
                    ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)]
                    ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)]
                    ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                p += 1
                n -= 1
            }
        }
        return ~crc
    }

    /// Computes the CRC-32C of `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: The bytes to checksum.
    ///   - seed: The checksum of the bytes before these, or `0`.
    /// - Returns: The checksum.
    package static func checksum(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, seed: seed) }
    }
}
