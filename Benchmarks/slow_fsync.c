/* An LD_PRELOAD shim that makes the disk look slower at durability points:
 * every fdatasync and fsync first sleeps EVENTBUS_FSYNC_DELAY_US microseconds,
 * then calls the real function, so the data is really synced and the call
 * simply takes longer, as it would on a slower device. Without the variable,
 * or with 0, the calls go straight through.
 *
 *   gcc -shared -fPIC -O2 -Wall -o slow_fsync.so slow_fsync.c -ldl
 *   LD_PRELOAD=$PWD/slow_fsync.so EVENTBUS_FSYNC_DELAY_US=2000 eventbus broker ...
 *
 * `FSYNC_DELAY_US=2000 Benchmarks/run.sh` builds it and runs the broker, the
 * processes of `eventbus up` and redis-server under it (docs/performance.md).
 * The bus syncs with fdatasync (the log) and fsync (directories, offsets,
 * snapshots, key files); it does not use sync_file_range, nor does Redis on
 * its appendfsync path (fdatasync on Linux), so only these two are wrapped.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long delay_us;
static int (*real_fdatasync)(int);
static int (*real_fsync)(int);

__attribute__((constructor)) static void slow_fsync_init(void) {
    const char *text = getenv("EVENTBUS_FSYNC_DELAY_US");
    if (text != NULL) {
        char *end;
        long value = strtol(text, &end, 10);
        if (end != text && *end == '\0' && value > 0) delay_us = value;
    }
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
}

/* Sleeps the whole delay even when a signal interrupts it; keeps errno. */
static void slow_down(void) {
    if (delay_us <= 0) return;
    int saved = errno;
    struct timespec left = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
    errno = saved;
}

int fdatasync(int fd) {
    if (real_fdatasync == NULL) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    slow_down();
    return real_fdatasync(fd);
}

int fsync(int fd) {
    if (real_fsync == NULL) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    slow_down();
    return real_fsync(fd);
}
