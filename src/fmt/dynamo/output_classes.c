/* transformers' output classes the families' plain forwards return (their torch signatures'): where each is defined and
 * which fields it has (loss aside), so that a program returns one only where every output is one of its fields (a
 * sentence-transformers folder's token_embeddings is not). The fields as transformers 5.24 declares them. */
#include <stdio.h>
#include <string.h>

#include "fmt/dynamo/pt2.h"

static const struct {
    const char *cls, *module; /* module: the model module defining it (transformers.models.<m>.modeling_<m>); NULL:
                                 transformers.modeling_outputs */
    const char *fields;       /* space-separated */
} classes[] = {
    {"BaseModelOutput", NULL, "last_hidden_state hidden_states attentions"},
    {"BaseModelOutputWithPast", NULL, "last_hidden_state cache hidden_states attentions"},
    {"BaseModelOutputWithPastAndCrossAttentions", NULL,
     "last_hidden_state cache hidden_states attentions cross_attentions"},
    {"BaseModelOutputWithPooling", NULL, "last_hidden_state pooler_output hidden_states attentions"},
    {"BaseModelOutputWithPoolingAndCrossAttentions", NULL,
     "last_hidden_state pooler_output hidden_states cache attentions cross_attentions"},
    {"CLIPOutput", "clip", "logits_per_image logits_per_text text_embeds image_embeds text_model_output vision_model_output"},
    {"CLIPTextModelOutput", "clip", "text_embeds last_hidden_state hidden_states attentions"},
    {"CLIPVisionModelOutput", "clip", "image_embeds last_hidden_state hidden_states attentions"},
    {"CausalLMOutput", NULL, "logits hidden_states attentions"},
    {"CausalLMOutputWithCrossAttentions", NULL, "logits cache hidden_states attentions cross_attentions"},
    {"CausalLMOutputWithPast", NULL, "logits cache hidden_states attentions"},
    {"FalconMambaCausalLMOutput", "falcon_mamba", "logits cache hidden_states"},
    {"Gemma3nAudioEncoderModelOutput", "gemma3n", "last_hidden_state pooler_output hidden_states attentions audio_mel_mask"},
    {"Gemma4AudioModelOutput", "gemma4", "last_hidden_state pooler_output hidden_states attentions attention_mask"},
    {"Idefics3CausalLMOutputWithPast", "idefics3",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"ImageClassifierOutput", NULL, "logits hidden_states attentions"},
    {"InternVLCausalLMOutputWithPast", "internvl",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"Lfm2VlCausalLMOutputWithPast", "lfm2_vl",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"LlavaCausalLMOutputWithPast", "llava",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"LlavaOnevisionCausalLMOutputWithPast", "llava_onevision",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"LlavaNextCausalLMOutputWithPast", "llava_next",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"Mamba2CausalLMOutput", "mamba2", "logits cache hidden_states"},
    {"MambaCausalLMOutput", "mamba", "logits cache hidden_states"},
    {"MaskedLMOutput", NULL, "logits hidden_states attentions"},
    {"Mistral3CausalLMOutputWithPast", "mistral3",
     "aux_loss logits cache hidden_states attentions router_logits image_outputs video_outputs audio_outputs"},
    {"MoonshineEncoderModelOutput", "moonshine", "last_hidden_state hidden_states attentions attention_mask"},
    {"MoeModelOutputWithPast", NULL, "last_hidden_state cache hidden_states attentions router_logits"},
    {"MoeCausalLMOutputWithPast", NULL, "aux_loss logits cache hidden_states attentions router_logits"},
    {"MultimodalCausalLMOutputWithPast", NULL,
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"ParakeetEncoderModelOutput", "parakeet", "last_hidden_state pooler_output hidden_states attentions attention_mask"},
    {"Qwen3_5MoeCausalLMOutputWithPast", "qwen3_5_moe",
     "aux_loss logits cache hidden_states attentions router_logits image_outputs video_outputs audio_outputs"},
    {"Qwen3VLMoeCausalLMOutputWithPast", "qwen3_vl_moe",
     "aux_loss logits cache hidden_states attentions router_logits image_outputs video_outputs audio_outputs"},
    {"QuestionAnsweringModelOutput", NULL, "start_logits end_logits hidden_states attentions"},
    {"RwkvCausalLMOutput", "rwkv", "logits state hidden_states attentions"},
    {"Seq2SeqLMOutput", NULL, "logits cache decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions"},
    {"Seq2SeqModelOutput", NULL, "last_hidden_state cache decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions"},
    {"Seq2SeqSequenceClassifierOutput", NULL, "logits cache decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions"},
    {"SequenceClassifierOutput", NULL, "logits hidden_states attentions"},
    {"SequenceClassifierOutputWithPast", NULL, "logits cache hidden_states attentions"},
    {"Siglip2Output", "siglip2", "logits_per_image logits_per_text text_embeds image_embeds text_model_output vision_model_output"},
    {"SiglipOutput", "siglip", "logits_per_image logits_per_text text_embeds image_embeds text_model_output vision_model_output"},
    {"SmolVLMCausalLMOutputWithPast", "smolvlm",
     "logits cache hidden_states attentions image_outputs video_outputs audio_outputs"},
    {"TokenClassifierOutput", NULL, "logits hidden_states attentions"},
    {"Wav2Vec2BaseModelOutput", NULL, "last_hidden_state extract_features hidden_states attentions"},
};

static int find(const char *cls) {
    for (size_t i = 0; cls && i < sizeof classes / sizeof classes[0]; i++)
        if (strcmp(classes[i].cls, cls) == 0) return (int)i;
    return -1;
}

const char *hfx_pt2_output_type(const char *cls, char *buf, size_t size) {
    int i = find(cls);
    if (i >= 0 && classes[i].module)
        snprintf(buf, size, "transformers.models.%s.modeling_%s.%s", classes[i].module, classes[i].module, cls);
    else
        snprintf(buf, size, "transformers.modeling_outputs.%s", cls);
    return buf;
}

bool hfx_pt2_output_fields(const char *cls, const char *const *names, int n) {
    int i = find(cls);
    if (i < 0) return false;
    for (int k = 0; k < n; k++) {
        size_t len = strlen(names[k]);
        const char *f = classes[i].fields, *hit = NULL;
        while (!hit && (f = strstr(f, names[k])))
            if ((f == classes[i].fields || f[-1] == ' ') && (f[len] == ' ' || f[len] == 0)) hit = f;
            else f += len;
        if (!hit) return false;
    }
    return true;
}
