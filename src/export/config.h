/* The export configuration: the seed's config dataclasses (OnnxConfig, ...) as one validated
 * JSON object. Internal accessors for the exporters. */
#ifndef HFX_EXPORT_CONFIG_H
#define HFX_EXPORT_CONFIG_H

#include <jansson.h>
#include <stdbool.h>

#include "hfx/hfx.h"

struct hfx_export_config {
    json_t *obj; /* owned; every key validated */
};

const char *hfx_cfg_format(const hfx_export_config *c);
bool hfx_cfg_dynamic(const hfx_export_config *c);
const json_t *hfx_cfg_dynamic_shapes(const hfx_export_config *c); /* NULL when unset */
int hfx_cfg_opset(const hfx_export_config *c);                     /* 0: backend default */
bool hfx_cfg_external_data(const hfx_export_config *c);
hfx_dtype hfx_cfg_dtype(const hfx_export_config *c);               /* default F32 */

hfx_export_config *hfx_export_config_clone(const hfx_export_config *c);

#endif
