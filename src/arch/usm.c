/* Gemma's audio encoders on their own (transformers' Gemma3nAudioEncoder, Gemma4AudioModel): the Universal Speech
 * Model's conformer of audio_usm.c over log-mel frames and their mask, as the model's forward takes them.
 *
 * One component, `model`:
 * - Gemma3nAudioEncoder: audio_mel [B, T, mels], audio_mel_mask [B, T] bool (true on padded frames, as transformers
 *   takes it) → last_hidden_state [B, T', hidden] (the padded frames zeroed) and output_mask [B, T'] (the output's
 *   audio_mel_mask);
 * - Gemma4AudioModel: input_features [B, T, mels], attention_mask [B, T] i64 (1 on real frames) →
 *   last_hidden_state [B, T', output_proj_dims] and output_mask [B, T'] i64 (the output's attention_mask).
 * (The masks leave under another name than they enter by: a graph's inputs and outputs share one namespace.) */
#include <string.h>

#include "arch/arch.h"
#include "arch/audio_tower.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

typedef struct usm_desc {
    const char *architecture, *output_class;
    hfx_usm_lineage lineage;
    const char *const *inputs; /* the features' and the mask's names, NULL-terminated */
    bool padding_mask;         /* the mask marks padded frames, as bool (else real ones, as i64) */
} usm_desc;

static hfx_status usm_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const usm_desc *d = desc_;
    (void)arena;
    return hfx_usm_audio_parse(d->lineage, c, cfg, err);
}

static hfx_status usm_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                            hfx_graph *g, hfx_error *err) {
    const usm_desc *d = desc_;
    const hfx_usm_audio *t = cfg_;
    hfx_weights w;
    hfx_status st;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err))) return st;
    hfx_value *features = hfx_graph_input(g, d->inputs[0], o->dtype, 3, (hfx_dim[]){o->batch, o->seq, hfx_dim_const(t->mels)});
    hfx_value *mask = hfx_graph_input(g, d->inputs[1], d->padding_mask ? HFX_DTYPE_BOOL : HFX_DTYPE_I64, 2,
                                      (hfx_dim[]){o->batch, o->seq});
    hfx_value *real = mask; /* [B,T] i64, 1 on real frames */
    if (d->padding_mask) real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, mask), HFX_DTYPE_I64);
    /* a checkpoint saved from the composite model holds the tower under its prefix */
    const char *prefix = hfx_weight_exists(&w, "model.audio_tower.subsample_conv_projection.input_proj_linear.weight")
                             ? "model.audio_tower." : "";
    hfx_value *x = hfx_usm_audio_tower(t, g, &w, prefix, features, real, &real);
    if (!g->failed) {
        hfx_graph_output(g, x, "last_hidden_state");
        hfx_graph_output(g, d->padding_mask ? hfx_op1(g, HFX_OP_NOT, real) : hfx_cast(g, real, HFX_DTYPE_I64), "output_mask");
    }
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

static hfx_torch_signature usm_torch_signature(const void *desc_) {
    const usm_desc *d = desc_;
    return (hfx_torch_signature){.args = d->inputs, .output_class = d->output_class};
}

static const char *const gemma3n_inputs[] = {"audio_mel", "audio_mel_mask", NULL};
static const char *const gemma4_inputs[] = {"input_features", "attention_mask", NULL};

static const char *const *usm_sequence_inputs(const void *cfg) {
    return ((const hfx_usm_audio *)cfg)->lineage == HFX_USM_GEMMA3N ? gemma3n_inputs : gemma4_inputs;
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};

const hfx_arch_family hfx_usm_family = {
    .cfg_size = sizeof(hfx_usm_audio),
    .parse = usm_parse,
    .build_forward = usm_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs_of = usm_sequence_inputs,
    .torch_signature = usm_torch_signature,
};

const usm_desc hfx_gemma3n_audio_encoder = {"Gemma3nAudioEncoder", "Gemma3nAudioEncoderModelOutput", HFX_USM_GEMMA3N,
                                            gemma3n_inputs, true};
const usm_desc hfx_gemma4_audio_model = {"Gemma4AudioModel", "Gemma4AudioModelOutput", HFX_USM_GEMMA4, gemma4_inputs,
                                         false};
