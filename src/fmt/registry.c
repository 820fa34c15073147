/* The one list of output formats. */
#include <stdio.h>
#include <string.h>

#include "fmt/dynamo/dynamo.h"
#include "fmt/executorch/executorch.h"
#include "fmt/format.h"
#include "fmt/onnx/onnx.h"
#include "fmt/openvino/openvino.h"

static const hfx_format *const registry[] = {&hfx_format_onnx, &hfx_format_openvino, &hfx_format_executorch,
                                             &hfx_format_dynamo};
enum { N_FORMATS = sizeof registry / sizeof registry[0] };

const hfx_format *hfx_format_at(int i) { return i >= 0 && i < N_FORMATS ? registry[i] : NULL; }

const hfx_format *hfx_format_find(const char *name) {
    for (int i = 0; name && i < N_FORMATS; i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

const char *hfx_format_names(bool all, char *buf, size_t size) {
    size_t k = 0;
    if (size) buf[0] = 0;
    for (int i = 0; i < N_FORMATS && k < size; i++)
        if (all || registry[i]->write)
            k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? ", " : "", registry[i]->name);
    return buf;
}

int hfx_format_option_index(const hfx_format *f, const char *key) {
    for (int i = 0; i < f->n_options; i++)
        if (strcmp(f->options[i].key, key) == 0) return i;
    return -1;
}

void hfx_format_file_name(const hfx_format *f, hfx_file_layout layout, const char *name, const char *stem, bool alone,
                          char *buf, size_t size) {
    if (layout == HFX_FILES_SEED) snprintf(buf, size, "%s%s%s", f->seed_prefix, name, f->graph_ext);
    else if (layout == HFX_FILES_STATEFUL && alone) snprintf(buf, size, "%s", f->stateful_file);
    else if (layout == HFX_FILES_STATEFUL) snprintf(buf, size, "%s%s_model%s", f->seed_prefix, stem ? stem : name, f->graph_ext);
    else snprintf(buf, size, "%s%s", name, f->graph_ext);
}
