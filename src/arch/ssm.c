/* State-space token mixers (ssm.h). */
#include "arch/ssm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

/* ---- config.json ---- */

/* One end of time_step_limit: a number, or transformers' {"__float__": "Infinity"} for ±∞. */
static hfx_status limit_end(hfx_cfg c, const char *key, const json_t *v, double *out, hfx_error *err) {
    const json_t *f = json_is_object(v) ? json_object_get(v, "__float__") : NULL;
    const char *s = json_string_value(f);
    if (json_is_number(v)) *out = json_number_value(v);
    else if (s && strcmp(s, "Infinity") == 0) *out = INFINITY;
    else if (s && strcmp(s, "-Infinity") == 0) *out = -INFINITY;
    else return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be two numbers", c.where, key);
    return HFX_OK;
}

/* The inner width and the heads' width: int(expand · hidden) (or the family's inner key) split into heads of head_dim
 * ("auto": evenly); without an expand key (Nemotron-H), heads · head_dim itself. */
static hfx_status mamba2_widths(hfx_cfg c, const hfx_mamba2_keys *k, int64_t hidden, hfx_mamba2_cfg *m, hfx_error *err) {
    hfx_status st;
    double expand = 0;
    char inner_name[96];
    if ((st = hfx_cfg_int_in_or(c, k->heads, k->default_heads, 1, 1 << 16, &m->heads, err)) ||
        (k->expand && (st = hfx_cfg_num_or(c, k->expand, k->default_expand, &expand, err))))
        return st;
    if (k->expand && !(expand > 0 && expand * (double)hidden < (double)(1 << 24)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g is out of range", c.where, k->expand, expand);
    m->inner = (int64_t)(expand * (double)hidden); /* transformers: int(expand · hidden_size) */
    snprintf(inner_name, sizeof inner_name, "%s · hidden_size", k->expand ? k->expand : "expand");
    if (k->inner && hfx_cfg_has(c, k->inner)) {
        if ((st = hfx_cfg_int_in(c, k->inner, 1, 1 << 24, &m->inner, err))) return st;
        snprintf(inner_name, sizeof inner_name, "%s", k->inner);
    }
    /* "auto" (or absent where the family's default is): the width split evenly over the heads */
    const char *head_dim = json_string_value(json_object_get(c.obj, k->head_dim));
    bool derived = k->expand && ((head_dim && strcmp(head_dim, "auto") == 0) ||
                                 (!hfx_cfg_has(c, k->head_dim) && !k->default_head_dim));
    if ((st = derived ? HFX_OK : hfx_cfg_int_in_or(c, k->head_dim, k->default_head_dim, 1, 1 << 16, &m->head_dim, err)))
        return st;
    if (derived) m->head_dim = m->inner / m->heads;
    if (!k->expand) m->inner = m->heads * m->head_dim;
    if (m->inner != m->heads * m->head_dim || m->inner > (1 << 24))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s (%lld) must equal %s · %s (%lld · %lld)", c.where, inner_name,
                        (long long)m->inner, k->heads, k->head_dim, (long long)m->heads, (long long)m->head_dim);
    return HFX_OK;
}

/* Falcon-H1's multipliers of the mixer's input and of in_proj's five sections. */
static hfx_status mamba2_multipliers(hfx_cfg c, const hfx_mamba2_keys *k, hfx_mamba2_cfg *m, hfx_error *err) {
    hfx_status st;
    m->in_mult = 1.0;
    for (int s = 0; s < 5; s++) m->section_mult[s] = 1.0;
    if (k->in_mult && (st = hfx_cfg_num_or(c, k->in_mult, 1.0, &m->in_mult, err))) return st;
    const json_t *mults = k->section_mults ? json_object_get(c.obj, k->section_mults) : NULL;
    if (mults && !json_is_null(mults)) {
        if (!json_is_array(mults) || json_array_size(mults) != 5)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be five numbers", c.where, k->section_mults);
        for (size_t s = 0; s < 5; s++) {
            if (!json_is_number(json_array_get(mults, s)))
                return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be five numbers", c.where, k->section_mults);
            m->section_mult[s] = json_number_value(json_array_get(mults, s));
        }
    }
    for (int s = 0; s < 5; s++)
        if (!isfinite(m->section_mult[s]))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be finite numbers", c.where, k->section_mults);
    if (!isfinite(m->in_mult))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a finite number", c.where, k->in_mult);
    return HFX_OK;
}

/* dt's clamp: time_step_limit's range, or (Nemotron-H) a floor alone; none by default. */
static hfx_status mamba2_dt_limit(hfx_cfg c, const hfx_mamba2_keys *k, hfx_mamba2_cfg *m, hfx_error *err) {
    hfx_status st;
    m->dt_min = 0, m->dt_max = INFINITY;
    if (k->floor) {
        if ((st = hfx_cfg_num_or(c, k->floor, k->default_floor, &m->dt_min, err))) return st;
        if (!(m->dt_min >= 0 && m->dt_min < 1e30))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g is not a time step ≥ 0", c.where, k->floor, m->dt_min);
        return HFX_OK;
    }
    const json_t *limit = k->limit ? json_object_get(c.obj, k->limit) : NULL;
    if (limit && !json_is_null(limit)) {
        if (!json_is_array(limit) || json_array_size(limit) != 2)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be two numbers", c.where, k->limit);
        if ((st = limit_end(c, k->limit, json_array_get(limit, 0), &m->dt_min, err)) ||
            (st = limit_end(c, k->limit, json_array_get(limit, 1), &m->dt_max, err)))
            return st;
        if (!(m->dt_min <= m->dt_max) || isnan(m->dt_min))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' is not a range", c.where, k->limit);
    }
    return HFX_OK;
}

hfx_status hfx_mamba2_parse(hfx_cfg c, const hfx_mamba2_keys *k, int64_t hidden, double eps,
                            hfx_mamba2_cfg *m, hfx_error *err) {
    hfx_status st;
    const char *act;
    if ((st = mamba2_widths(c, k, hidden, m, err)) ||
        (st = hfx_cfg_int_in_or(c, k->state, k->default_state, 1, 1 << 16, &m->state, err)) ||
        (st = hfx_cfg_int_in_or(c, k->kernel, k->default_kernel, 2, 64, &m->kernel, err)) ||
        (st = hfx_cfg_int_in_or(c, k->groups, k->default_groups, 1, 1 << 16, &m->groups, err)) ||
        (st = hfx_cfg_bool_or(c, k->conv_bias, k->default_conv_bias, &m->conv_bias, err)) ||
        (st = hfx_cfg_bool_or(c, k->proj_bias, k->default_proj_bias, &m->proj_bias, err)) ||
        (st = hfx_cfg_str_or(c, k->act, "silu", &act, err)) ||
        (st = hfx_cfg_int_in_or(c, k->chunk, k->default_chunk, 1, 1 << 20, &m->chunk, err)))
        return st;
    if (m->groups * m->state > (1 << 24))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s · %s (%lld · %lld) is out of range", c.where, k->groups, k->state,
                        (long long)m->groups, (long long)m->state);
    if (m->heads % m->groups)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s (%lld) is not a multiple of %s (%lld)", c.where, k->heads,
                        (long long)m->heads, k->groups, (long long)m->groups);
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' (supported: %s)", c.where, k->act, act,
                        hfx_activation_names());
    m->conv_dim = m->inner + 2 * m->groups * m->state;
    m->eps = k->norm_eps > 0 ? k->norm_eps : eps;
    m->out_bias = m->proj_bias, m->norm = true, m->norm_first = false;
    if ((k->out_bias && (st = hfx_cfg_bool_or(c, k->out_bias, false, &m->out_bias, err))) ||
        (k->norm_switch && (st = hfx_cfg_bool_or(c, k->norm_switch, false, &m->norm, err))) ||
        (k->norm_first && (st = hfx_cfg_bool_or(c, k->norm_first, true, &m->norm_first, err))))
        return st;
    if ((st = mamba2_multipliers(c, k, m, err))) return st;
    return mamba2_dt_limit(c, k, m, err);
}

hfx_status hfx_rglru_parse(hfx_cfg c, int64_t hidden, int64_t heads, hfx_rglru_cfg *m, hfx_error *err) {
    hfx_status st;
    const json_t *width = json_object_get(c.obj, "lru_width");
    m->heads = heads;
    if ((st = hfx_cfg_int_in_or(c, "conv1d_width", 4, 1, 64, &m->kernel, err)) ||
        (st = json_is_null(width) ? (m->width = hidden, HFX_OK)
                                  : hfx_cfg_int_in_or(c, "lru_width", hidden, 1, 1 << 20, &m->width, err)))
        return st;
    if (m->width % heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: lru_width (%lld) is not a multiple of num_attention_heads (%lld)",
                        c.where, (long long)m->width, (long long)heads);
    return HFX_OK;
}

hfx_status hfx_mamba1_parse(hfx_cfg c, const hfx_mamba1_keys *keys, int64_t hidden, hfx_mamba1_cfg *m, hfx_error *err) {
    static const hfx_mamba1_keys mamba = {"expand", "state_size", "conv_kernel", "time_step_rank", "use_conv_bias",
                                          "use_bias", "hidden_act", HFX_DT_BC_NONE, NULL};
    const hfx_mamba1_keys *k = keys ? keys : &mamba;
    hfx_status st;
    double expand;
    const char *act;
    m->dt_bc_norm = k->dt_bc_norm, m->dt_bc_eps = 0;
    if (k->dt_bc_norm && (st = hfx_cfg_num_or(c, k->dt_bc_eps, 1e-6, &m->dt_bc_eps, err))) return st;
    if (k->dt_bc_norm && !(m->dt_bc_eps > 0 && m->dt_bc_eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g out of range (0, 1)", c.where, k->dt_bc_eps, m->dt_bc_eps);
    if ((st = hfx_cfg_num_or(c, k->expand, 2.0, &expand, err))) return st;
    if (!(expand > 0 && expand * (double)hidden < (double)(1 << 24)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g is out of range", c.where, k->expand, expand);
    m->inner = (int64_t)(expand * (double)hidden);
    m->dt_rank = (hidden + 15) / 16;
    const char *rank = json_string_value(json_object_get(c.obj, k->dt_rank));
    if (rank && strcmp(rank, "auto") != 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s '%s' (a number or \"auto\")", c.where, k->dt_rank, rank);
    if ((!rank && (st = hfx_cfg_int_in_or(c, k->dt_rank, m->dt_rank, 1, 1 << 16, &m->dt_rank, err))) ||
        (st = hfx_cfg_int_in_or(c, k->state, 16, 1, 1 << 12, &m->state, err)) ||
        (st = hfx_cfg_int_in_or(c, k->kernel, 4, 2, 64, &m->kernel, err)) ||
        (st = hfx_cfg_bool_or(c, k->conv_bias, true, &m->conv_bias, err)) ||
        (st = hfx_cfg_bool_or(c, k->proj_bias, false, &m->proj_bias, err)) ||
        (st = hfx_cfg_str_or(c, k->act, "silu", &act, err)))
        return st;
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' (supported: %s)", c.where, k->act, act,
                        hfx_activation_names());
    return HFX_OK;
}

hfx_status hfx_delta_parse(hfx_cfg c, double eps, int64_t max_len, hfx_delta_proj proj, hfx_delta_cfg *m,
                           hfx_error *err) {
    hfx_status st;
    const char *act;
    bool kda = proj == HFX_DELTA_KDA || proj == HFX_DELTA_KDA_FULL_RANK; /* (one count and one width for q, k and v) */
    /* the keys of the key heads, value heads, key width, value width and taps: Kimi delta attention has one count and
     * one width for q, k and v, BailingHybrid's config takes them from the attention's keys */
    static const char *const grouped[5] = {"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                                           "linear_value_head_dim", "linear_conv_kernel_dim"};
    static const char *const kimi[5] = {"linear_num_heads", "linear_num_heads", "linear_head_dim", "linear_head_dim",
                                        "linear_conv_kernel_dim"};
    static const char *const ling[5] = {"num_attention_heads", "num_attention_heads", "head_dim", "head_dim",
                                        "short_conv_kernel_size"};
    const char *const *k = proj == HFX_DELTA_KDA_FULL_RANK ? ling : kda ? kimi : grouped;
    if ((st = hfx_cfg_int_in_or(c, k[0], kda ? 32 : 16, 1, 1 << 12, &m->k_heads, err)) ||
        (st = hfx_cfg_int_in_or(c, k[1], 32, 1, 1 << 12, &m->v_heads, err)) ||
        (st = hfx_cfg_int_in_or(c, k[2], 128, 1, 1 << 12, &m->k_dim, err)) ||
        (st = hfx_cfg_int_in_or(c, k[3], 128, 1, 1 << 12, &m->v_dim, err)) ||
        (st = hfx_cfg_int_in_or(c, k[4], 4, 2, 64, &m->kernel, err)) ||
        (st = hfx_cfg_str_or(c, "hidden_act", "silu", &act, err)))
        return st;
    if (m->v_heads % m->k_heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: linear_num_value_heads (%lld) is not a multiple of "
                                              "linear_num_key_heads (%lld)", c.where, (long long)m->v_heads,
                        (long long)m->k_heads);
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: hidden_act '%s' (supported: %s)", c.where, act,
                        hfx_activation_names());
    m->key_dim = m->k_heads * m->k_dim, m->value_dim = m->v_heads * m->v_dim;
    m->conv_dim = 2 * m->key_dim + m->value_dim;
    const char *gate;
    m->sigmoid_gate = kda;
    if (!kda && (st = hfx_cfg_str_or(c, "output_gate_type", "silu", &gate, err))) return st;
    if (!kda && strcmp(gate, "sigmoid") == 0) m->sigmoid_gate = true;
    else if (!kda && strcmp(gate, "silu") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: output_gate_type '%s' (supported: sigmoid, silu)", c.where, gate);
    m->proj = proj, m->eps = proj == HFX_DELTA_PER_PROJECTION ? 1e-5 : eps, m->beta_scale = 1.0;
    m->channel_decay = kda, m->decay_floor = 0;
    bool safe = false;
    if (proj == HFX_DELTA_KDA_FULL_RANK &&
        ((st = hfx_cfg_bool_or(c, "kda_safe_gate", true, &safe, err)) ||
         (safe && (st = hfx_cfg_num_or(c, "kda_lower_bound", -5.0, &m->decay_floor, err)))))
        return st;
    if (safe && !(m->decay_floor < 0 && m->decay_floor > -1e4))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: kda_lower_bound %g must be negative (a log decay's floor)", c.where,
                        m->decay_floor);
    bool negative = false;
    if (proj == HFX_DELTA_PER_PROJECTION &&
        (st = hfx_cfg_bool_or(c, "linear_allow_neg_eigval", true, &negative, err)))
        return st;
    if (negative) m->beta_scale = 2.0;
    for (m->factors = 1; m->factors < 62 && ((int64_t)1 << m->factors) < max_len; m->factors++) {}
    return HFX_OK;
}

/* ---- the graph ---- */

static hfx_value *op(hfx_graph *g, hfx_op o, hfx_value *a, hfx_value *b) { return hfx_op2(g, o, a, b); }

static hfx_value *f32(hfx_graph *g, double v) { return hfx_const_scalar(g, HFX_DTYPE_F32, v); }

hfx_value *hfx_zero_state(hfx_graph *g, hfx_value *like, hfx_dtype dt, int rank, const int64_t *dims) {
    hfx_value *parts[HFX_MAX_RANK];
    hfx_dim shape[HFX_MAX_RANK];
    parts[0] = hfx_unsqueeze(g, hfx_dim_of(g, like, 0), 0);
    shape[0] = like->dims[0];
    for (int d = 0; d < rank && d + 1 < HFX_MAX_RANK; d++) {
        parts[d + 1] = hfx_unsqueeze(g, hfx_const_i64(g, dims[d]), 0);
        shape[d + 1] = hfx_dim_const(dims[d]);
    }
    return hfx_expand(g, hfx_const_scalar(g, dt, 0.0), hfx_concat(g, rank + 1, parts, 0), rank + 1, shape);
}

hfx_value *hfx_conv_window(hfx_graph *g, hfx_value *state, hfx_value *x, int64_t K, int64_t kept, hfx_value **next) {
    hfx_value *past = state ? state : hfx_zero_state(g, x, x->dtype, 2, (int64_t[]){x->dims[1].c, kept});
    hfx_value *all = hfx_concat(g, 2, (hfx_value *[]){past, x}, 2);                         /* [B,C,kept+S] */
    if (next) *next = hfx_slice(g, all, 2, -kept, INT64_MAX);
    if (kept == K - 1) return all;
    hfx_value *read = hfx_slice(g, past, 2, kept - (K - 1), kept);                         /* [B,C,K−1] */
    return hfx_concat(g, 2, (hfx_value *[]){read, x}, 2);
}

hfx_value *hfx_causal_conv(hfx_graph *g, hfx_value *all, hfx_value *weight, hfx_value *bias) {
    return hfx_causal_conv_dilated(g, all, weight, bias, 1);
}

hfx_value *hfx_causal_conv_dilated(hfx_graph *g, hfx_value *all, hfx_value *weight, hfx_value *bias, int64_t dilation) {
    int64_t C = weight->dims[0].c, K = weight->dims[2].c, span = (K - 1) * dilation;
    bool ok = true;
    hfx_dim seq = hfx_dim_add(all->dims[2], hfx_dim_const(-span), &ok);
    hfx_value *len = op(g, HFX_OP_SUB, hfx_dim_of(g, all, 2), hfx_const_i64(g, span)), *out = NULL;
    hfx_dim tap_dims[3] = {hfx_dim_const(1), hfx_dim_const(C), hfx_dim_const(1)};
    for (int64_t k = 0; k < K; k++) { /* tap k reads inputs k·dilation .. k·dilation + S − 1 */
        int64_t from = k * dilation;
        hfx_value *at = hfx_range(g, hfx_const_i64(g, from), op(g, HFX_OP_ADD, len, hfx_const_i64(g, from)),
                                  hfx_const_i64(g, 1), seq);
        hfx_value *tap = hfx_reshape(g, hfx_const_slice(g, weight, 2, k, 1), 3, tap_dims);
        hfx_value *term = op(g, HFX_OP_MUL, hfx_gather(g, all, at, 2), tap);
        out = out ? op(g, HFX_OP_ADD, out, term) : term;
    }
    return bias ? op(g, HFX_OP_ADD, out, hfx_reshape(g, bias, 3, tap_dims)) : out;
}

/* x [B,groups,...] as `heads` heads see it, [B,heads,...]: head h reads group h / (heads / groups)
 * (transformers' repeat_interleave). */
static hfx_value *spread_groups(hfx_graph *g, hfx_value *x, int64_t groups, int64_t heads) {
    if (groups == heads) return x;
    int64_t *group_of = malloc((size_t)heads * sizeof *group_of), r = heads / groups;
    if (!group_of) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    for (int64_t h = 0; h < heads; h++) group_of[h] = h / r;
    hfx_value *index = hfx_const_bytes(g, HFX_DTYPE_I64, 1, &heads, group_of); /* copied */
    free(group_of);
    return hfx_gather(g, x, index, 1);
}

/* B or C [B,S,groups·state] as each head sees it, [B,heads,S,state]. */
static hfx_value *per_head(hfx_graph *g, const hfx_mamba2_cfg *m, hfx_value *x) {
    hfx_dim b = x->dims[0], s = x->dims[1];
    x = hfx_reshape(g, x, 4, (hfx_dim[]){b, s, hfx_dim_const(m->groups), hfx_dim_const(m->state)});
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 1, 3}); /* [B,G,S,N] */
    return spread_groups(g, x, m->groups, m->heads);
}

/* transformers' MambaRMSNormGated: y·silu(gate) in f32, normalized over each of the groups'
 * inner / groups channels, times the weight; y and gate [B,S,inner], y f32 → f32. Falcon-H1
 * normalizes first (norm_first: the gate after the weight), or has no norm (y·silu(gate)). */
static hfx_value *gated_norm(hfx_graph *g, hfx_weights *w, const hfx_mamba2_cfg *m, const char *prefix, hfx_value *y,
                             hfx_value *gate) {
    hfx_value *silu = hfx_activate(g, HFX_ACT_SILU, hfx_cast(g, gate, HFX_DTYPE_F32));
    if (!m->norm) return op(g, HFX_OP_MUL, y, silu);
    hfx_value *weight = hfx_weight(w, 1, &m->inner, "%s.norm.weight", prefix);
    hfx_dim b = y->dims[0], s = y->dims[1];
    if (!m->norm_first) y = op(g, HFX_OP_MUL, y, silu);
    hfx_value *grouped = hfx_reshape(g, y, 4, (hfx_dim[]){b, s, hfx_dim_const(m->groups),
                                                          hfx_dim_const(m->inner / m->groups)});
    int64_t last = -1;
    hfx_value *var = hfx_reduce(g, HFX_OP_REDUCE_MEAN, op(g, HFX_OP_MUL, grouped, grouped), 1, &last);
    hfx_value *inv = hfx_op1(g, HFX_OP_RECIPROCAL, hfx_op1(g, HFX_OP_SQRT, op(g, HFX_OP_ADD, var, f32(g, m->eps))));
    y = hfx_reshape(g, op(g, HFX_OP_MUL, grouped, inv), 3, (hfx_dim[]){b, s, hfx_dim_const(m->inner)});
    y = op(g, HFX_OP_MUL, y, hfx_cast(g, weight, HFX_DTYPE_F32));
    return m->norm_first ? op(g, HFX_OP_MUL, y, silu) : y;
}

/* in_proj's output [B,S,proj] times Falcon-H1's per-section multipliers (gate, x, B, C, dt): one
 * constant vector, as transformers' mup_vector; unchanged when every multiplier is 1. */
static hfx_value *scale_sections(hfx_graph *g, const hfx_mamba2_cfg *m, hfx_value *zx) {
    bool any = false;
    for (int s = 0; s < 5; s++) any |= m->section_mult[s] != 1.0;
    if (!any || g->failed) return zx; /* (a failed build: in_proj's width may not be real) */
    int64_t GN = m->groups * m->state, ends[5] = {m->inner, 2 * m->inner, 2 * m->inner + GN, 2 * m->inner + 2 * GN,
                                                  2 * m->inner + 2 * GN + m->heads};
    float *v = malloc((size_t)ends[4] * sizeof *v);
    if (!v) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return zx;
    }
    for (int64_t j = 0, s = 0; j < ends[4]; j++) {
        while (j >= ends[s]) s++;
        v[j] = (float)m->section_mult[s];
    }
    hfx_value *mult = hfx_cast(g, hfx_const_bytes(g, HFX_DTYPE_F32, 1, &ends[4], v), zx->dtype); /* copied */
    free(v);
    return op(g, HFX_OP_MUL, zx, mult);
}

/* The [S,S] masks over a call's positions t (rows) and s (columns), S being x's last axis. */
typedef struct triangle {
    hfx_value *incl;     /* t ≥ s */
    hfx_value *strict;   /* t > s */
    hfx_value *eye;      /* t = s */
    hfx_value *row, *col; /* [S,1] and [1,S] i64: t and s */
} triangle;

static triangle triangles(hfx_graph *g, hfx_value *x) {
    hfx_dim seq = x->dims[x->rank - 1];
    hfx_value *pos = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, x, x->rank - 1), hfx_const_i64(g, 1), seq);
    hfx_value *row = hfx_unsqueeze(g, pos, 1), *col = hfx_unsqueeze(g, pos, 0);
    return (triangle){op(g, HFX_OP_GREATER_EQUAL, row, col), op(g, HFX_OP_GREATER, row, col),
                      op(g, HFX_OP_EQUAL, row, col), row, col};
}

/* seg [..., S, S]: seg[t,s] = Σ_{s<k≤t} x_k over x [..., S] (axis: x's last), a cumulative sum of
 * masked copies (transformers' segment_sum: never the difference of two long sums). */
static hfx_value *segment_sum(hfx_graph *g, hfx_value *x, int axis, const triangle *t) {
    hfx_value *spread = hfx_where(g, t->strict, hfx_unsqueeze(g, x, -1), f32(g, 0.0));
    return hfx_cumsum(g, spread, axis);
}

/* The conv part shared by the two mixers: x [B,S,C] after the state → act(conv) [B,S,C]; the state
 * [B,C,K−1] (s->conv, or zeros) and the next one (s->conv_next). */
/* The depthwise causal convolution over all [B,C,S+K-1] (the window with its past), its weight `conv` [C,1,K] (+ bias),
 * or (OLMo-Hybrid's checkpoints) q_conv1d, k_conv1d and v_conv1d over consecutive channels, whatever their split
 * (transformers concatenates them on load): each channel its own filter, so the parts convolve apart. */
static hfx_value *depthwise(hfx_graph *g, hfx_weights *w, const char *prefix, const char *conv, hfx_value *all,
                            int64_t C, int64_t K, bool bias) {
    static const char *const parts[3] = {"q_conv1d", "k_conv1d", "v_conv1d"};
    char name[320];
    snprintf(name, sizeof name, "%s.%s.weight", prefix, parts[0]);
    if (!hfx_weight_exists(w, name))
        return hfx_causal_conv(g, all, hfx_weight(w, 3, (int64_t[]){C, 1, K}, "%s.%s.weight", prefix, conv),
                               bias ? hfx_weight(w, 1, &C, "%s.%s.bias", prefix, conv) : NULL);
    hfx_value *ys[3];
    int64_t at = 0;
    for (int j = 0; j < 3; j++) {
        snprintf(name, sizeof name, "%s.%s.weight", prefix, parts[j]);
        int64_t n = j < 2 ? hfx_weight_dim(w, name, 0) : C - at;
        if (n < 1 || n > C - at) n = C - at; /* (a mismatch is the read's to report) */
        ys[j] = hfx_causal_conv(g, hfx_slice(g, all, 1, at, at + n), hfx_weight(w, 3, (int64_t[]){n, 1, K}, "%s", name),
                                NULL);
        at += n;
    }
    return hfx_concat(g, 3, ys, 1);
}

static hfx_value *conv_step(hfx_graph *g, hfx_weights *w, const char *prefix, hfx_value *x, int64_t C, int64_t K,
                            bool bias, hfx_activation act, hfx_ssm_state *s) {
    hfx_value *xt = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1});                          /* [B,C,S] */
    hfx_value *all = hfx_conv_window(g, s->conv, xt, K, s->whole_window ? K : K - 1, s->keep ? &s->conv_next : NULL);
    hfx_value *conv = depthwise(g, w, prefix, "conv1d", all, C, K, bias);
    return hfx_activate(g, act, hfx_transpose(g, conv, 3, (int64_t[]){0, 2, 1}));
}

/* The SSD scan of one chunk: the whole call, S positions, from the state h0 (NULL: zeros).
 *   xdt = x·dt [B,H,S,P], adt = dt·A [B,H,S], Bh and Ch [B,H,S,N], all f32.
 *   y_t = Σ_{s≤t} (C_t·B_s)·exp(Σ_{s<k≤t} dt_k A)·dt_s x_s + (C_t·h0)·exp(Σ_{k≤t} dt_k A)
 *   state = Σ_s exp(Σ_{s<k<S} dt_k A)·dt_s x_s ⊗ B_s + exp(Σ_k dt_k A)·h0
 * The decay sums are transformers' segment_sum: a cumulative sum of masked copies, never a
 * difference of two long sums, so every exponent is as exact as the chunked kernel's. */
static hfx_value *ssd_scan(hfx_graph *g, hfx_value *xdt, hfx_value *adt, hfx_value *Bh, hfx_value *Ch, hfx_value *h0,
                           hfx_value **state) {
    triangle t = triangles(g, adt);
    hfx_value *seg = segment_sum(g, adt, 2, &t);                                            /* [B,H,S,S] */
    hfx_value *decay = hfx_where(g, t.incl, hfx_op1(g, HFX_OP_EXP, seg), f32(g, 0.0));
    hfx_value *scores = op(g, HFX_OP_MUL, op(g, HFX_OP_MATMUL, Ch, hfx_transpose(g, Bh, 4, (int64_t[]){0, 1, 3, 2})),
                           decay);                                                          /* [B,H,S,S] */
    hfx_value *y = op(g, HFX_OP_MATMUL, scores, xdt);                                       /* [B,H,S,P] */
    hfx_value *since = h0 ? hfx_op1(g, HFX_OP_EXP, hfx_cumsum(g, adt, 2)) : NULL;            /* [B,H,S] */
    if (h0) {
        hfx_value *from_h0 = op(g, HFX_OP_MATMUL, Ch, hfx_transpose(g, h0, 4, (int64_t[]){0, 1, 3, 2}));
        y = op(g, HFX_OP_ADD, y, op(g, HFX_OP_MUL, from_h0, hfx_unsqueeze(g, since, -1)));
    }
    if (!state) return y; /* the state after the call is not wanted */
    /* the state after the last position: its row of the decays, [B,H,1,S] → [B,H,S,1] */
    hfx_value *to_end = hfx_transpose(g, hfx_slice(g, decay, 2, -1, INT64_MAX), 4, (int64_t[]){0, 1, 3, 2});
    hfx_value *next = op(g, HFX_OP_MATMUL, hfx_transpose(g, xdt, 4, (int64_t[]){0, 1, 3, 2}),
                         op(g, HFX_OP_MUL, Bh, to_end));                                     /* [B,H,P,N] */
    if (h0) {
        hfx_value *whole = hfx_unsqueeze(g, hfx_slice(g, since, 2, -1, INT64_MAX), -1);    /* [B,H,1,1] */
        next = op(g, HFX_OP_ADD, next, op(g, HFX_OP_MUL, h0, whole));
    }
    *state = next;
    return y;
}

/* A Mamba mixer's dt, B or C [B,S,n] normed as its config says: x·rsqrt(mean(x²) + ε) over the last axis, in f32,
 * cast back (FalconMamba), then times <prefix>.<name>.weight [n] (Jamba); x itself without norms. */
static hfx_value *dt_bc_norm(hfx_graph *g, hfx_weights *w, const hfx_mamba1_cfg *m, const char *prefix, const char *name,
                             hfx_value *x) {
    if (m->dt_bc_norm == HFX_DT_BC_NONE) return x;
    int64_t n = x->dims[2].c;
    hfx_value *y = hfx_rms_plain(g, x, m->dt_bc_eps);
    return m->dt_bc_norm == HFX_DT_BC_WEIGHTED ? op(g, HFX_OP_MUL, y, hfx_weight(w, 1, &n, "%s.%s.weight", prefix, name)) : y;
}

hfx_value *hfx_mamba1_mixer(hfx_graph *g, hfx_weights *w, const hfx_mamba1_cfg *m, const char *prefix,
                            hfx_value *h, hfx_value *real, hfx_ssm_state *s) {
    int64_t H = h->dims[2].c, I = m->inner, N = m->state, R = m->dt_rank, I2 = 2 * I, XP = R + 2 * N;
    hfx_dtype dt = h->dtype;
    if (real) h = op(g, HFX_OP_MUL, h, real);
    hfx_value *xz = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){I2, H}, "%s.in_proj.weight", prefix),
                               m->proj_bias ? hfx_weight(w, 1, &I2, "%s.in_proj.bias", prefix) : NULL);
    hfx_value *gate = hfx_slice(g, xz, 2, I, I2);
    hfx_value *x = conv_step(g, w, prefix, hfx_slice(g, xz, 2, 0, I), I, m->kernel, m->conv_bias, m->act, s);
    if (real) x = op(g, HFX_OP_MUL, x, real);                                              /* [B,S,I] */
    hfx_value *tbc = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){XP, I}, "%s.x_proj.weight", prefix), NULL);
    hfx_value *step = hfx_linear(g, dt_bc_norm(g, w, m, prefix, "dt_layernorm", hfx_slice(g, tbc, 2, 0, R)),
                                 hfx_weight(w, 2, (int64_t[]){I, R}, "%s.dt_proj.weight", prefix), NULL);
    step = hfx_transpose(g, hfx_cast(g, step, HFX_DTYPE_F32), 3, (int64_t[]){0, 2, 1}); /* [B,I,S] */
    hfx_value *bias = hfx_cast(g, hfx_weight(w, 1, &I, "%s.dt_proj.bias", prefix), HFX_DTYPE_F32);
    step = hfx_softplus(g, op(g, HFX_OP_ADD, step, hfx_unsqueeze(g, bias, -1)));
    /* B and C [B,S,N] → [B,1,N,S] (shared by the channels); A [I,N] → [I,N,1,1] */
    hfx_value *Bm = hfx_unsqueeze(g, hfx_transpose(g, hfx_cast(g, dt_bc_norm(g, w, m, prefix, "b_layernorm", hfx_slice(g, tbc, 2, R, R + N)),
                                                               HFX_DTYPE_F32), 3, (int64_t[]){0, 2, 1}), 1);
    hfx_value *Cm = hfx_unsqueeze(g, hfx_transpose(g, hfx_cast(g, dt_bc_norm(g, w, m, prefix, "c_layernorm", hfx_slice(g, tbc, 2, R + N, XP)),
                                                               HFX_DTYPE_F32), 3, (int64_t[]){0, 2, 1}), 1);
    hfx_value *A = hfx_op1(g, HFX_OP_NEG, hfx_op1(g, HFX_OP_EXP, hfx_cast(g, hfx_weight(w, 2, (int64_t[]){I, N},
                                                                                   "%s.A_log", prefix), HFX_DTYPE_F32)));
    hfx_value *A4 = hfx_unsqueeze(g, hfx_unsqueeze(g, A, -1), -1);                        /* [I,N,1,1] */
    hfx_value *xf = hfx_transpose(g, hfx_cast(g, x, HFX_DTYPE_F32), 3, (int64_t[]){0, 2, 1}); /* [B,I,S] */
    hfx_value *u = op(g, HFX_OP_MUL, step, xf);                                            /* dt·x [B,I,S] */

    /* y[d,t] = Σ_{s≤t} Σ_n C[n,t]·B[n,s]·exp(A[d,n]·Σ_{s<k≤t} dt[d,k])·u[d,s] */
    triangle t = triangles(g, step);
    hfx_value *seg = hfx_unsqueeze(g, segment_sum(g, step, 2, &t), 2);                     /* [B,I,1,S,S] */
    hfx_value *decay = hfx_where(g, t.incl, hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_MUL, A4, seg)), f32(g, 0.0)); /* [B,I,N,S,S] */
    hfx_value *cb = op(g, HFX_OP_MUL, hfx_unsqueeze(g, Cm, -1), hfx_unsqueeze(g, Bm, -2));  /* [B,1,N,S,S] */
    int64_t n_axis = 2;
    hfx_value *weights = hfx_reduce(g, HFX_OP_REDUCE_SUM, op(g, HFX_OP_MUL, decay, cb), 1, &n_axis); /* [B,I,1,S,S] */
    hfx_value *y = op(g, HFX_OP_MATMUL, hfx_reshape(g, weights, 4, (hfx_dim[]){h->dims[0], hfx_dim_const(I), h->dims[1],
                                                                               h->dims[1]}),
                      hfx_unsqueeze(g, u, -1));                                              /* [B,I,S,1] */
    hfx_value *next = NULL;
    if (s->keep) { /* the state after the last position: its row of the decays times B·u, summed over s */
        hfx_value *last = hfx_slice(g, decay, 3, -1, INT64_MAX);                           /* [B,I,N,1,S] */
        hfx_value *bu = op(g, HFX_OP_MUL, hfx_unsqueeze(g, Bm, -2), hfx_unsqueeze(g, hfx_unsqueeze(g, u, 2), 2));
        int64_t s_axes[2] = {3, 4};
        next = hfx_reduce(g, HFX_OP_REDUCE_SUM, op(g, HFX_OP_MUL, last, bu), 2, s_axes);  /* [B,I,N,1,1] */
        next = hfx_reshape(g, next, 3, (hfx_dim[]){h->dims[0], hfx_dim_const(I), hfx_dim_const(N)});
    }
    y = hfx_reshape(g, y, 3, (hfx_dim[]){h->dims[0], hfx_dim_const(I), h->dims[1]});     /* [B,I,S] */
    if (s->ssm) { /* + Σ_n C[n,t]·exp(A[d,n]·Σ_{k≤t} dt[d,k])·h0[d,n]; the state decays by the whole call */
        hfx_value *since = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_MUL, hfx_unsqueeze(g, A, -1),
                                                     hfx_unsqueeze(g, hfx_cumsum(g, step, 2), 2))); /* [B,I,N,S] */
        hfx_value *h0 = hfx_unsqueeze(g, s->ssm, -1);                                       /* [B,I,N,1] */
        hfx_value *read = op(g, HFX_OP_MUL, op(g, HFX_OP_MUL, since, h0), hfx_reshape(g, Cm, 4, (hfx_dim[]){
                                 h->dims[0], hfx_dim_const(1), hfx_dim_const(N), h->dims[1]}));
        int64_t n2 = 2;
        y = op(g, HFX_OP_ADD, y, hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, read, 1, &n2), 3,
                                             (hfx_dim[]){h->dims[0], hfx_dim_const(I), h->dims[1]}));
        hfx_value *whole = hfx_reshape(g, hfx_slice(g, since, 3, -1, INT64_MAX), 3,
                                       (hfx_dim[]){h->dims[0], hfx_dim_const(I), hfx_dim_const(N)});
        if (next) next = op(g, HFX_OP_ADD, next, op(g, HFX_OP_MUL, whole, s->ssm));
    }
    s->ssm_next = next;
    hfx_value *D = hfx_unsqueeze(g, hfx_cast(g, hfx_weight(w, 1, &I, "%s.D", prefix), HFX_DTYPE_F32), -1);
    y = op(g, HFX_OP_ADD, y, op(g, HFX_OP_MUL, xf, D));
    y = hfx_transpose(g, y, 3, (int64_t[]){0, 2, 1});                                      /* [B,S,I] */
    y = op(g, HFX_OP_MUL, y, hfx_activate(g, HFX_ACT_SILU, hfx_cast(g, gate, HFX_DTYPE_F32)));
    return hfx_linear(g, hfx_cast(g, y, dt), hfx_weight(w, 2, (int64_t[]){H, I}, "%s.out_proj.weight", prefix),
                      m->proj_bias ? hfx_weight(w, 1, &H, "%s.out_proj.bias", prefix) : NULL);
}

hfx_value *hfx_mamba2_mixer(hfx_graph *g, hfx_weights *w, const hfx_mamba2_cfg *m, const char *prefix,
                            hfx_value *h, hfx_value *real, hfx_ssm_state *s) {
    int64_t H = h->dims[2].c, I = m->inner, CD = m->conv_dim, NH = m->heads, P = m->head_dim;
    int64_t GN = m->groups * m->state, K = m->kernel, proj = I + CD + NH;
    hfx_dim b = h->dims[0], seq = h->dims[1];
    hfx_dtype dt = h->dtype;
    if (real) h = op(g, HFX_OP_MUL, h, real);
    if (m->in_mult != 1.0) h = op(g, HFX_OP_MUL, h, hfx_const_scalar(g, dt, m->in_mult));
    hfx_value *zx = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){proj, H}, "%s.in_proj.weight", prefix),
                               m->proj_bias ? hfx_weight(w, 1, &proj, "%s.in_proj.bias", prefix) : NULL);
    zx = scale_sections(g, m, zx);
    hfx_value *gate = hfx_slice(g, zx, 2, 0, I), *xbc = hfx_slice(g, zx, 2, I, I + CD);
    hfx_value *dt_raw = hfx_slice(g, zx, 2, I + CD, proj);                                 /* [B,S,NH] */

    /* the convolution over the state and this call's x, B and C */
    xbc = conv_step(g, w, prefix, xbc, CD, K, m->conv_bias, m->act, s);                    /* [B,S,CD] */
    if (real) xbc = op(g, HFX_OP_MUL, xbc, real);
    xbc = hfx_cast(g, xbc, HFX_DTYPE_F32); /* the scan runs in f32, as transformers' does */

    hfx_value *x = hfx_reshape(g, hfx_slice(g, xbc, 2, 0, I), 4, (hfx_dim[]){b, seq, hfx_dim_const(NH), hfx_dim_const(P)});
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 1, 3});                                   /* [B,NH,S,P] */
    hfx_value *Bh = per_head(g, m, hfx_slice(g, xbc, 2, I, I + GN));
    hfx_value *Ch = per_head(g, m, hfx_slice(g, xbc, 2, I + GN, CD));
    hfx_value *dt_bias = hfx_cast(g, hfx_weight(w, 1, &NH, "%s.dt_bias", prefix), HFX_DTYPE_F32);
    hfx_value *step = hfx_softplus(g, op(g, HFX_OP_ADD, hfx_cast(g, dt_raw, HFX_DTYPE_F32), dt_bias));
    if (m->dt_min > 0) step = op(g, HFX_OP_MAX, step, f32(g, m->dt_min));
    if (isfinite(m->dt_max)) step = op(g, HFX_OP_MIN, step, f32(g, m->dt_max));
    step = hfx_transpose(g, step, 3, (int64_t[]){0, 2, 1});                                /* [B,NH,S] */
    hfx_value *A = hfx_op1(g, HFX_OP_NEG, hfx_op1(g, HFX_OP_EXP, hfx_cast(g, hfx_weight(w, 1, &NH, "%s.A_log", prefix),
                                                                          HFX_DTYPE_F32)));
    hfx_value *y = ssd_scan(g, op(g, HFX_OP_MUL, x, hfx_unsqueeze(g, step, -1)), op(g, HFX_OP_MUL, step, hfx_unsqueeze(g, A, -1)),
                            Bh, Ch, s->ssm, s->keep ? &s->ssm_next : NULL);
    hfx_value *D = hfx_cast(g, hfx_weight(w, 1, &NH, "%s.D", prefix), HFX_DTYPE_F32);
    D = hfx_reshape(g, D, 3, (hfx_dim[]){hfx_dim_const(NH), hfx_dim_const(1), hfx_dim_const(1)});
    y = op(g, HFX_OP_ADD, y, op(g, HFX_OP_MUL, x, D));
    y = hfx_reshape(g, hfx_transpose(g, y, 4, (int64_t[]){0, 2, 1, 3}), 3, (hfx_dim[]){b, seq, hfx_dim_const(I)});
    y = gated_norm(g, w, m, prefix, y, gate);
    return hfx_linear(g, hfx_cast(g, y, dt), hfx_weight(w, 2, (int64_t[]){H, I}, "%s.out_proj.weight", prefix),
                      m->out_bias ? hfx_weight(w, 1, &H, "%s.out_proj.bias", prefix) : NULL);
}

/* ---- lightning attention ---- */

/* −slope [1,heads,1] f32: the checkpoint's slope_rate buffer where it has one (transformers loads it; the decays
 * derived from it, query/key/diagonal_decay, are what the scan computes), else as transformers' get_slope_rate rounds
 * it: base^(h+1) in f32, times the layer's factor in f32. */
static hfx_value *lightning_decay(hfx_graph *g, hfx_weights *w, const hfx_lightning_cfg *m, const char *prefix,
                                  int64_t layer) {
    int64_t NH = m->heads;
    char name[256];
    static const char *const derived[] = {"query_decay", "key_decay", "diagonal_decay"};
    for (size_t k = 0; k < sizeof derived / sizeof derived[0]; k++) {
        snprintf(name, sizeof name, "%s.%s", prefix, derived[k]);
        hfx_weight_ignore(w, name);
    }
    snprintf(name, sizeof name, "%s.slope_rate", prefix);
    if (hfx_weight_exists(w, name))
        return hfx_op1(g, HFX_OP_NEG, hfx_cast(g, hfx_reshape(g, hfx_weight(w, 3, (int64_t[]){NH, 1, 1}, "%s", name), 3,
                                                               (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(NH),
                                                                           hfx_dim_const(1)}), HFX_DTYPE_F32));
    float *rate = malloc((size_t)NH * sizeof *rate);
    if (!rate) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return f32(g, 0.0);
    }
    double base = 1.0 / pow(2.0, 8.0 / (double)NH);
    float factor = (float)(1.0 - (double)layer / ((double)m->layers - 1.0 + 1e-5) + 1e-5);
    for (int64_t j = 0; j < NH; j++) rate[j] = -((float)pow(base, (double)(j + 1)) * factor);
    hfx_value *A = hfx_const_bytes(g, HFX_DTYPE_F32, 3, (int64_t[]){1, NH, 1}, rate); /* copied */
    free(rate);
    return A;
}

hfx_value *hfx_lightning_mixer(hfx_graph *g, hfx_weights *w, const hfx_lightning_cfg *m, const char *prefix,
                               hfx_value *h, int64_t layer, hfx_value *real, hfx_ssm_state *s) {
    int64_t H = h->dims[2].c, NH = m->heads, D = m->head_dim, W = NH * D;
    hfx_dim b = h->dims[0], seq = h->dims[1];
    hfx_value *qkv = hfx_activate(g, m->act, hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){3 * W, H}, "%s.qkv_proj.weight",
                                                                         prefix), NULL));
    if (real) qkv = op(g, HFX_OP_MUL, qkv, real);
    qkv = hfx_reshape(g, qkv, 4, (hfx_dim[]){b, seq, hfx_dim_const(NH), hfx_dim_const(3 * D)});
    qkv = hfx_cast(g, hfx_transpose(g, qkv, 4, (int64_t[]){0, 2, 1, 3}), HFX_DTYPE_F32); /* [B,NH,S,3D] */
    hfx_value *q = hfx_slice(g, qkv, 3, 0, D), *k = hfx_slice(g, qkv, 3, D, 2 * D), *v = hfx_slice(g, qkv, 3, 2 * D, 3 * D);
    hfx_value *A = lightning_decay(g, w, m, prefix, layer); /* [1,NH,1] */
    hfx_value *adt = hfx_expand(g, A, hfx_slice(g, hfx_shape_of(g, q), 0, 0, 3), 3, q->dims); /* [B,NH,S]: dt = 1 */
    hfx_value *y = ssd_scan(g, v, adt, k, q, s->ssm, s->keep ? &s->ssm_next : NULL);      /* [B,NH,S,D] */
    y = hfx_reshape(g, hfx_transpose(g, y, 4, (int64_t[]){0, 2, 1, 3}), 3, (hfx_dim[]){b, seq, hfx_dim_const(W)});
    y = hfx_rms_norm(g, hfx_cast(g, y, h->dtype), hfx_weight(w, 1, &W, "%s.norm.weight", prefix), 1e-6, 0);
    hfx_value *gate = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){W, H}, "%s.output_gate.weight", prefix), NULL);
    y = op(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_SIGMOID, gate), y);
    return hfx_linear(g, y, hfx_weight(w, 2, (int64_t[]){H, W}, "%s.out_proj.weight", prefix), NULL);
}

/* ---- the gated delta-net ---- */

/* x [B,S,groups·width] viewed as [B,S,groups,width]: [start, start + len) of every group,
 * [B,S,groups·len] (Qwen3-Next's projections are laid out per key head). */
static hfx_value *group_part(hfx_graph *g, hfx_value *x, int64_t groups, int64_t width, int64_t start, int64_t len) {
    hfx_dim b = x->dims[0], s = x->dims[1];
    x = hfx_reshape(g, x, 4, (hfx_dim[]){b, s, hfx_dim_const(groups), hfx_dim_const(width)});
    return hfx_reshape(g, hfx_slice(g, x, 3, start, start + len), 3, (hfx_dim[]){b, s, hfx_dim_const(groups * len)});
}

/* x [B,S,heads·d] → [B,heads,S,d] in f32 */
static hfx_value *heads_first(hfx_graph *g, hfx_value *x, int64_t heads, int64_t d) {
    x = hfx_reshape(g, x, 4, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(heads), hfx_dim_const(d)});
    return hfx_transpose(g, hfx_cast(g, x, HFX_DTYPE_F32), 4, (int64_t[]){0, 2, 1, 3});
}

/* x·rsqrt(Σ x² + 1e-6) over the last axis (transformers' l2norm, as the FLA kernels compute it) */
static hfx_value *l2norm(hfx_graph *g, hfx_value *x) {
    int64_t last = -1;
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, op(g, HFX_OP_MUL, x, x), 1, &last);
    return op(g, HFX_OP_MUL, x, hfx_op1(g, HFX_OP_RECIPROCAL, hfx_op1(g, HFX_OP_SQRT, op(g, HFX_OP_ADD, sum, f32(g, 1e-6)))));
}

static hfx_value *swap_last(hfx_graph *g, hfx_value *x) { return hfx_transpose(g, x, 4, (int64_t[]){0, 1, 3, 2}); }

/* Σ_d a[t,d]·b[s,d]·D[t,s] [B,H,S,S] for a, b [B,H,S,DK]: D one decay per head [B,H,S,S], or (Kimi's) one per key
 * channel [B,H,S,S,DK], each channel's product decayed apart (as transformers' chunk_kimi_delta_attention does). */
static hfx_value *decayed_products(hfx_graph *g, hfx_value *a, hfx_value *b, hfx_value *decay) {
    if (decay->rank == 4) return op(g, HFX_OP_MUL, op(g, HFX_OP_MATMUL, a, swap_last(g, b)), decay);
    int64_t last = -1;
    hfx_value *each = op(g, HFX_OP_MUL, op(g, HFX_OP_MUL, hfx_unsqueeze(g, a, 3), hfx_unsqueeze(g, b, 2)), decay);
    return hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, each, 1, &last), 4,
                       (hfx_dim[]){a->dims[0], a->dims[1], a->dims[2], b->dims[2]}); /* (the summed axis dropped) */
}

/* The gated delta rule over one call as one chunk, per value head, all f32, from the state h0
 * [B,H,DK,DV] (NULL: zeros): q, k [B,H,S,DK] (normalized, q scaled), v [B,H,S,DV], beta [B,H,S] and the
 * log decays gl [B,H,S] (one per head) or [B,H,S,DK] (one per key channel: the products below taken per
 * channel, the decays of h0 per row). With D[t,s] = exp(Σ_{s<j≤t} gl_j) (t ≥ s) and T = I + N', N' the
 * strictly lower part of (β k kᵀ)⊙D, transformers' chunk computes
 *   u = T⁻¹(β v), w = T⁻¹(β k ⊙ e^{G}), v' = u − w·h0   (G the cumulative log decay)
 *   o = (q ⊙ e^{G})·h0 + ((q kᵀ)⊙D)·v'
 *   state = e^{G_last}·h0 + (k ⊙ e^{G_last − G})ᵀ·v'
 * T⁻¹ by recursive block inversion (unit_triangle_inverse), exact once 2^factors ≥ S. */
/* (I − N)⁻¹ [..,S,S] of a strictly lower N [..,S,S], by recursive block inversion: X starts as I (the inverses of
 * 1 × 1 blocks of a unit triangle); each round joins pairs of b × b diagonal blocks into 2b × 2b ones,
 * [[A⁻¹, 0], [B⁻¹·C·A⁻¹, B⁻¹]] for the block [[A, 0], [−C, B]] — X ← X + X·(N ⊙ M_b)·X, M_b the entries in the
 * same 2b block and not the same b block. Exact once 2^rounds ≥ S, and stable as substitution is: the product
 * (I + N)(I + N²)(I + N⁴)… is exact too, but near-parallel keys (an image's patches, repeated text) make N's powers
 * grow past float32 before they vanish, 1e7 from the inverse at 64 tokens where this stays at 1e-7. */
static hfx_value *unit_triangle_inverse(hfx_graph *g, const triangle *t, hfx_value *n, int rounds) {
    hfx_value *inv = hfx_cast(g, t->eye, HFX_DTYPE_F32), *zero = f32(g, 0.0);
    for (int f = 0; f < rounds; f++) {
        hfx_value *b = hfx_const_i64(g, (int64_t)1 << f), *b2 = hfx_const_i64(g, (int64_t)2 << f);
        hfx_value *joined = op(g, HFX_OP_EQUAL, op(g, HFX_OP_DIV, t->row, b2), op(g, HFX_OP_DIV, t->col, b2));
        hfx_value *apart = hfx_op1(g, HFX_OP_NOT, op(g, HFX_OP_EQUAL, op(g, HFX_OP_DIV, t->row, b),
                                                     op(g, HFX_OP_DIV, t->col, b)));
        hfx_value *between = hfx_where(g, op(g, HFX_OP_AND, joined, apart), n, zero);
        inv = op(g, HFX_OP_ADD, inv, op(g, HFX_OP_MATMUL, op(g, HFX_OP_MATMUL, inv, between), inv));
    }
    return inv;
}

static hfx_value *delta_scan(hfx_graph *g, int factors, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *beta,
                             hfx_value *gl, hfx_value *h0, hfx_value **state) {
    bool channel = gl->rank == 4;
    triangle t = triangles(g, beta);
    hfx_value *seg = NULL, *decay, *G = channel ? hfx_cumsum(g, gl, 2) : NULL; /* (per channel: G_t − G_s, as Kimi's) */
    if (channel) {
        hfx_value *diff = op(g, HFX_OP_SUB, hfx_unsqueeze(g, G, 3), hfx_unsqueeze(g, G, 2)); /* [B,H,S,S,DK] */
        decay = hfx_where(g, hfx_unsqueeze(g, t.incl, -1), hfx_op1(g, HFX_OP_EXP, diff), f32(g, 0.0));
    } else {
        seg = segment_sum(g, gl, 2, &t);                                                    /* [B,H,S,S] */
        decay = hfx_where(g, t.incl, hfx_op1(g, HFX_OP_EXP, seg), f32(g, 0.0));
    }
    hfx_value *b4 = hfx_unsqueeze(g, beta, -1);
    hfx_value *kb = op(g, HFX_OP_MUL, k, b4), *vb = op(g, HFX_OP_MUL, v, b4);
    hfx_value *n = hfx_where(g, t.strict, hfx_op1(g, HFX_OP_NEG, decayed_products(g, kb, k, decay)),
                             f32(g, 0.0));                                                  /* N [B,H,S,S] */
    hfx_value *inv = unit_triangle_inverse(g, &t, n, factors);                              /* T⁻¹ [B,H,S,S] */
    hfx_value *fresh = op(g, HFX_OP_MATMUL, inv, vb);                                       /* v' [B,H,S,DV] */
    hfx_value *since = !h0 ? NULL : channel ? hfx_op1(g, HFX_OP_EXP, G)                    /* [B,H,S,DK] */
                                            : hfx_unsqueeze(g, hfx_op1(g, HFX_OP_EXP, hfx_cumsum(g, gl, 2)), -1); /* [B,H,S,1] */
    if (h0) fresh = op(g, HFX_OP_SUB, fresh, op(g, HFX_OP_MATMUL, op(g, HFX_OP_MATMUL, inv, op(g, HFX_OP_MUL, kb, since)), h0));
    hfx_value *scores = hfx_where(g, t.incl, decayed_products(g, q, k, decay), f32(g, 0.0));
    hfx_value *o = op(g, HFX_OP_MATMUL, scores, fresh);                                     /* [B,H,S,DV] */
    if (h0) o = op(g, HFX_OP_ADD, o, op(g, HFX_OP_MATMUL, op(g, HFX_OP_MUL, q, since), h0));
    if (!state) return o;
    hfx_value *to_end = channel ? hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, hfx_slice(g, G, 2, -1, INT64_MAX), G)) /* [B,H,S,DK] */
                                : swap_last(g, hfx_op1(g, HFX_OP_EXP, hfx_slice(g, seg, 2, -1, INT64_MAX))); /* [B,H,S,1] */
    hfx_value *next = op(g, HFX_OP_MATMUL, swap_last(g, op(g, HFX_OP_MUL, k, to_end)), fresh);   /* [B,H,DK,DV] */
    hfx_value *whole = h0 ? hfx_slice(g, since, 2, -1, INT64_MAX) : NULL; /* the call's whole decay: [B,H,1,1|DK] */
    if (h0) next = op(g, HFX_OP_ADD, next, op(g, HFX_OP_MUL, h0, channel ? swap_last(g, whole) : whole));
    *state = next;
    return o;
}

/* The factors a call of `seq` tokens needs: fewer than the model's where the graph bounds its calls
 * (a one-token step needs one, I + N with N = 0; dynamic_shapes' maximum bounds a prompt). */
static int factors_for(const hfx_graph *g, hfx_dim seq, int model) {
    int64_t most = 0;
    if (hfx_dim_is_const(seq)) most = seq.c;
    else if (seq.n == 1 && seq.coef[0] == 1 && g->symbols[seq.sym[0]].max > 0 &&
             g->symbols[seq.sym[0]].max < INT64_MAX - seq.c)
        most = g->symbols[seq.sym[0]].max + seq.c;
    int f = 1;
    while (f < model && ((int64_t)1 << f) < most) f++;
    return most > 0 ? f : model;
}

/* x [B,S,H] through <prefix>.<first> [rank, H] then <prefix>.<second> [out, rank] (a low-rank projection). */
static hfx_value *low_rank(hfx_graph *g, hfx_weights *w, const char *prefix, const char *first, const char *second,
                           hfx_value *x, int64_t rank, int64_t out) {
    int64_t H = x->dims[2].c;
    hfx_value *r = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){rank, H}, "%s.%s.weight", prefix, first), NULL);
    return hfx_linear(g, r, hfx_weight(w, 2, (int64_t[]){out, rank}, "%s.%s.weight", prefix, second), NULL);
}

/* The log decays per value head [B,VH,S]: −exp(A_log)·softplus(a + dt_bias), a [B,S,VH]. */
static hfx_value *head_decays(hfx_graph *g, hfx_weights *w, const hfx_delta_cfg *m, const char *prefix, hfx_value *a) {
    int64_t VH = m->v_heads;
    hfx_value *A = hfx_op1(g, HFX_OP_EXP, hfx_cast(g, hfx_weight(w, 1, &VH, "%s.A_log", prefix), HFX_DTYPE_F32));
    hfx_value *dt_bias = hfx_cast(g, hfx_weight(w, 1, &VH, "%s.dt_bias", prefix), HFX_DTYPE_F32);
    hfx_value *gl = op(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_NEG, A), hfx_softplus(g, op(g, HFX_OP_ADD, hfx_cast(g, a, HFX_DTYPE_F32),
                                                                              dt_bias)));
    return hfx_transpose(g, gl, 3, (int64_t[]){0, 2, 1});
}

/* Kimi's log decays per key channel [B,VH,S,DK]: −exp(A_log_h)·softplus(x), or (decay_floor) floor·sigmoid(exp(A_log_h)·x),
 * x = a + dt_bias, a [B,S,VH·DK]; the forget gate's weights under `prefix`, A_log [1,1,VH,1] (Kimi's) or [VH] (full-rank
 * gates'). */
static hfx_value *channel_decays(hfx_graph *g, hfx_weights *w, const hfx_delta_cfg *m, const char *prefix, hfx_value *a) {
    int64_t VH = m->v_heads, DK = m->k_dim, KD = VH * DK;
    hfx_dim per_head[4] = {hfx_dim_const(1), hfx_dim_const(1), hfx_dim_const(VH), hfx_dim_const(1)};
    hfx_value *A = m->proj == HFX_DELTA_KDA_FULL_RANK ? hfx_reshape(g, hfx_weight(w, 1, &VH, "%s.A_log", prefix), 4, per_head)
                                                      : hfx_weight(w, 4, (int64_t[]){1, 1, VH, 1}, "%s.A_log", prefix);
    A = hfx_op1(g, HFX_OP_EXP, hfx_cast(g, A, HFX_DTYPE_F32));
    hfx_value *dt_bias = hfx_cast(g, hfx_weight(w, 1, &KD, "%s.dt_bias", prefix), HFX_DTYPE_F32);
    hfx_value *x = op(g, HFX_OP_ADD, hfx_cast(g, a, HFX_DTYPE_F32), dt_bias);
    x = hfx_reshape(g, x, 4, (hfx_dim[]){a->dims[0], a->dims[1], hfx_dim_const(VH), hfx_dim_const(DK)});
    hfx_value *gl = m->decay_floor ? op(g, HFX_OP_MUL, f32(g, m->decay_floor), hfx_op1(g, HFX_OP_SIGMOID, op(g, HFX_OP_MUL, A, x)))
                                   : op(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_NEG, A), hfx_softplus(g, x)); /* [B,S,VH,DK] */
    return hfx_transpose(g, gl, 4, (int64_t[]){0, 2, 1, 3});
}

hfx_value *hfx_delta_mixer(hfx_graph *g, hfx_weights *w, const hfx_delta_cfg *m, const char *prefix, const char *out,
                           hfx_value *h, hfx_value *real, hfx_ssm_state *s) {
    int64_t H = h->dims[2].c, KH = m->k_heads, VH = m->v_heads, DK = m->k_dim, DV = m->v_dim, r = VH / KH;
    int64_t KD = m->key_dim, VD = m->value_dim, CD = m->conv_dim;
    hfx_dim b = h->dims[0], seq = h->dims[1];
    hfx_dtype dt = h->dtype;
    if (real) h = op(g, HFX_OP_MUL, h, real);
    hfx_value *qkv, *z, *beta, *a; /* [B,S,CD], [B,S,VD], [B,S,VH], [B,S,VH] */
    char forget[192]; /* Kimi's forget gate: on the mixer as saved, or its forget_gate module as transformers names it */
    snprintf(forget, sizeof forget, "%s.forget_gate", prefix);
    char probe[224];
    snprintf(probe, sizeof probe, "%s.dt_bias", forget);
    if (!hfx_weight_exists(w, probe)) snprintf(forget, sizeof forget, "%s", prefix);
    const char *norm = "norm";
    if (m->proj == HFX_DELTA_GROUPED) { /* per key head: q, k, its r value heads' v, their z; then b and a of those heads */
        int64_t width = 2 * DK + 2 * r * DV;
        hfx_value *qkvz = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){KH * width, H}, "%s.in_proj_qkvz.weight", prefix),
                                     NULL);
        hfx_value *ba = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){2 * VH, H}, "%s.in_proj_ba.weight", prefix), NULL);
        hfx_value *parts[3] = {group_part(g, qkvz, KH, width, 0, DK), group_part(g, qkvz, KH, width, DK, DK),
                               group_part(g, qkvz, KH, width, 2 * DK, r * DV)};
        qkv = hfx_concat(g, 3, parts, 2);
        z = group_part(g, qkvz, KH, width, 2 * DK + r * DV, r * DV);
        beta = group_part(g, ba, KH, 2 * r, 0, r);
        a = group_part(g, ba, KH, 2 * r, r, r);
        out = "out_proj";
    } else if (m->proj != HFX_DELTA_SEPARATE) { /* each its own linear: q, k and v as in_proj_qkv's rows */
        bool kda = m->proj == HFX_DELTA_KDA, full = m->proj == HFX_DELTA_KDA_FULL_RANK;
        hfx_value *parts[3] = {hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){KD, H}, "%s.q_proj.weight", prefix), NULL),
                               hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){KD, H}, "%s.k_proj.weight", prefix), NULL),
                               hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VD, H}, "%s.v_proj.weight", prefix), NULL)};
        qkv = hfx_concat(g, 3, parts, 2);
        z = kda ? low_rank(g, w, prefix, "g_a_proj", "g_b_proj", h, DV, VD)
                : hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VD, H}, "%s.g_proj.weight", prefix), NULL);
        beta = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VH, H}, "%s.b_proj.weight", prefix), NULL);
        a = kda ? low_rank(g, w, forget, "f_a_proj", "f_b_proj", h, DK, KD) /* [B,S,KD] */
            : full ? hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){KD, H}, "%s.f_proj.weight", forget), NULL)
                   : hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VH, H}, "%s.a_proj.weight", prefix), NULL);
        norm = "o_norm";
    } else {
        qkv = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){CD, H}, "%s.in_proj_qkv.weight", prefix), NULL);
        z = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VD, H}, "%s.in_proj_z.weight", prefix), NULL);
        beta = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VH, H}, "%s.in_proj_b.weight", prefix), NULL);
        a = hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){VH, H}, "%s.in_proj_a.weight", prefix), NULL);
        out = "out_proj";
    }
    qkv = conv_step(g, w, prefix, qkv, CD, m->kernel, false, m->act, s);                   /* [B,S,CD] */
    hfx_value *q = l2norm(g, heads_first(g, hfx_slice(g, qkv, 2, 0, KD), KH, DK));          /* [B,KH,S,DK] */
    hfx_value *k = l2norm(g, heads_first(g, hfx_slice(g, qkv, 2, KD, 2 * KD), KH, DK));
    q = spread_groups(g, op(g, HFX_OP_MUL, q, f32(g, 1.0 / sqrt((double)DK))), KH, VH);    /* [B,VH,S,DK] */
    k = spread_groups(g, k, KH, VH);
    hfx_value *v = heads_first(g, hfx_slice(g, qkv, 2, 2 * KD, CD), VH, DV);               /* [B,VH,S,DV] */
    beta = hfx_op1(g, HFX_OP_SIGMOID, beta);
    if (m->beta_scale != 1.0) beta = op(g, HFX_OP_MUL, beta, hfx_const_scalar(g, beta->dtype, m->beta_scale));
    beta = hfx_transpose(g, hfx_cast(g, beta, HFX_DTYPE_F32), 3, (int64_t[]){0, 2, 1});
    hfx_value *gl = m->channel_decay ? channel_decays(g, w, m, forget, a)                  /* [B,VH,S,DK] */
                                     : head_decays(g, w, m, prefix, a);                    /* [B,VH,S] */
    hfx_value *o = delta_scan(g, factors_for(g, seq, m->factors), q, k, v, beta, gl, s->ssm,
                              s->keep ? &s->ssm_next : NULL);
    /* the gated RMSNorm per value head: normalized (the weight after the cast back; Kimi's in f32), times silu(z)
     * (Kimi's, output_gate_type's sigmoid) in f32 */
    o = hfx_cast(g, hfx_transpose(g, o, 4, (int64_t[]){0, 2, 1, 3}), dt);                   /* [B,S,VH,DV] */
    hfx_value *nw = hfx_weight(w, 1, &DV, "%s.%s.weight", prefix, norm);
    o = m->channel_decay ? op(g, HFX_OP_MUL, hfx_rms_plain(g, hfx_cast(g, o, HFX_DTYPE_F32), m->eps), hfx_cast(g, nw, HFX_DTYPE_F32))
                         : hfx_rms_norm(g, o, nw, m->eps, 0);
    hfx_value *zh = hfx_reshape(g, z, 4, (hfx_dim[]){b, seq, hfx_dim_const(VH), hfx_dim_const(DV)});
    hfx_value *zf = hfx_cast(g, zh, HFX_DTYPE_F32);
    zf = m->sigmoid_gate ? hfx_op1(g, HFX_OP_SIGMOID, zf) : hfx_activate(g, HFX_ACT_SILU, zf);
    o = op(g, HFX_OP_MUL, hfx_cast(g, o, HFX_DTYPE_F32), zf);
    o = hfx_reshape(g, hfx_cast(g, o, dt), 3, (hfx_dim[]){b, seq, hfx_dim_const(VD)});
    return hfx_linear(g, o, hfx_weight(w, 2, (int64_t[]){H, VD}, "%s.%s.weight", prefix, out), NULL);
}

/* One of the RG-LRU's gates over x [B,S,W]: sigmoid(x_h · weight[h] + bias[h]) per head block h (no transpose). */
static hfx_value *rglru_gate(hfx_graph *g, hfx_weights *w, const hfx_rglru_cfg *m, const char *prefix, const char *name,
                             hfx_value *x) {
    int64_t W = m->width, NH = m->heads, bw = W / NH;
    hfx_dim b = x->dims[0], seq = x->dims[1];
    hfx_value *xh = hfx_reshape(g, x, 5, (hfx_dim[]){b, seq, hfx_dim_const(NH), hfx_dim_const(1), hfx_dim_const(bw)});
    hfx_value *r = op(g, HFX_OP_MATMUL, xh, hfx_weight(w, 3, (int64_t[]){NH, bw, bw}, "%s.rg_lru.%s_weight", prefix, name));
    r = op(g, HFX_OP_ADD, hfx_reshape(g, r, 4, (hfx_dim[]){b, seq, hfx_dim_const(NH), hfx_dim_const(bw)}),
           hfx_weight(w, 2, (int64_t[]){NH, bw}, "%s.rg_lru.%s_bias", prefix, name));
    return hfx_op1(g, HFX_OP_SIGMOID, hfx_reshape(g, r, 3, (hfx_dim[]){b, seq, hfx_dim_const(W)}));
}

/* h_t = a_t·h_{t−1} + u_t over la = log a and u [B,W,S] (f32), from h0 [B,W] (NULL: zeros), starting over where
 * reset [B,1,S]: Σ_{s≤t} exp(Σ_{s<k≤t} la_k)·u_s over the s of t's segment, + exp(Σ_{k≤t} la_k)·h0 before the first
 * reset. The state after the call: the last position's. */
static hfx_value *rglru_scan(hfx_graph *g, hfx_value *la, hfx_value *u, hfx_value *reset, hfx_value *h0,
                             hfx_value **state) {
    la = hfx_where(g, reset, f32(g, 0.0), la);
    triangle t = triangles(g, la);
    hfx_value *count = hfx_cumsum(g, hfx_cast(g, reset, HFX_DTYPE_F32), 2);                  /* [B,1,S] resets so far */
    hfx_value *same = op(g, HFX_OP_EQUAL, hfx_unsqueeze(g, count, -1), hfx_unsqueeze(g, count, -2)); /* [B,1,S,S] */
    hfx_value *keep = op(g, HFX_OP_AND, t.incl, same);
    hfx_value *decay = hfx_where(g, keep, hfx_op1(g, HFX_OP_EXP, segment_sum(g, la, 2, &t)), f32(g, 0.0)); /* [B,W,S,S] */
    hfx_dim b = u->dims[0], w = u->dims[1], seq = u->dims[2];
    hfx_value *y = hfx_reshape(g, op(g, HFX_OP_MATMUL, decay, hfx_unsqueeze(g, u, -1)), 3, (hfx_dim[]){b, w, seq}); /* [B,W,S] */
    if (h0) {
        hfx_value *since = hfx_op1(g, HFX_OP_EXP, hfx_cumsum(g, la, 2));
        hfx_value *alive = op(g, HFX_OP_EQUAL, count, f32(g, 0.0));
        y = op(g, HFX_OP_ADD, y, op(g, HFX_OP_MUL, hfx_where(g, alive, since, f32(g, 0.0)), hfx_unsqueeze(g, h0, -1)));
    }
    if (state) *state = hfx_reshape(g, hfx_slice(g, y, 2, -1, INT64_MAX), 2, (hfx_dim[]){b, w});
    return y;
}

hfx_value *hfx_rglru_mixer(hfx_graph *g, hfx_weights *w, const hfx_rglru_cfg *m, const char *prefix, hfx_value *h,
                           hfx_value *pos, hfx_activation act, hfx_ssm_state *s) {
    int64_t H = h->dims[2].c, W = m->width, K = m->kernel;
    hfx_dtype dt = h->dtype;
#define LIN(name, in, out, x) hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){out, in}, "%s." name ".weight", prefix), \
                                         hfx_weight(w, 1, (int64_t[]){out}, "%s." name ".bias", prefix))
    hfx_value *y = hfx_activate(g, act, LIN("linear_y", H, W, h));
    hfx_value *xt = hfx_transpose(g, LIN("linear_x", H, W, h), 3, (int64_t[]){0, 2, 1});     /* [B,W,S] */
    hfx_value *all = hfx_conv_window(g, s->conv, xt, K, K - 1, s->keep ? &s->conv_next : NULL);
    hfx_value *x = hfx_transpose(g, depthwise(g, w, prefix, "conv_1d", all, W, K, true), 3, (int64_t[]){0, 2, 1}); /* [B,S,W] */
    hfx_value *in_gate = rglru_gate(g, w, m, prefix, "input_gate", x), *rec_gate = rglru_gate(g, w, m, prefix, "recurrent_gate", x);
    /* log a = −8·r·softplus(Λ), √(1 − a²), in the weights' dtype as transformers computes them */
    hfx_value *lambda = hfx_softplus(g, hfx_cast(g, hfx_weight(w, 1, &W, "%s.rg_lru.recurrent_param", prefix), HFX_DTYPE_F32));
    hfx_value *log_a = hfx_cast(g, op(g, HFX_OP_MUL, op(g, HFX_OP_MUL, f32(g, -8.0), hfx_cast(g, rec_gate, HFX_DTYPE_F32)),
                                      lambda), dt);
    hfx_value *a2 = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_MUL, hfx_const_scalar(g, dt, 2.0), log_a));
    hfx_value *reset = hfx_unsqueeze(g, op(g, HFX_OP_EQUAL, pos, hfx_const_i64(g, 0)), -1); /* [B,S,1] */
    hfx_value *mult = hfx_where(g, reset, hfx_const_scalar(g, dt, 1.0),
                                hfx_op1(g, HFX_OP_SQRT, op(g, HFX_OP_SUB, hfx_const_scalar(g, dt, 1.0), a2)));
    hfx_value *u = op(g, HFX_OP_MUL, op(g, HFX_OP_MUL, x, in_gate), mult);                   /* [B,S,W] */
    static const int64_t bsw_bws[3] = {0, 2, 1};
    hfx_value *r = rglru_scan(g, hfx_transpose(g, hfx_cast(g, log_a, HFX_DTYPE_F32), 3, bsw_bws),
                              hfx_transpose(g, hfx_cast(g, u, HFX_DTYPE_F32), 3, bsw_bws),
                              hfx_transpose(g, reset, 3, bsw_bws), s->ssm, s->keep ? &s->ssm_next : NULL);
    hfx_value *o = op(g, HFX_OP_MUL, hfx_cast(g, hfx_transpose(g, r, 3, bsw_bws), dt), y);
    return LIN("linear_out", W, H, o);
#undef LIN
}

/* ---- xLSTM's mLSTM ---- */

hfx_status hfx_mlstm_parse(hfx_cfg c, int64_t hidden, hfx_mlstm_cfg *m, hfx_error *err) {
    double qk, v;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "num_heads", 8, 1, 4096, &m->heads, err)) ||
        (st = hfx_cfg_num_or(c, "qk_dim_factor", 0.5, &qk, err)) || (st = hfx_cfg_num_or(c, "v_dim_factor", 1.0, &v, err)) ||
        (st = hfx_cfg_num_or(c, "gate_soft_cap", 15.0, &m->gate_cap, err)) ||
        (st = hfx_cfg_num_or(c, "eps", 1e-6, &m->eps, err)) || (st = hfx_cfg_num_or(c, "norm_eps", 1e-6, &m->norm_eps, err)))
        return st;
    const json_t *cap = json_object_get(c.obj, "gate_soft_cap");
    if (cap && json_is_null(cap)) m->gate_cap = 0; /* (null: transformers' soft_cap leaves them) */
    if (!(qk > 0 && qk <= 64 && v > 0 && v <= 64))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: qk_dim_factor %g and v_dim_factor %g must be in (0, 64]", c.where, qk, v);
    m->qk_dim = (int64_t)((double)hidden * qk), m->v_dim = (int64_t)((double)hidden * v);
    if (m->qk_dim < m->heads || m->qk_dim % m->heads || m->v_dim < m->heads || m->v_dim % m->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the mLSTM's widths int(hidden_size · qk_dim_factor) = %lld and "
                                              "int(hidden_size · v_dim_factor) = %lld are not multiples of num_heads (%lld)",
                        c.where, (long long)m->qk_dim, (long long)m->v_dim, (long long)m->heads);
    if (!(m->gate_cap >= 0 && m->gate_cap < 1e6) || !(m->eps >= 0 && m->eps < 1) || !(m->norm_eps > 0 && m->norm_eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: gate_soft_cap, eps or norm_eps out of range", c.where);
    return HFX_OK;
}

/* `like`'s shape filled with v (f32). */
static hfx_value *filled(hfx_graph *g, hfx_value *like, double v) {
    return hfx_expand(g, f32(g, v), hfx_shape_of(g, like), like->rank, like->dims);
}

/* cap·tanh(x / cap) (0: x) */
static hfx_value *soft_capped(hfx_graph *g, hfx_value *x, double cap) {
    if (!cap) return x;
    hfx_value *k = hfx_const_scalar(g, x->dtype, cap);
    return op(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_TANH, op(g, HFX_OP_DIV, x, k)), k);
}

/* The mLSTM cell over one call, per head, all f32: q, k [B,H,S,DK], v [B,H,S,DV], the gates' preactivations i, f
 * [B,H,S], the state s0 [B,H,DK+1,DV+1] (NULL: zeros). Unrolled, transformers' step (m_t = max(log σ(f_t) + m_{t−1},
 * i_t), C_t = e^{log σ(f_t) + m_{t−1} − m_t}·C_{t−1} + e^{i_t − m_t}·k_t v_tᵀ, n_t likewise with k_t) is, with
 * a[t,s] = Σ_{s<j≤t} log σ(f_j) + i_s and b_t = Σ_{j≤t} log σ(f_j) + m_0: m_t = max(b_t, max_{s≤t} a[t,s]),
 * C_t = Σ_{s≤t} e^{a[t,s] − m_t} k_s v_sᵀ + e^{b_t − m_t} C_0; h_t = q̃_t·C_t / (max(|q̃_t·n_t|, e^{−m_t}) + eps),
 * q̃ = q/√DK. n rides along as C's column for a value of 1. *next: the state after the call (its last t). */
static hfx_value *mlstm_cell(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *i, hfx_value *f,
                             hfx_value *s0, double eps, hfx_value **next) {
    int64_t DK = q->dims[3].c, DV = v->dims[3].c, last = -1;
    triangle t = triangles(g, i);
    hfx_value *flog = hfx_op1(g, HFX_OP_NEG, hfx_softplus(g, hfx_op1(g, HFX_OP_NEG, f))); /* log σ(f) [B,H,S] */
    hfx_value *a = op(g, HFX_OP_ADD, segment_sum(g, flog, 2, &t), hfx_unsqueeze(g, i, 2)); /* [B,H,S(t),S(s)] */
    a = hfx_where(g, t.incl, a, f32(g, -1e38));
    hfx_value *m0 = s0 ? hfx_reshape(g, hfx_slice(g, hfx_slice(g, s0, 2, DK, DK + 1), 3, 0, 1), 3,
                                     (hfx_dim[]){q->dims[0], q->dims[1], hfx_dim_const(1)})
                       : NULL; /* [B,H,1] */
    hfx_value *b = hfx_cumsum(g, flog, 2); /* [B,H,S] */
    if (m0) b = op(g, HFX_OP_ADD, b, m0);
    hfx_value *mt = op(g, HFX_OP_MAX, hfx_reduce(g, HFX_OP_REDUCE_MAX, a, 1, &last), hfx_unsqueeze(g, b, -1)); /* [B,H,S,1] */
    hfx_value *decay = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, a, mt));               /* [B,H,S,S] */
    hfx_value *carry = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, hfx_unsqueeze(g, b, -1), mt)); /* [B,H,S,1] */
    hfx_value *v1 = hfx_concat(g, 2, (hfx_value *[]){v, filled(g, hfx_slice(g, v, 3, 0, 1), 1.0)}, 3); /* [B,H,S,DV+1] */
    hfx_value *qs = op(g, HFX_OP_MUL, q, f32(g, 1.0 / sqrt((double)DK)));
    hfx_value *scores = op(g, HFX_OP_MUL, op(g, HFX_OP_MATMUL, qs, swap_last(g, k)), decay);
    hfx_value *num = op(g, HFX_OP_MATMUL, scores, v1);                                 /* [B,H,S,DV+1] */
    hfx_value *c0 = s0 ? hfx_slice(g, s0, 2, 0, DK) : NULL;                            /* [B,H,DK,DV+1] */
    if (c0) num = op(g, HFX_OP_ADD, num, op(g, HFX_OP_MUL, carry, op(g, HFX_OP_MATMUL, qs, c0)));
    hfx_value *qn = hfx_slice(g, num, 3, DV, DV + 1);
    qn = op(g, HFX_OP_MAX, qn, hfx_op1(g, HFX_OP_NEG, qn)); /* |q̃·n| */
    hfx_value *den = op(g, HFX_OP_ADD, op(g, HFX_OP_MAX, qn, hfx_op1(g, HFX_OP_EXP, hfx_op1(g, HFX_OP_NEG, mt))),
                        f32(g, eps));
    hfx_value *h = op(g, HFX_OP_DIV, hfx_slice(g, num, 3, 0, DV), den);              /* [B,H,S,DV] */
    if (!next) return h;
    /* the last row: C_S = Σ_s e^{a[S−1,s] − m} k_s [v_s; 1]ᵀ + e^{b − m} C_0, m_S = m of the last t */
    hfx_value *w_last = hfx_transpose(g, hfx_slice(g, decay, 2, -1, INT64_MAX), 4, (int64_t[]){0, 1, 3, 2}); /* [B,H,S,1] */
    hfx_value *c = op(g, HFX_OP_MATMUL, swap_last(g, op(g, HFX_OP_MUL, k, w_last)), v1);   /* [B,H,DK,DV+1] */
    hfx_value *m_last = hfx_slice(g, mt, 2, -1, INT64_MAX);                               /* [B,H,1,1] */
    if (c0) c = op(g, HFX_OP_ADD, c, op(g, HFX_OP_MUL, hfx_slice(g, carry, 2, -1, INT64_MAX), c0));
    hfx_value *m_row = hfx_concat(g, 2, (hfx_value *[]){m_last, filled(g, hfx_slice(g, hfx_slice(g, c, 2, 0, 1), 3, 0, DV),
                                                                       0.0)}, 3); /* [B,H,1,DV+1]: m, then zeros */
    *next = hfx_concat(g, 2, (hfx_value *[]){c, m_row}, 2);                               /* [B,H,DK+1,DV+1] */
    return h;
}

hfx_value *hfx_mlstm_mixer(hfx_graph *g, hfx_weights *w, const hfx_mlstm_cfg *m, const char *prefix, hfx_value *h,
                           hfx_ssm_state *s) {
    int64_t H = h->dims[2].c, NH = m->heads, QK = m->qk_dim, V = m->v_dim;
    hfx_dim b = h->dims[0], seq = h->dims[1];
#define LIN(name, out, bias) hfx_linear(g, h, hfx_weight(w, 2, (int64_t[]){out, H}, "%s." name ".weight", prefix), \
                                        bias ? hfx_weight(w, 1, (int64_t[]){out}, "%s." name ".bias", prefix) : NULL)
    hfx_value *q = heads_first(g, LIN("q", QK, false), NH, QK / NH), *k = heads_first(g, LIN("k", QK, false), NH, QK / NH);
    hfx_value *v = heads_first(g, LIN("v", V, false), NH, V / NH);                 /* [B,NH,S,·] f32 */
    hfx_value *o = LIN("ogate_preact", V, false);
    hfx_value *gates[2] = {LIN("igate_preact", NH, true), LIN("fgate_preact", NH, true)}; /* [B,S,NH] */
#undef LIN
    for (int j = 0; j < 2; j++)
        gates[j] = hfx_transpose(g, hfx_cast(g, soft_capped(g, gates[j], m->gate_cap), HFX_DTYPE_F32), 3,
                                 (int64_t[]){0, 2, 1});
    hfx_value *y = mlstm_cell(g, q, k, v, gates[0], gates[1], s->ssm, m->eps, s->keep ? &s->ssm_next : NULL);
    /* a LayerNorm per head in f32, back to the weights' dtype, its weight over the heads' outputs */
    y = hfx_cast(g, hfx_layer_norm(g, hfx_transpose(g, y, 4, (int64_t[]){0, 2, 1, 3}), NULL, NULL, m->norm_eps), h->dtype);
    y = op(g, HFX_OP_MUL, hfx_reshape(g, y, 3, (hfx_dim[]){b, seq, hfx_dim_const(V)}),
           hfx_weight(w, 1, &V, "%s.multihead_norm.weight", prefix));
    y = op(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_SIGMOID, o), y);
    return hfx_linear(g, y, hfx_weight(w, 2, (int64_t[]){H, V}, "%s.out_proj.weight", prefix), NULL);
}
