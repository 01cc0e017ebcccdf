#ifndef GH_THREAD_GLUE_H
#define GH_THREAD_GLUE_H

/// Sets flush-to-zero and denormals-are-zero for the calling thread, so decaying filter
/// states never fall into slow denormal arithmetic. Call once on every render thread.
void gh_enable_flush_to_zero(void);

/// Names the calling thread (as `ps -L` and `top -H` show it; Linux keeps 15 bytes).
void gh_name_thread(const char *name);

/// Gives the thread `thread` the scheduling policy and priority of the thread `model` (a worker follows PipeWire's
/// data thread); returns 0 or an errno.
int gh_thread_copy_scheduling(unsigned long thread, unsigned long model);

/// Keeps the calling thread to the CPU it is running on (threads it starts afterwards inherit that); returns the CPU,
/// or -1 with errno set.
int gh_keep_to_current_cpu(void);

/// The CPU the calling thread runs on, or -1.
int gh_current_cpu(void);

/// How many CPUs the calling thread may run on (0 when it cannot be read).
int gh_allowed_cpu_count(void);

#endif
