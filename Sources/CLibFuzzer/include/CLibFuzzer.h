#ifndef EVENTBUS_CLIBFUZZER_H
#define EVENTBUS_CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// The callback libFuzzer calls with each input.
typedef int (*eventbus_fuzz_callback)(const uint8_t *data, size_t size);

/// Whether this binary was built with libFuzzer (`make fuzz` defines EVENTBUS_LIBFUZZER).
int eventbus_libfuzzer_available(void);

/// Runs libFuzzer's driver with the command line and `callback`; -1 when libFuzzer is not linked in.
int eventbus_libfuzzer_run(int *argc, char ***argv, eventbus_fuzz_callback callback);

#endif
