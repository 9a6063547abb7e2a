// The quotes of a JSON text as a bitmap, and whether any byte needs a closer look (a
// backslash, a control byte or one of a multi-byte UTF-8 sequence). With none, the
// JSON scanner ends each string at its next quote instead of checking it byte by byte.
#include "CJSONBits.h"
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>

/// The quote mask of 64 bytes at `p`; `*odd` collects every byte that is not plain.
static inline uint64_t block(const uint8_t *p, __m128i *odd) {
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    // Signed: a byte of 0x80 or more is negative, so one compare finds it and the controls.
    const __m128i space = _mm_set1_epi8(0x20);
    uint64_t mask = 0;
    for (int part = 0; part < 4; part++) {
        __m128i chunk = _mm_loadu_si128((const __m128i *)(p + 16 * part));
        mask |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, quote)) << (16 * part);
        *odd = _mm_or_si128(*odd, _mm_or_si128(_mm_cmpeq_epi8(chunk, backslash), _mm_cmplt_epi8(chunk, space)));
    }
    return mask;
}

int eventbus_json_quote_bits(const uint8_t *bytes, size_t count, uint64_t *bits) {
    __m128i odd = _mm_setzero_si128();
    size_t offset = 0, word = 0;
    for (; offset + 64 <= count; offset += 64) bits[word++] = block(bytes + offset, &odd);
    if (offset < count) {
        // The tail, padded with spaces (plain, not quotes).
        uint8_t tail[64];
        memset(tail, ' ', sizeof tail);
        memcpy(tail, bytes + offset, count - offset);
        bits[word] = block(tail, &odd);
    }
    return _mm_movemask_epi8(odd) == 0;
}

#else

int eventbus_json_quote_bits(const uint8_t *bytes, size_t count, uint64_t *bits) {
    int plain = 1;
    for (size_t word = 0; word < (count + 63) / 64; word++) bits[word] = 0;
    for (size_t offset = 0; offset < count; offset++) {
        uint8_t byte = bytes[offset];
        if (byte == '"') bits[offset / 64] |= (uint64_t)1 << (offset % 64);
        if (byte == '\\' || byte < 0x20 || byte >= 0x80) plain = 0;
    }
    return plain;
}

#endif
