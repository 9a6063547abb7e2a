/* An LD_PRELOAD shim for the fault campaign (docs/reliability.md, "The fault
 * campaign"): while the file named by EVENTBUS_CHAOS_FSYNC_FAIL exists, every
 * fdatasync and fsync fails with EIO and syncs nothing, as a failing disk's
 * would; without the variable, or while the file is absent, the calls go
 * straight through. The campaign builds it as a product of the root package
 * (libeventbus-chaos-fsync.so) and creates the file at the fault's moment.
 *
 * The bus syncs with fdatasync (the log) and fsync (directories, offsets,
 * snapshots, key files), as Benchmarks/slow_fsync.c says; only these two are
 * wrapped.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "CChaosFsync.h"

static const char *trigger;
static int (*real_fdatasync)(int);
static int (*real_fsync)(int);

__attribute__((constructor)) static void failing_fsync_init(void) {
    trigger = getenv("EVENTBUS_CHAOS_FSYNC_FAIL");
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

/* What a failing disk answers. */
static int eio(void) {
    errno = EIO;
    return -1;
}

int fdatasync(int fd) {
    if (eventbus_chaos_fsync_fails()) return eio();
    if (real_fdatasync == NULL) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return real_fdatasync(fd);
}

int fsync(int fd) {
    if (eventbus_chaos_fsync_fails()) return eio();
    if (real_fsync == NULL) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real_fsync(fd);
}
