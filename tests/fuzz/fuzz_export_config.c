/* libFuzzer entry: arbitrary text as an export config (hfx_export_config_from_json), then
 * serialized back. Any accepted config must serialize. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hfx/hfx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    hfx_export_config *cfg = NULL;
    hfx_error err;
    if (hfx_export_config_from_json(text, &cfg, &err) == HFX_OK) {
        char *json = hfx_export_config_to_json(cfg);
        if (!json) abort();
        free(json);
        hfx_export_config_free(cfg);
    }
    free(text);
    return 0;
}
