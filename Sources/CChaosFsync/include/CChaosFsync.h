#ifndef CCHAOSFSYNC_H
#define CCHAOSFSYNC_H

/* Whether fdatasync and fsync fail now: EVENTBUS_CHAOS_FSYNC_FAIL names a file that exists. */
int eventbus_chaos_fsync_fails(void);

#endif
