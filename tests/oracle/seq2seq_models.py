"""Tiny encoder-decoder checkpoints for test_seq2seq.py: BART, mBART, Marian and M2M100, each built by
transformers from an explicit config with a fixed seed, saved with save_pretrained (config.json,
generation_config.json, safetensors) and loaded back by transformers, which must give exactly the
logits of the model that was saved.

As models.py: the weights are not transformers' 0.02 init, under which a wrong position offset or
a missing norm, bias or final_logits_bias would hide below the 1e-4 tolerance. Every linear is
drawn at 1/√fan_in (q and k, the tables and the head at twice that: peaked attention, logits of
a few units), norms around 1, biases, position tables and final_logits_bias at O(0.1–1).

The variants cover what changes the graph: post-norm with an embedding norm and learned positions
at offset 2 (BART), pre-norm with final norms (mBART), a sinusoid table not stored in the
checkpoint (Marian), computed sinusoids whose positions skip padding (M2M100), scale_embedding on
and off, tied and untied heads, one table or two (Marian's share_encoder_decoder_embeddings),
activations, unequal encoder and decoder depths, heads and widths; and the generation settings
the loop applies: forced BOS and EOS, min_length, no_repeat_ngram_size. T5 (v1.0 and v1.1),
MT5 and UMT5: relative position buckets (saturating within the test's lengths), RMS norms without
biases, relu and gated activations, the decoder output scale, heads whose width times count is not
d_model, and the untied head of older checkpoints (lm_head.weight next to shared.weight). Whisper: the
convolutional front end over log-mel features of sine sweeps (WhisperFeatureExtractor), 8 and 128
mels, the decoder prompt with a given language, a detected one, or legacy forced_decoder_ids.
Moonshine: the waveform through its three convolutions (Wav2Vec2FeatureExtractor as moonshine-tiny's
preprocessor_config.json sets it: raw samples, zero-padded, with an attention_mask), interleaved partial
rotary (an even and an odd rotated count), q/k/v biases, each stack's activation.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import torch

from safetensors.torch import load_file, save_file

from transformers import (
    AutoModelForSeq2SeqLM,
    AutoModelForSpeechSeq2Seq,
    AutoModelForSequenceClassification,
    BartConfig,
    BartForConditionalGeneration,
    BartForSequenceClassification,
    BartModel,
    GenerationConfig,
    M2M100Config,
    M2M100ForConditionalGeneration,
    M2M100Model,
    MoonshineConfig,
    MoonshineForConditionalGeneration,
    MoonshineModel,
    MarianConfig,
    MarianModel,
    MarianMTModel,
    MBartConfig,
    MBartForConditionalGeneration,
    MBartForSequenceClassification,
    MBartModel,
    MT5Config,
    MT5EncoderModel,
    MT5ForConditionalGeneration,
    MT5Model,
    T5Config,
    T5EncoderModel,
    T5ForConditionalGeneration,
    T5Model,
    UMT5Config,
    UMT5EncoderModel,
    UMT5ForConditionalGeneration,
    UMT5Model,
    Wav2Vec2FeatureExtractor,
    WhisperConfig,
    WhisperFeatureExtractor,
    WhisperForConditionalGeneration,
    WhisperModel,
)

VOCAB = 128
COMMON = dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
              decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64,
              pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, dropout=0.0,
              attention_dropout=0.0, activation_dropout=0.0)


T5_COMMON = dict(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_heads=4, pad_token_id=0,
                 eos_token_id=1, decoder_start_token_id=0, bos_token_id=None, dropout_rate=0.0,
                 relative_attention_num_buckets=8, relative_attention_max_distance=6)


WHISPER = dict(vocab_size=96, num_mel_bins=8, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, d_model=32, max_source_positions=50,
               max_target_positions=128, decoder_start_token_id=90, pad_token_id=91, eos_token_id=92, bos_token_id=92)
WHISPER_GEN = {"lang_to_id": {"<|en|>": 80, "<|fr|>": 81, "<|de|>": 85}, "task_to_id": {"transcribe": 82, "translate": 83},
               "no_timestamps_token_id": 84, "is_multilingual": True, "suppress_tokens": [1, 2, 3],
               "begin_suppress_tokens": [92, 5]}


# Moonshine: heads of 16 (14 rotated: partial_rotary_factor's default 0.9), the decoder gated by SiLU
MOONSHINE = dict(vocab_size=96, hidden_size=64, intermediate_size=48, encoder_num_hidden_layers=2,
                 decoder_num_hidden_layers=2, encoder_num_attention_heads=4, decoder_num_attention_heads=4,
                 max_position_embeddings=128, decoder_start_token_id=1, bos_token_id=1, eos_token_id=2, pad_token_id=0)


def waveform_extractor() -> Wav2Vec2FeatureExtractor:
    """Moonshine's feature extractor (moonshine-tiny's preprocessor_config.json): the raw 16 kHz samples, no
    normalization, zero-padded to the longest with an attention_mask."""
    return Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=False,
                                    return_attention_mask=True)


def waveforms(rows: int) -> dict:
    """{"input_values", "attention_mask"} [rows, samples] of the sweeps, through waveform_extractor."""
    out = waveform_extractor()(sweeps(rows), sampling_rate=16000, padding=True, return_tensors="np")
    return {"input_values": out.input_values.astype(np.float32), "attention_mask": out.attention_mask.astype(np.int64)}


def feature_extractor(name: str) -> WhisperFeatureExtractor:
    """Whisper's feature extractor for variant `name`: its mels, a window of its encoder's length
    (2 × max_source_positions frames of 10 ms: the tiny models' 1 s, released checkpoints' 30 s)."""
    cfg = VARIANTS[name].config
    return WhisperFeatureExtractor(feature_size=cfg["num_mel_bins"], sampling_rate=16000, hop_length=160,
                                   chunk_length=cfg["max_source_positions"] // 50, n_fft=400)


def sweeps(rows: int) -> list[np.ndarray]:
    """16 kHz sine sweeps, each row its own range and length (under a second)."""
    waves = []
    for r in range(rows):
        t = np.arange(int((0.9 - 0.2 * r) * 16000)) / 16000
        waves.append((0.5 * np.sin(2 * np.pi * (150 + 300 * r + (1500 + 700 * r) * t) * t)).astype(np.float32))
    return waves


def audio_features(name: str, rows: int) -> np.ndarray:
    """Log-mel features [rows, mels, frames] of the sweeps, through transformers' WhisperFeatureExtractor."""
    return feature_extractor(name)(sweeps(rows), sampling_rate=16000,
                                   return_tensors="np").input_features.astype(np.float32)


def add_whisper_processor(name: str, out: Path) -> None:
    """What a Whisper checkpoint ships beside the model: preprocessor_config.json (the feature
    extractor above) and a tokenizer.json with the generation config's special tokens at their ids
    (start, pad, end, languages, tasks, no-timestamps) and a byte-level symbol for every other id,
    so that a text decodes back to its ids."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    v = VARIANTS[name]
    feature_extractor(name).save_pretrained(out)
    gen = json.loads((out / "generation_config.json").read_text())
    special = {v.config["decoder_start_token_id"]: "<|startoftranscript|>", v.config["pad_token_id"]: "<|pad|>",
               v.config["eos_token_id"]: "<|endoftext|>"}
    special.update({i: lang for lang, i in gen.get("lang_to_id", {}).items()})
    special.update({i: f"<|{task}|>" for task, i in gen.get("task_to_id", {}).items()})
    if "no_timestamps_token_id" in gen:
        special[gen["no_timestamps_token_id"]] = "<|notimestamps|>"
    symbols = iter(sorted(pre_tokenizers.ByteLevel.alphabet()))
    vocab = {special[i] if i in special else next(symbols): i for i in range(v.config["vocab_size"])}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(special[i], special=True) for i in sorted(special)])
    assert all(tok.token_to_id(t) == i for i, t in special.items())
    tok.save(str(out / "tokenizer.json"))


@dataclasses.dataclass(frozen=True)
class Variant:
    cls: type
    config_cls: type
    config: dict
    generation: dict  # generation_config.json beyond the config's token ids
    # written as older releases come (flan-t5, mt5): lm_head.weight of its own next to shared.weight
    # and config.json's tie_word_embeddings false, which transformers 5 reads as untied
    separate_head: bool = False
    generates: bool = True  # transformers' generate runs it (the generation tests take it)
    classifier: bool = False  # a *ForSequenceClassification head (forward only)
    audio: bool = False  # Whisper: log-mel features in (audio_features)
    waveform: bool = False  # Moonshine: the samples and their mask in (waveforms)
    gains: tuple = (2.0, 1.0)  # the tables' and head's init gain, the other linears' (_init_weights)
    bare: str = ""  # "model": the bare model (last_hidden_state, encoder_last_hidden_state); "encoder": T5's encoder


VARIANTS = {
    # post-norm, layernorm_embedding, learned positions (offset 2), tied head, final_logits_bias
    "bart": Variant(BartForConditionalGeneration, BartConfig, {**COMMON, "activation_function": "gelu"},
                    {"forced_eos_token_id": 2, "no_repeat_ngram_size": 3}),
    # scaled embeddings, untied head, relu, unequal stacks
    "bart_untied": Variant(BartForConditionalGeneration, BartConfig,
                           {**COMMON, "activation_function": "relu", "scale_embedding": True,
                            "tie_word_embeddings": False, "encoder_layers": 3, "decoder_layers": 1,
                            "encoder_attention_heads": 2, "encoder_ffn_dim": 40},
                           {"min_length": 6}),
    # pre-norm with final norms
    "mbart": Variant(MBartForConditionalGeneration, MBartConfig,
                     {**COMMON, "scale_embedding": True, "decoder_attention_heads": 8},
                     {"forced_eos_token_id": 2}),
    # a computed sinusoid table (none in the checkpoint), pad = the last id, swish
    "marian": Variant(MarianMTModel, MarianConfig,
                      {**COMMON, "scale_embedding": True, "pad_token_id": VOCAB - 1,
                       "decoder_start_token_id": VOCAB - 1, "eos_token_id": 0, "activation_function": "swish"},
                      {}),
    # two tables (share_encoder_decoder_embeddings false), a decoder vocabulary of its own
    "marian_separate": Variant(MarianMTModel, MarianConfig,
                               {**COMMON, "scale_embedding": True, "pad_token_id": 100, "decoder_start_token_id": 100,
                                "eos_token_id": 0, "share_encoder_decoder_embeddings": False,
                                "decoder_vocab_size": 112, "tie_word_embeddings": False},
                               {}),
    # odd widths: the sinusoid tables' uneven halves (Marian: sines over the ceiling; M2M100: a zero column)
    "marian_odd": Variant(MarianMTModel, MarianConfig,
                          {**COMMON, "d_model": 33, "encoder_attention_heads": 3, "decoder_attention_heads": 3,
                           "pad_token_id": VOCAB - 1, "decoder_start_token_id": VOCAB - 1, "eos_token_id": 0}, {}),
    "m2m100_odd": Variant(M2M100ForConditionalGeneration, M2M100Config,
                          {**COMMON, "d_model": 33, "encoder_attention_heads": 3, "decoder_attention_heads": 3}, {}),
    # sinusoids computed from positions that skip padding, pre-norm, a forced target-language token
    "m2m100": Variant(M2M100ForConditionalGeneration, M2M100Config, {**COMMON, "scale_embedding": True},
                      {"forced_bos_token_id": 120}),
    # T5 v1.0: relu, the tied head after the decoder's output × d_model^-½; relative buckets that
    # saturate within the test's lengths (max distance 6). (A decoder deeper than the encoder is
    # exported right, but transformers' generate sizes its cache by num_layers and fails on it.)
    "t5": Variant(T5ForConditionalGeneration, T5Config, {**T5_COMMON, "num_layers": 3}, {}),
    "t5_deep_decoder": Variant(T5ForConditionalGeneration, T5Config, {**T5_COMMON, "num_decoder_layers": 3}, {},
                               generates=False),
    # T5 v1.1 / flan-t5: gated-gelu, an untied head, no output scale; 2 heads of 24 (d_kv·heads ≠ d_model)
    "t5_v11": Variant(T5ForConditionalGeneration, T5Config,
                      {**T5_COMMON, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "num_heads": 2,
                       "d_kv": 24}, {}, separate_head=True),
    "mt5": Variant(MT5ForConditionalGeneration, MT5Config, {**T5_COMMON, "feed_forward_proj": "gated-gelu"}, {},
                   separate_head=True),
    # sequence classification: the decoder on the sources shifted right, the last EOS's state
    "bart_classifier": Variant(BartForSequenceClassification, BartConfig, {**COMMON, "num_labels": 3}, {},
                               generates=False, classifier=True),
    "mbart_classifier": Variant(MBartForSequenceClassification, MBartConfig, {**COMMON, "num_labels": 2,
                                                                            "scale_embedding": True}, {},
                                generates=False, classifier=True),
    # Whisper: 1-second windows (max_source_positions 50: 100 frames), the prompt built from the
    # generation config: a language and task given; the language detected; the legacy
    # forced_decoder_ids of an English-only model. suppress_tokens, begin_suppress_tokens.
    "whisper": Variant(WhisperForConditionalGeneration, WhisperConfig, WHISPER, {**WHISPER_GEN, "language": "fr",
                                                                                  "task": "transcribe"}, audio=True),
    "whisper_detect": Variant(WhisperForConditionalGeneration, WhisperConfig, {**WHISPER, "decoder_layers": 1},
                              WHISPER_GEN, audio=True),
    # large-v3's 128 mels; English-only: no languages, the prompt from forced_decoder_ids
    "whisper_128_mels": Variant(WhisperForConditionalGeneration, WhisperConfig, {**WHISPER, "num_mel_bins": 128},
                                {"no_timestamps_token_id": 84, "forced_decoder_ids": [[1, 84]], "suppress_tokens": [1, 2],
                                 "begin_suppress_tokens": [92]}, audio=True),
    # released checkpoints' 30-second window (3,000 frames), which onnxruntime-genai takes
    "whisper_30s": Variant(WhisperForConditionalGeneration, WhisperConfig, {**WHISPER, "max_source_positions": 1500},
                           {**WHISPER_GEN, "language": "de", "task": "translate"}, audio=True),
    # Moonshine (its tables at a lower gain, its linears higher: else its greedy tokens repeat one id)
    "moonshine": Variant(MoonshineForConditionalGeneration, MoonshineConfig, MOONSHINE, {}, waveform=True,
                         gains=(0.5, 1.25)),
    # heads of 24: 21 rotated (odd: transformers turns 11 pairs), an explicit rope_parameters, q/k/v biases, other
    # activations, unequal stacks
    "moonshine_odd": Variant(MoonshineForConditionalGeneration, MoonshineConfig,
                             {**MOONSHINE, "hidden_size": 48, "encoder_num_attention_heads": 2,
                              "decoder_num_attention_heads": 2, "attention_bias": True, "encoder_hidden_act": "relu",
                              "decoder_hidden_act": "gelu", "encoder_num_hidden_layers": 3, "decoder_num_hidden_layers": 1,
                              "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0,
                                                  "partial_rotary_factor": 0.9}, "eos_token_id": 95},
                             {}, waveform=True, gains=(0.5, 1.25)),
    # the bare models (each lineage's stacks, no head) and T5's encoders alone
    "bart_model": Variant(BartModel, BartConfig, {**COMMON, "activation_function": "gelu"}, {}, generates=False,
                          bare="model"),
    "mbart_model": Variant(MBartModel, MBartConfig, {**COMMON, "scale_embedding": True}, {}, generates=False,
                           bare="model"),
    "marian_model": Variant(MarianModel, MarianConfig,
                            {**COMMON, "scale_embedding": True, "pad_token_id": VOCAB - 1,
                             "decoder_start_token_id": VOCAB - 1, "eos_token_id": 0}, {}, generates=False, bare="model"),
    "m2m100_model": Variant(M2M100Model, M2M100Config, {**COMMON, "scale_embedding": True}, {}, generates=False,
                            bare="model"),
    "t5_model": Variant(T5Model, T5Config, T5_COMMON, {}, generates=False, bare="model"),
    "mt5_model": Variant(MT5Model, MT5Config, {**T5_COMMON, "feed_forward_proj": "gated-gelu"}, {}, generates=False,
                         bare="model"),
    "umt5_model": Variant(UMT5Model, UMT5Config, {**T5_COMMON, "feed_forward_proj": "gated-silu"}, {}, generates=False,
                          bare="model"),
    "t5_encoder": Variant(T5EncoderModel, T5Config, {**T5_COMMON, "feed_forward_proj": "gated-gelu"}, {},
                          generates=False, bare="encoder"),
    "mt5_encoder": Variant(MT5EncoderModel, MT5Config, T5_COMMON, {}, generates=False, bare="encoder"),
    "umt5_encoder": Variant(UMT5EncoderModel, UMT5Config, {**T5_COMMON, "feed_forward_proj": "gated-silu"}, {},
                            generates=False, bare="encoder"),
    "whisper_model": Variant(WhisperModel, WhisperConfig, WHISPER, {}, generates=False, audio=True, bare="model"),
    "moonshine_model": Variant(MoonshineModel, MoonshineConfig, MOONSHINE, {}, generates=False, waveform=True,
                               gains=(0.5, 1.25), bare="model"),
    # a relative bias in every layer; gated-silu
    "umt5": Variant(UMT5ForConditionalGeneration, UMT5Config, {**T5_COMMON, "feed_forward_proj": "gated-silu"}, {}),
}


def _init_weights(model: torch.nn.Module, seed: int, gains=(2.0, 1.0)) -> None:
    g = torch.Generator().manual_seed(seed)
    table_gain, linear_gain = gains
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not p.requires_grad:  # Marian's sinusoid table: fixed, and not saved
                continue
            if p.dim() == 2 and ("embed_positions" in name or "relative_attention_bias" in name):
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
            elif p.dim() == 2 and ("shared" in name or "embed_tokens" in name or "lm_head" in name):
                p.copy_(torch.randn(p.shape, generator=g) * table_gain / math.sqrt(p.shape[1]))
            elif p.dim() >= 2:  # linears [out, in]; convolutions [out, in, kernel]
                gain = 2.0 if name.endswith(("q_proj.weight", "k_proj.weight")) else linear_gain
                p.copy_(torch.randn(p.shape, generator=g) * gain / math.sqrt(p[0].numel()))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias.copy_(torch.randn(model.final_logits_bias.shape, generator=g))


def save_checkpoint(name: str, out: Path) -> Path:
    v = VARIANTS[name]
    torch.manual_seed(0)
    model = v.cls(v.config_cls(**v.config, attn_implementation="eager")).eval()
    _init_weights(model, seed=1, gains=v.gains)
    if not v.classifier and not v.bare:
        model.generation_config = GenerationConfig(
            decoder_start_token_id=v.config["decoder_start_token_id"], eos_token_id=v.config["eos_token_id"],
            pad_token_id=v.config["pad_token_id"], bos_token_id=v.config.get("bos_token_id"), **v.generation)
    model.save_pretrained(out)
    if v.waveform:
        waveform_extractor().save_pretrained(out)
    if v.separate_head:
        weights = load_file(out / "model.safetensors")
        g = torch.Generator().manual_seed(2)
        head = torch.randn(model.lm_head.weight.shape, generator=g) * 2 / math.sqrt(model.config.d_model)
        weights["lm_head.weight"] = head
        save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
        cfg = json.loads((out / "config.json").read_text())
        cfg["tie_word_embeddings"] = False
        cfg.pop("scale_decoder_outputs", None)
        (out / "config.json").write_text(json.dumps(cfg, indent=2))
        model = load(out)
        assert torch.equal(model.lm_head.weight, head) and model.lm_head.weight.data_ptr() != model.shared.weight.data_ptr(), \
            f"{name}: transformers did not read the separate lm_head"
    # the checkpoint as transformers reads it back gives the saved model's logits exactly
    back = load(out, v.classifier, v.cls if v.bare else None)
    ids = torch.cat([torch.arange(3, 12), torch.tensor([v.config["eos_token_id"]])])[None]
    dec = torch.tensor([[v.config["decoder_start_token_id"], 5, 6]])
    kwargs = {} if v.classifier or v.bare == "encoder" else {"decoder_input_ids": dec}
    source = ({"input_features": torch.from_numpy(audio_features(name, 1))} if v.audio
              else {k: torch.from_numpy(x) for k, x in waveforms(2).items()} if v.waveform
              else {"input_ids": ids})
    if v.waveform:
        kwargs = {"decoder_input_ids": dec.expand(2, -1)}
    with torch.no_grad():
        a, b = model(**source, **kwargs), back(**source, **kwargs)
        a, b = (a.last_hidden_state, b.last_hidden_state) if v.bare else (a.logits, b.logits)
    assert torch.equal(a, b), f"{name}: the saved checkpoint does not reload to the same model"
    return out


def load(path: Path, classifier: bool = False, cls=None, attn: str = "eager"):
    """The checkpoint's model, eager attention unless `attn` names another (the seed's captures differ by it: sdpa,
    transformers' default, takes a static cache's 4-D mask as booleans)."""
    if cls is not None:  # a bare model (its class, which the auto classes do not all map)
        return cls.from_pretrained(path, attn_implementation=attn).eval()
    audio = json.loads((Path(path) / "config.json").read_text()).get("model_type") in ("whisper", "moonshine")
    auto = (AutoModelForSequenceClassification if classifier else AutoModelForSpeechSeq2Seq if audio
            else AutoModelForSeq2SeqLM)
    return auto.from_pretrained(path, attn_implementation=attn).eval()
