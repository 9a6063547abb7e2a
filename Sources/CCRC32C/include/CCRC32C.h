#ifndef EVENTBUS_CCRC32C_H
#define EVENTBUS_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has a CRC-32C instruction (x86-64 SSE4.2, or ARMv8 CRC).
int eventbus_crc32c_hardware_available(void);

/// Continues the raw CRC-32C register `crc` (already inverted by the caller) over `length` bytes,
/// with the CPU's CRC-32C instruction. Call only when eventbus_crc32c_hardware_available() is 1.
uint32_t eventbus_crc32c_hardware(uint32_t crc, const void *data, size_t length);

#endif
