// CRC-32C with the CPU's own instruction: eight bytes per instruction instead of
// eight table look-ups. The Swift side (EventBus.CRC32C) falls back to its
// slicing-by-8 tables when the CPU has no such instruction.
#include "CCRC32C.h"
#include <string.h>

#if defined(__x86_64__)

int eventbus_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

__attribute__((target("sse4.2")))
uint32_t eventbus_crc32c_hardware(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    uint64_t c = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p++;
        length--;
    }
    return c32;
}

#elif defined(__aarch64__) && defined(__linux__)

#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

int eventbus_crc32c_hardware_available(void) {
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0;
}

__attribute__((target("crc")))
uint32_t eventbus_crc32c_hardware(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __builtin_arm_crc32cd(crc, word);
        p += 8;
        length -= 8;
    }
    while (length > 0) {
        crc = __builtin_arm_crc32cb(crc, *p);
        p++;
        length--;
    }
    return crc;
}

#else

int eventbus_crc32c_hardware_available(void) { return 0; }

uint32_t eventbus_crc32c_hardware(uint32_t crc, const void *data, size_t length) {
    (void)data;
    (void)length;
    return crc;
}

#endif
