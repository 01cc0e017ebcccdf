#ifndef GRAPHHOST_RENDER_SUPPORT_H
#define GRAPHHOST_RENDER_SUPPORT_H

/// Sets flush-to-zero and denormals-are-zero for the calling thread, so decaying filter
/// states never fall into slow denormal arithmetic. Call once on every render thread.
void graphhost_enable_flush_to_zero(void);

/// Names the calling thread (as `ps -L` and `top -H` show it; Linux keeps 15 bytes).
void graphhost_name_thread(const char *name);

#endif
