#ifndef GH_ISOLATION_GLUE_H
#define GH_ISOLATION_GLUE_H

#include <stddef.h>
#include <sys/types.h>

/// Anonymous shared memory of `bytes` bytes, zero-filled, that a child process can map (its descriptor is inherited
/// across exec when `inherit` is non-zero). Returns the descriptor or -1 (errno set).
int gh_isolation_memfd(const char *name, size_t bytes, int inherit);

/// An eventfd counter starting at 0 (blocking reads; kept across exec when `inherit` is non-zero), or -1.
int gh_isolation_eventfd(int inherit);

/// Adds 1 to an eventfd's counter (never blocks while the counter is far from its maximum); 0 or -1.
int gh_isolation_signal(int fd);

/// Waits until an eventfd's counter is non-zero and resets it; 0, or -1 with errno (EINTR: try again).
int gh_isolation_wait(int fd);

/// A pipe whose ends close on exec (fds[0] reads, fds[1] writes); 0 or -1.
int gh_isolation_pipe(int fds[2]);

/// A descriptor that becomes readable when process `pid` ends (pidfd_open), or -1.
int gh_isolation_pidfd(pid_t pid);

/// Asks the kernel to send SIGKILL to this process when its parent ends.
void gh_isolation_die_with_parent(void);

#endif
