#define _GNU_SOURCE
#include "isolation_glue.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int gh_isolation_memfd(const char *name, size_t bytes, int inherit) {
    int fd = memfd_create(name, inherit ? 0 : MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)bytes) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int gh_isolation_eventfd(int inherit) { return eventfd(0, inherit ? 0 : EFD_CLOEXEC); }

int gh_isolation_signal(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

int gh_isolation_wait(int fd) {
    uint64_t value = 0;
    return read(fd, &value, sizeof value) == sizeof value ? 0 : -1;
}

int gh_isolation_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int gh_isolation_pidfd(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

void gh_isolation_die_with_parent(void) { prctl(PR_SET_PDEATHSIG, SIGKILL); }
