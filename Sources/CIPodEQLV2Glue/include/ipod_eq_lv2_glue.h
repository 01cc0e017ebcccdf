/* The Swift side of the graphhost iPod EQ LV2 plugin (exported with @_cdecl in GraphHostIPodEQLV2). */
#ifndef GH_IPOD_EQ_LV2_GLUE_H
#define GH_IPOD_EQ_LV2_GLUE_H

#include <stdint.h>

void *gh_ipod_eq_instantiate(double sample_rate);
void gh_ipod_eq_connect_port(void *instance, uint32_t port, void *data);
void gh_ipod_eq_activate(void *instance);
void gh_ipod_eq_run(void *instance, uint32_t frames);
void gh_ipod_eq_deactivate(void *instance);
void gh_ipod_eq_cleanup(void *instance);

#endif
