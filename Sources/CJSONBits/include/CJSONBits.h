#ifndef EVENTBUS_CJSONBITS_H
#define EVENTBUS_CJSONBITS_H

#include <stddef.h>
#include <stdint.h>

/// Marks where the quotes (`"`) of `bytes` are: bit `i % 64` of `bits[i / 64]` is set when
/// `bytes[i]` is a quote. `bits` must hold `(count + 63) / 64` words.
///
/// Returns 1 when every byte is plain: printable ASCII or DEL (0x20 to 0x7F) and not a
/// backslash. Then a JSON string's end is simply its next quote. Returns 0 otherwise, and
/// the bits are then not to be used.
///
/// Sixteen bytes per step with SSE2 on x86-64; a byte at a time elsewhere.
int eventbus_json_quote_bits(const uint8_t *bytes, size_t count, uint64_t *bits);

#endif
