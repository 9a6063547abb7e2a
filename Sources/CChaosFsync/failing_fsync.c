/* An LD_PRELOAD shim for the fault campaign (docs/reliability.md, "The fault
 * campaign"): while the file named by EVENTBUS_CHAOS_FSYNC_FAIL exists, every
 * fdatasync and fsync fails with EIO and syncs nothing, as a failing disk's
 * would; without the variable, or while the file is absent, the calls go
 * straight through. The campaign builds it as a product of the root package
 * (libeventbus-chaos-fsync.so) and creates the file at the fault's moment.
 *
 * With EVENTBUS_FSYNC_DELAY_US set, each call that goes through first sleeps
 * that many microseconds: a slow disk, under which a confirm sent before its
 * fsync has a window to be seen (the checker's own test, `make test-mutants`).
 *
 * The bus syncs with fdatasync (the log) and fsync (directories, offsets,
 * snapshots, key files), as Benchmarks/slow_fsync.c says; only these two are
 * wrapped.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "CChaosFsync.h"

static const char *trigger;
static long delay_us;
static int (*real_fdatasync)(int);
static int (*real_fsync)(int);

__attribute__((constructor)) static void failing_fsync_init(void) {
    trigger = getenv("EVENTBUS_CHAOS_FSYNC_FAIL");
    const char *delay = getenv("EVENTBUS_FSYNC_DELAY_US");
    if (delay != NULL) delay_us = strtol(delay, NULL, 10);
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
}

int eventbus_chaos_fsync_fails(void) {
    if (trigger == NULL || trigger[0] == '\0') return 0;
    int saved = errno;
    int fails = access(trigger, F_OK) == 0;
    errno = saved;
    return fails;
}

/* A slow disk's wait, when EVENTBUS_FSYNC_DELAY_US asks for one. */
static void slow_disk(void) {
    if (delay_us <= 0) return;
    int saved = errno;
    struct timespec wait = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
    errno = saved;
}

/* What a failing disk answers. */
static int eio(void) {
    errno = EIO;
    return -1;
}

int fdatasync(int fd) {
    if (eventbus_chaos_fsync_fails()) return eio();
    slow_disk();
    if (real_fdatasync == NULL) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return real_fdatasync(fd);
}

int fsync(int fd) {
    if (eventbus_chaos_fsync_fails()) return eio();
    slow_disk();
    if (real_fsync == NULL) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real_fsync(fd);
}
