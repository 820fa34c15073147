/* Rotary position embeddings: the config side (both the transformers 4 form, `rope_theta` +
 * `rope_scaling`, and the transformers 5 form, `rope_parameters`) and the graph side (cos/sin
 * from position_ids, and their application to q and k).
 *
 * Types: default, linear, dynamic (NTK, recomputed in the graph from max(position_ids) as
 * transformers does per forward), llama3, yarn, proportional. The inverse frequencies are computed here in
 * float32 with the same operation order as transformers' modeling_rope_utils, so cos/sin agree
 * to the last bit or two. */
#ifndef HFX_ARCH_ROPE_H
#define HFX_ARCH_ROPE_H

#include "base/arena.h"
#include "hf/config.h"
#include "ir/graph.h"

typedef enum {
    HFX_ROPE_DEFAULT, HFX_ROPE_LINEAR, HFX_ROPE_DYNAMIC, HFX_ROPE_LLAMA3, HFX_ROPE_YARN,
    HFX_ROPE_LONGROPE, /* short factors up to original_max_position_embeddings, long beyond */
    HFX_ROPE_LONGROPE_MSCALE, /* the short factors always, cos and sin × short_mscale, or long_mscale once the positions
                                 pass original_max_position_embeddings (Phi-3.5-MoE) */
    HFX_ROPE_PROPORTIONAL /* the whole head's pairs, the first partial_rotary_factor of them turning at the default
                             frequencies of the whole head, the rest not at all; ÷ factor (Gemma 4) */
} hfx_rope_type;

typedef struct hfx_rope {
    hfx_rope_type type;
    double theta;
    double factor;                /* linear / dynamic / llama3 / yarn */
    int64_t dim;                  /* rotated dims per head (head_dim here) */
    int64_t freq_dim;             /* where a partial factor leaves an odd count d: d, the exponents' divisor
                                     (dim is then d + 1, as transformers turns ⌈d/2⌉ pairs); 0: dim */
    int64_t max_position;         /* config.max_position_embeddings (dynamic's threshold) */
    float attention_scaling;      /* multiplies cos and sin (yarn) */
    float *inv_freq;              /* (dim / 2), arena-owned; longrope: the short factors' */
    float *inv_freq_long;         /* (dim / 2), longrope only */
    int64_t switch_len;           /* longrope: past this many positions the long factors apply */
    float mscale_long;            /* HFX_ROPE_LONGROPE_MSCALE: cos and sin's scale past switch_len (attention_scaling
                                     before) */
    int64_t turning;              /* proportional: the frequencies that turn (the rest are 0) */
    bool interleaved;             /* pairs (2i, 2i+1) rotate by frequency i (GLM, Cohere, ERNIE 4.5), not
                                     dims i and i + dim/2; set by the family after parsing */
    int64_t mrope_section[3];     /* M-RoPE (Qwen2-VL): the first [0] frequencies turn with the temporal
                                     positions, the next [1] with the height's, the last [2] with the
                                     width's; position_ids are then [3,B,S]. All 0: one position per token */
    bool mrope_interleaved;       /* M-RoPE interleaved (Qwen3-VL, Qwen3.5): frequency j turns with the height's
                                     positions where j mod 3 = 1 and j < 3·[1], the width's where j mod 3 = 2 and
                                     j < 3·[2], the temporal's otherwise */
} hfx_rope;

/* How a lineage lays out M-RoPE: its sections where the config names none, and whether they interleave. */
typedef struct hfx_mrope_form {
    int64_t sections[3];
    bool interleaved;
} hfx_mrope_form;

/* Where one set of layers finds its rope settings. */
typedef struct hfx_rope_source {
    const char *layer_type; /* key of a nested rope_parameters ("sliding_attention"), or NULL */
    double default_theta;   /* when the config names none */
    const char *theta_key;  /* the transformers 4 top-level key: "rope_theta", "rope_local_base_freq" */
    bool scaling;           /* the transformers 4 `rope_scaling` applies to these layers */
    bool partial;           /* `partial_rotary_factor` rotates only the first dims of each head */
    double default_partial; /* when the config names none (0: 1) */
    const char *partial_key;/* the transformers 4 top-level key for it */
    const char *dim_key;    /* a top-level key naming the rotated dims themselves ("rotary_dim"), read when no
                               partial_rotary_factor is given; NULL: none */
    bool phi3_names;        /* Phi-3 configs call longrope "su" or "yarn" */
    bool legacy_type;       /* the old "type" key names the rope type too */
    bool ntk_alpha;         /* "dynamic" with an `alpha` is the default frequencies of base θ·alpha^(d/(d−2))
                               (HunYuan's checkpoints label their fixed NTK base so) */
    bool longrope_mscale;   /* "longrope" is HFX_ROPE_LONGROPE_MSCALE (Phi-3.5-MoE) */
} hfx_rope_source;

/* Read the rope settings of `c` (config.json) for heads of `dim` dims (the rotated dims are
 * fewer with a partial rotary factor); `src` NULL means the usual flat settings (theta 10000 by
 * default). Unknown or unsupported types are
 * HFX_ERR_UNSUPPORTED with the list of supported ones. */
hfx_status hfx_rope_parse(hfx_cfg c, const hfx_rope_source *src, int64_t dim,
                          int64_t max_position, hfx_arena *arena, hfx_rope *out, hfx_error *err);

/* Turn `r` into M-RoPE (r->mrope_section) of the lineage's form from mrope_section in c's rope_parameters or
 * rope_scaling (the form's default sections where neither names one): contiguous sections must add up to the
 * rotated dims' half; interleaved ones only fit in it, as transformers' slices do. */
hfx_status hfx_rope_parse_mrope(hfx_cfg c, const hfx_mrope_form *form, hfx_rope *r, hfx_error *err);

/* Whether a and b give the same tables (their type, base, scaling and dims). */
bool hfx_rope_same(const hfx_rope *a, const hfx_rope *b);

/* 1 / theta^(2i/dim) for i < dim/2, in float32 as transformers computes the default frequencies. */
void hfx_rope_default_inv_freq(double theta, int64_t dim, float *inv);

/* cos and sin for `position_ids` [B,S] (i64; M-RoPE's [3,B,S]): each [B,1,S,dim] in dtype `dt`; each frequency
 * twice, as [f, f] halves or, interleaved, as [f0, f0, f1, f1, ...]. */
void hfx_rope_cos_sin(hfx_graph *g, const hfx_rope *r, hfx_value *position_ids, hfx_dtype dt,
                      hfx_value **cos, hfx_value **sin);

/* x·cos + rotate_half(x)·sin for x [B,H,S,head_dim]; with fewer rotated dims than head_dim,
 * only the first ones rotate and the rest pass through. rotate_half is (−x2, x1) of the halves,
 * or, interleaved, (−x1, x0, −x3, x2, ...) of the pairs. */
hfx_value *hfx_rope_apply(hfx_graph *g, hfx_value *x, hfx_value *cos, hfx_value *sin, bool interleaved);

#endif
