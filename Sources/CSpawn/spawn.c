// fork + exec for the supervisor's plugin processes; see CSpawn.h.
#define _GNU_SOURCE
#include "CSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/// Closes the descriptors `first` to `last` (both included, `last` below `limit`).
static void close_descriptors(unsigned int first, unsigned int last, long limit) {
    if (first > last) return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, last, 0) == 0) return;
#endif
    // Kernels before 5.9: one close per possible descriptor.
    for (long fd = first; fd <= (long)last && fd < limit; fd++) close((int)fd);
}

/// In the child: reports `code` to the parent through `report` and exits.
static void fail(int report, int code) {
    ssize_t written;
    do written = write(report, &code, sizeof code); while (written < 0 && errno == EINTR);
    _exit(127);
}

/// In the child: gives `signal` its default action.
static void reset_signal(int signal) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    if (sigaction(signal, &action, NULL) == 0) return;
#if defined(__linux__) && defined(SYS_rt_sigaction)
    // glibc refuses the signals it keeps for itself (32 and 33), which an ignored
    // disposition in the parent would still leave ignored across exec; the kernel
    // takes them. All zero is SIG_DFL with no flags, whatever the architecture's layout.
    unsigned long raw[4] = {0, 0, 0, 0};
    (void)syscall(SYS_rt_sigaction, signal, raw, NULL, NSIG / 8);
#endif
}

/// The child's side: only async-signal-safe calls from here to execve.
static void child(const char *path, char *const argv[], char *const envp[], int die_with_parent,
                  pid_t parent, int report, int devnull, long limit) {
    // Every signal is blocked (the parent blocked them around fork), so no handler
    // inherited from the parent can run here; give each its default action back.
    for (int signal = 1; signal < NSIG; signal++) reset_signal(signal);
#ifdef __linux__
    if (die_with_parent) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(report, errno);
        // The parent may have died between fork and prctl: then no signal will come.
        if (getppid() != parent) _exit(127);
    }
#else
    (void)die_with_parent;
    (void)parent;
#endif
    if (devnull == STDIN_FILENO) {
        if (fcntl(STDIN_FILENO, F_SETFD, 0) != 0) fail(report, errno);
    } else if (dup2(devnull, STDIN_FILENO) < 0) {
        fail(report, errno);
    }
    // Everything from 3 on but the report pipe, which closes itself on exec.
    if (report >= 3) {
        close_descriptors(3, (unsigned int)report - 1, limit);
        close_descriptors((unsigned int)report + 1, ~0U, limit);
    } else {
        close_descriptors(3, ~0U, limit);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, envp);
    fail(report, errno);
}

pid_t eventbus_spawn(const char *path, char *const argv[], char *const envp[], int die_with_parent, int *error) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *error = errno;
        return -1;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        *error = errno;
        close(report[0]);
        close(report[1]);
        return -1;
    }
    long limit = 65536;
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY && files.rlim_cur < (1 << 20)) {
        limit = (long)files.rlim_cur;
    }
    pid_t parent = getpid();
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t pid = fork();
    if (pid == 0) child(path, argv, envp, die_with_parent, parent, report[1], devnull, limit);
    int forkError = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(report[1]);
    close(devnull);
    if (pid < 0) {
        close(report[0]);
        *error = forkError;
        return -1;
    }
    // The pipe closes on a successful exec (nothing read) or carries the child's errno.
    int childError = 0;
    ssize_t got;
    do got = read(report[0], &childError, sizeof childError); while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof childError) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        *error = childError;
        return -1;
    }
    return pid;
}
