#ifndef GH_LADSPA_GLUE_H
#define GH_LADSPA_GLUE_H

#include <ladspa.h>
#include <lv2/core/lv2.h>

/// The `index`-th plugin of a LADSPA library opened with dlopen (its `ladspa_descriptor`), NULL past the last or
/// when the library has none.
const LADSPA_Descriptor *gh_ladspa_descriptor(void *library, unsigned long index);

/// Instantiates a LADSPA plugin at `rate` behind the LV2 descriptor `gh_ladspa_lv2_descriptor`, so the LV2 kernel
/// connects, activates, runs and frees it as it does an LV2 plugin's instance. NULL when the plugin refuses.
LV2_Handle gh_ladspa_instantiate(const LADSPA_Descriptor *descriptor, unsigned long rate);

/// The LV2 descriptor whose functions call a handle's LADSPA plugin (connect_port, activate, run, deactivate and
/// cleanup, which also frees the handle).
const LV2_Descriptor *gh_ladspa_lv2_descriptor(void);

#endif
