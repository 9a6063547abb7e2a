#ifndef EVENTBUS_CSPAWN_H
#define EVENTBUS_CSPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated arrays, prepared by
/// the caller) in a child process; returns its pid, or -1 with `*error` set to
/// the errno of what failed (the fork, or in the child the exec).
///
/// Between fork and exec the child makes only async-signal-safe calls (the
/// parent may be multi-threaded): with `die_with_parent` on Linux it asks for
/// SIGKILL when the parent dies (`PR_SET_PDEATHSIG`) and exits at once if the
/// parent already died; it takes standard input from /dev/null, keeps standard
/// output and error, resets every signal to its default action and unblocks
/// them all, and closes every other inherited descriptor.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that called this function ends,
/// not only when its process does: call it from a thread that outlives the child.
pid_t eventbus_spawn(const char *path, char *const argv[], char *const envp[], int die_with_parent, int *error);

#endif
