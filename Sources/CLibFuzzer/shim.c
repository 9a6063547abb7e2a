#include "CLibFuzzer.h"

#ifdef EVENTBUS_LIBFUZZER
// From libclang_rt.fuzzer, linked in by `-sanitize=fuzzer` (LLVM 11 and later).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

int eventbus_libfuzzer_available(void) { return 1; }

int eventbus_libfuzzer_run(int *argc, char ***argv, eventbus_fuzz_callback callback) {
    return LLVMFuzzerRunDriver(argc, argv, callback);
}
#else
int eventbus_libfuzzer_available(void) { return 0; }

int eventbus_libfuzzer_run(int *argc, char ***argv, eventbus_fuzz_callback callback) {
    (void)argc;
    (void)argv;
    (void)callback;
    return -1;
}
#endif
