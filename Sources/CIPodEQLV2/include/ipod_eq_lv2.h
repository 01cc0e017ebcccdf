/* The Swift side of the graphhost iPod EQ LV2 plugin (exported with @_cdecl in GraphHostIPodEQLV2). */
#ifndef IPOD_EQ_LV2_H
#define IPOD_EQ_LV2_H

#include <stdint.h>

void *graphhost_ipod_eq_instantiate(double sample_rate);
void graphhost_ipod_eq_connect_port(void *instance, uint32_t port, void *data);
void graphhost_ipod_eq_activate(void *instance);
void graphhost_ipod_eq_run(void *instance, uint32_t frames);
void graphhost_ipod_eq_deactivate(void *instance);
void graphhost_ipod_eq_cleanup(void *instance);

#endif
