/* The executorch format's descriptor and its write: per component, the ATen program, its
 * ExecuTorch plan on the portable kernels with its linear layers delegated to XNNPACK (backend
 * "xnnpack", the default) or not ("portable"), the memory plan, and the .pte file. With llm_runner,
 * a static-cache multi-token decode is written in the layout of ExecuTorch's LLM runner
 * (extension/llm/runner): forward(tokens, input_pos), the cache in mutable buffers, and the
 * constant methods the runner reads. */
#include <string.h>

#include "base/status.h"
#include "fmt/aten_lower.h"
#include "fmt/executorch/executorch.h"
#include "fmt/executorch/program.h"

enum {
    ET_OPT_BACKEND,
    ET_OPT_ALLOC_GRAPH_INPUT,
    ET_OPT_ALLOC_GRAPH_OUTPUT,
    ET_OPT_ALLOC_MUTABLE_BUFFERS,
    ET_OPT_LLM_RUNNER,
    ET_N_OPTIONS
};
enum { BACKEND_DEFAULT, BACKEND_PORTABLE, BACKEND_XNNPACK }; /* choice values: 1-based, 0 null */

static const hfx_format_option et_options[ET_N_OPTIONS] = {
    /* null: "xnnpack", the seed's default (its linear layers delegated, the rest on the portable
     * kernels); "portable": every op on the portable kernels */
    [ET_OPT_BACKEND] = {"backend", HFX_OPTION_CHOICE, 0, 0, 0, false, NULL,
                        (const char *const[]){"portable", "xnnpack", NULL}, NULL, .seed_default = "\"xnnpack\""},
    [ET_OPT_ALLOC_GRAPH_INPUT] = {"alloc_graph_input", HFX_OPTION_BOOL, 1, 0, 1, false, NULL, .seed_default = "true"},
    [ET_OPT_ALLOC_GRAPH_OUTPUT] = {"alloc_graph_output", HFX_OPTION_BOOL, 1, 0, 1, false, NULL, .seed_default = "true"},
    /* (false: a program without mutable buffers is planned alike; llm_runner's cache must be planned) */
    [ET_OPT_ALLOC_MUTABLE_BUFFERS] = {"alloc_mutable_buffers", HFX_OPTION_BOOL, 1, 0, 1, false, NULL,
                                      .seed_default = "true"},
    [ET_OPT_LLM_RUNNER] = {"llm_runner", HFX_OPTION_BOOL, 0, 0, 1, false, NULL, .flag = "--llm-runner",
                           .scope = HFX_SCOPE_GENERATION,
                           .group = "executorch (docs/GENERATION.md; dynamic dims need a max in dynamic_shapes)",
                           .help = "the layout of ExecuTorch's LLM runner: forward(tokens, input_pos), the cache in "
                                   "mutable buffers, its metadata methods (with --cache static --multi-token-decode "
                                   "--batch-size 1)"},
};

/* ExecuTorch has no attention kernel among its portable ones: only linear is kept. */
static bool et_keeps(const hfx_graph *g, const hfx_node *n) {
    (void)g;
    return n->op == HFX_OP_LINEAR;
}

/* ---- the LLM runner's layout ---- */

/* The runner calls forward(tokens [1, S], input_pos [S]) and keeps nothing between calls: so
 * of a static-cache graph (docs/GENERATION.md) input_ids are the tokens, cache_position the
 * positions, position_ids those positions viewed [1, S] (one row, no padding), the slot mask all
 * ones (causality from cache_position already hides the slots not yet written), and the cache
 * becomes mutable buffers — a recurrent layer's states too, replaced by each call. The graph must
 * be a static-cache decode of batch 1 taking any number of tokens up to its bound, or exactly one.
 * Its context is its attention layers' slots, or, with none (Mamba), the export's max_cache_len. */
typedef struct runner_layout {
    hfx_et_role role[64];
    int order[2];
    hfx_et_inputs inputs;
    int64_t max_cache_len, max_seq, vocab;
    bool dynamic;
} runner_layout;

static hfx_status runner_layout_of(const hfx_graph *g, int64_t max_cache_len, runner_layout *r, hfx_error *err) {
    static const char why[] = "executorch: llm_runner writes ExecuTorch's LLM runner layout from a static-cache "
                              "generation export of batch 1 with one graph for prompt and steps (--for-generation "
                              "--cache static --max-cache-len M --multi-token-decode --batch-size 1, the sequence "
                              "bounded in dynamic_shapes)";
    int tokens = -1, pos = -1;
    if (g->n_inputs > 64 || g->n_states == 0) return hfx_fail(err, HFX_ERR_INVALID, "%s: this graph has no cache", why);
    for (int i = 0; i < g->n_inputs; i++) {
        const hfx_value *v = g->inputs[i];
        const hfx_state *s = hfx_graph_state_of(g, v, true);
        if (s && s->update == HFX_STATE_APPEND)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: its cache grows", why);
        if (s) r->role[i] = HFX_ET_BUFFER;
        else if (!strcmp(v->name, "input_ids")) r->role[i] = HFX_ET_ARG, tokens = i;
        else if (!strcmp(v->name, "cache_position")) r->role[i] = HFX_ET_ARG, pos = i;
        else if (!strcmp(v->name, "position_ids")) r->role[i] = HFX_ET_POSITIONS;
        else if (!strcmp(v->name, "attention_mask")) r->role[i] = HFX_ET_ONES;
        else return hfx_fail(err, HFX_ERR_INVALID, "%s: it takes '%s'", why, v->name);
    }
    if (tokens < 0 || pos < 0) return hfx_fail(err, HFX_ERR_INVALID, "%s: it takes no cache_position", why);
    const hfx_value *ids = g->inputs[tokens];
    if (!hfx_dim_is_const(ids->dims[0]) || ids->dims[0].c != 1)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: its batch is not fixed at 1", why);
    const hfx_value *cache = NULL; /* the attention layers' slots [B, heads, M, dim], written in place */
    for (int i = 0; i < g->n_states && !cache; i++)
        if (g->states[i].update == HFX_STATE_WRITE) cache = g->states[i].in;
    const hfx_value *logits = g->n_outputs ? g->outputs[0] : NULL;
    if ((cache && (cache->rank != 4 || !hfx_dim_is_const(cache->dims[2]))) || (!cache && max_cache_len <= 0) ||
        !logits || logits->rank != 3 || !hfx_dim_is_const(logits->dims[2]))
        return hfx_fail(err, HFX_ERR_INTERNAL, "%s: unexpected cache or logits", why);
    hfx_dim seq = ids->dims[1];
    r->dynamic = !hfx_dim_is_const(seq);
    if (!r->dynamic && seq.c != 1) /* the runner then feeds one token per call */
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: its sequence is fixed at %lld tokens, and the runner feeds a fixed-shape program one "
                        "token at a time", why, (long long)seq.c);
    r->max_seq = r->dynamic ? g->symbols[seq.sym[0]].max : seq.c;
    r->max_cache_len = cache ? cache->dims[2].c : max_cache_len;
    r->vocab = logits->dims[2].c;
    r->order[0] = tokens, r->order[1] = pos;
    /* user inputs are the graph's inputs in order (hfx_aten_lower); positions_of: cache_position */
    r->inputs = (hfx_et_inputs){r->role, r->order, 2, pos};
    return HFX_OK;
}

/* The constant methods the runner reads (extension/llm/runner: its metadata names). */
static int runner_methods(const runner_layout *r, const hfx_special_tokens *t, hfx_et_constant_method *m) {
    int n = 0;
    m[n++] = (hfx_et_constant_method){"get_max_seq_len", false, {r->max_seq}, 1};
    m[n++] = (hfx_et_constant_method){"get_max_context_len", false, {r->max_cache_len}, 1};
    m[n++] = (hfx_et_constant_method){"get_vocab_size", false, {r->vocab}, 1};
    m[n++] = (hfx_et_constant_method){"use_kv_cache", true, {1}, 1};
    m[n++] = (hfx_et_constant_method){"use_sdpa_with_kv_cache", true, {0}, 1};
    m[n++] = (hfx_et_constant_method){"enable_dynamic_shape", true, {r->dynamic}, 1};
    if (t && t->bos >= 0) m[n++] = (hfx_et_constant_method){"get_bos_id", false, {t->bos}, 1};
    if (t && t->n_eos) {
        m[n] = (hfx_et_constant_method){"get_eos_ids", false, {0}, t->n_eos};
        memcpy(m[n++].values, t->eos, (size_t)t->n_eos * sizeof t->eos[0]);
    }
    return n;
}

/* The Python system's call's constant arguments (None, False, an int) into before[16] and which[16]: each before the
 * first user input (the graph's, in order: a cache leaf is keyword "cache", "a.b" keyword "a") that comes after it in
 * the forward. Returns how many. */
static int constant_slots(const hfx_graph *g, const hfx_seed_call *sc, int *before,
                          const hfx_keyword_constant **which) {
    int n = 0;
    for (const hfx_keyword_constant *a = sc ? sc->constants : NULL; a && a->name && n < 16; a++) {
        int rank = hfx_seed_call_rank(sc, a->name, strlen(a->name)), k = 0;
        for (; k < g->n_inputs; k++) {
            const char *name = hfx_graph_state_of(g, g->inputs[k], true) ? "cache" : g->inputs[k]->name;
            const char *dot = strchr(name, '.');
            if (hfx_seed_call_rank(sc, name, dot ? (size_t)(dot - name) : strlen(name)) > rank) break;
        }
        which[n] = a;
        before[n++] = k;
    }
    return n;
}

static hfx_status et_write(const hfx_format_graph *gs, int n, hfx_outdir *out, hfx_error *err) {
    hfx_status st = HFX_OK;
    for (int c = 0; c < n && !st; c++) {
        const hfx_graph *g = gs[c].g;
        if (g->n_symbols > 16) return hfx_fail(err, HFX_ERR_UNSUPPORTED, "executorch: over 16 dynamic dims");
        runner_layout runner;
        bool as_runner = gs[c].opt[ET_OPT_LLM_RUNNER] != 0;
        if (as_runner && !gs[c].opt[ET_OPT_ALLOC_MUTABLE_BUFFERS]) {
            st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "executorch: llm_runner keeps the cache in mutable buffers, which "
                                                    "ExecuTorch's LLM runner does not bind: alloc_mutable_buffers "
                                                    "must be true with it");
            break;
        }
        if (as_runner && (st = runner_layout_of(g, gs[c].max_cache_len, &runner, err))) break;
        int64_t hints[16];
        hfx_aten_default_hints(g, hints); /* the plan itself uses the upper bounds */
        hfx_aten_program *p;
        if ((st = hfx_op_table_check(g, "executorch", hfx_et_op_support, err))) break;
        /* the Python system's profile (io "seed"): its program's, the cache's new content both an input mutation and
           returned, as the model returns it (outputs: the mutations, the logits, the returned cache) */
        bool seed = gs[c].seed_call != NULL;
        if (seed && gs[c].seed_call->is_static && hfx_seed_call_slides(gs[c].seed_call)) {
            st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "executorch: io \"seed\" with a static cache does not cover "
                                                    "sliding-window layers (the keys they keep depend on the write "
                                                    "counter: a size ExecuTorch's memory plan cannot hold); export "
                                                    "with io \"optimum\"");
            break;
        }
        st = hfx_aten_lower(g, hints, seed ? HFX_ATEN_RETURNS_UPDATED_STATE : 0, &p, err);
        if (st) break;
        hfx_et_program *e;
        int before[16];
        const hfx_keyword_constant *which[16];
        hfx_et_options opt = {as_runner ? &runner.inputs : NULL, gs[c].opt[ET_OPT_BACKEND] != BACKEND_PORTABLE, seed,
                              before, which, constant_slots(g, gs[c].seed_call, before, which)};
        st = hfx_et_lower(p, &opt, &e, err);
        if (!st) {
            hfx_et_constant_method methods[8];
            int n_methods = as_runner ? runner_methods(&runner, gs[c].tokens, methods) : 0;
            hfx_et_plan(e, (hfx_et_alloc){gs[c].opt[ET_OPT_ALLOC_GRAPH_INPUT] != 0,
                                          gs[c].opt[ET_OPT_ALLOC_GRAPH_OUTPUT] != 0});
            st = e->oom ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory")
                        : hfx_et_write(e, "forward", methods, n_methods, out, gs[c].file, err);
            hfx_et_program_free(e);
        }
        hfx_aten_program_free(p);
    }
    return st;
}

const hfx_format hfx_format_executorch = {
    .name = "executorch", .summary = "ExecuTorch program (.pte), linears on XNNPACK, for the ExecuTorch runtime",
    .graph_ext = ".pte", .bounded_dims = true, .options = et_options, .n_options = ET_N_OPTIONS, .keeps = et_keeps,
    /* torchao's symmetric int4 in groups of 32 / int8 per channel, as ExecuTorch's 8da4w / 8da8w
     * (XNNPACK's qb4w / qc8w linears, activations quantized per token at run time); tables stay
     * float */
    .quant = {true, HFX_QUANT_RULE_TORCHAO, HFX_QUANT_RULE_TORCHAO, 32, 0, true, false, false},
    .seed_io = true, .seed_prefix = "", .write = et_write};
