/* The public view of every export option (hfx_option_info_at): the common keys' table
 * (export/options.def), then each writable format's own keys. */
#include <stdio.h>
#include <string.h>

#include "export/config.h"
#include "fmt/format.h"

/* hfx_option_info.scope's numbers (hfx.h) */
_Static_assert(HFX_SCOPE_ANY == 0 && HFX_SCOPE_GENERATION == 1 && HFX_SCOPE_FORWARD == 2, "hfx_option_info.scope");

/* The i-th writable format (hfx_format_name's order). */
static const hfx_format *writable(int i) {
    for (int k = 0, seen = 0; hfx_format_at(k); k++)
        if (hfx_format_at(k)->write && seen++ == i) return hfx_format_at(k);
    return NULL;
}

static void fill(const hfx_format_option *o, const hfx_format *f, hfx_option_info *out) {
    static const char *const types[] = {[HFX_OPTION_BOOL] = "bool",       [HFX_OPTION_INT] = "int",
                                        [HFX_OPTION_TRUE] = "true",       [HFX_OPTION_REFUSED] = "refused",
                                        [HFX_OPTION_CHOICE] = "choice",   [HFX_OPTION_NULL] = "null",
                                        [HFX_OPTION_SHAPES] = "shapes",   [HFX_OPTION_POOLING] = "pooling"};
    *out = (hfx_option_info){.key = o->key, .type = types[o->kind], .min = o->min, .max = o->max,
                             .nullable = !o->not_null && o->kind != HFX_OPTION_TRUE && o->kind != HFX_OPTION_REFUSED,
                             .format = f ? f->name : NULL, .seed_default = o->seed_default,
                             .seed_format = o->seed_format, .flag = o->flag, .flag_off = o->flag_off,
                             .flag_words = o->flag_words, .scope = (int)o->scope, .group = o->group, .help = o->help};
    if (o->kind == HFX_OPTION_CHOICE) out->choices = o->choices;
    if (o->kind == HFX_OPTION_INT) out->min = o->min, out->max = o->max;
    else out->min = out->max = 0;
    /* what an unset key means: a format's own keys have their value; the common ones' are the
     * export's to decide (a cache's length, a component's logits) unless the row says */
    if (o->kind == HFX_OPTION_BOOL || o->kind == HFX_OPTION_TRUE)
        snprintf(out->default_json, sizeof out->default_json, "%s", o->dflt ? "true" : "false");
    else if (o->kind == HFX_OPTION_INT && f)
        snprintf(out->default_json, sizeof out->default_json, "%lld", (long long)o->dflt);
    else if (o->kind == HFX_OPTION_CHOICE && o->dflt > 0)
        snprintf(out->default_json, sizeof out->default_json, "\"%.28s\"", o->choices[o->dflt - 1]);
    else snprintf(out->default_json, sizeof out->default_json, "null");
}

int hfx_option_info_at(int i, hfx_option_info *out) {
    if (i < 0) return 0;
    if (i < HFX_KEY_COUNT) {
        fill(hfx_key_option(i), NULL, out);
        return 1;
    }
    i -= HFX_KEY_COUNT;
    for (int k = 0; writable(k); i -= writable(k)->n_options, k++)
        if (i < writable(k)->n_options) {
            fill(&writable(k)->options[i], writable(k), out);
            return 1;
        }
    return 0;
}
