"""Encoder-decoder models (src/arch/seq2seq.c) against transformers: BART, mBART, Marian, M2M100, T5,
MT5, UMT5, Whisper and Moonshine.

* the plain forward (`model`: input_ids, attention_mask, decoder_input_ids → logits and the
  encoder's last hidden state) in ONNX Runtime, OpenVINO, torch (the .pt2) and ExecuTorch, padded
  rows included, within 1e-4;
* the generation components (encoder, prefill, decode: optimum's seq2seq names) driven by the
  example loops (examples/generate_onnx.py and generate_openvino.py, in-process and on the
  command line): greedy search equal to transformers' `generate` token for token, and every
  step's logits within 1e-4, at batch 1 and batch 3 (right-padded sources), with a growing and a
  static self-attention cache;
* a multi-token decode (an encoder and one decoder for prompt and steps): OpenVINO's stateful
  layout (optimum-intel's openvino_encoder_model.xml and openvino_decoder_model.xml, the caches in
  variables) and the stateless one (the encoder returning the cross-attention cache) in ONNX
  Runtime, torch and ExecuTorch, through the same loops; Whisper's through OpenVINO GenAI's
  WhisperPipeline and onnxruntime-genai;
* the bare models (BartModel, T5Model, WhisperModel, MoonshineModel, ...) and T5's encoders alone: their last hidden
  states (and the encoder's) within 1e-4 in ONNX Runtime and OpenVINO, some in torch and ExecuTorch;
* the seed's I/O profile (io "seed"), with a growing and a static cache (its StaticCache in both
  halves of the EncoderDecoderCache): prefill and decode equal to transformers.exporters' own
  export of the same model (ONNX, OpenVINO, and torch.export: its call's pytree specs, the
  EncoderDecoderCache and encoder_outputs objects) and generating transformers' tokens (also through
  the seed's own ExportedModel runners on hfx's .pt2, ONNX, OpenVINO and ExecuTorch folders);
* the components against transformers.exporters' decomposition of the same model, and the
  refusals (a static cache in a multi-token decode or a stateful one, a .pt2's static cross-attention
  cache over sources of varying length).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import etutil
import ovutil
import seq2seq_models
from conftest import (PARITY_ATOL, assert_config_refused, assert_logits_close, built_once, call_pt2, describe,
                      load_pt2, run_hfx)
from genutil import compare_generation, run_loop

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# f32 compute and cache (the CPU plugin's defaults are bf16 where the CPU has it, a u8 cache)
OV_CPU = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}
NEW_TOKENS = 32
CLASSIFIERS = [n for n, v in seq2seq_models.VARIANTS.items() if v.classifier]
BARE = [n for n, v in seq2seq_models.VARIANTS.items() if v.bare]
VARIANTS = [n for n in seq2seq_models.VARIANTS if n not in CLASSIFIERS and n not in BARE]
GENERATING = [n for n in VARIANTS if seq2seq_models.VARIANTS[n].generates]
# one variant per architecture, for the formats whose runs cost more (.pt2, ExecuTorch)
PER_ARCHITECTURE = ["bart", "mbart", "marian", "m2m100", "t5_v11", "mt5", "umt5", "whisper", "moonshine"]
# sources: the first long enough to need its positions, the others padded on the right
SOURCES = [[5, 17, 33, 40, 8, 9, 61, 70, 44, 12, 3], [7, 3, 12, 90], [44, 45, 46, 47, 48, 49]]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("seq2seq")
    def make(name):
        return seq2seq_models.save_checkpoint(name, root / name)
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    root = tmp_path_factory.mktemp("seq2seq-exports")
    done = {}

    def get(name, *flags, dynamic=True):
        key = (name, flags, dynamic)
        if key not in done:
            out = root / f"{name}-{len(done)}"
            proc = run_hfx(["export", ckpt(name), out, *(["--dynamic"] if dynamic else []), *flags])
            done[key] = out if proc.returncode == 0 else "export failed:\n" + describe(proc)
        if isinstance(done[key], str):
            pytest.fail(done[key], pytrace=False)
        return done[key]
    return get


def loop_module(runtime: str):
    path = EXAMPLES / f"generate_{runtime}.py"
    spec = importlib.util.spec_from_file_location(f"generate_{runtime}_s2s", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LOOPS = {}


def loop(runtime: str):
    if runtime not in LOOPS:
        LOOPS[runtime] = loop_module(runtime)
    return LOOPS[runtime]


def right_padded(rows, pad):
    length = max(map(len, rows))
    ids = torch.tensor([r + [pad] * (length - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (length - len(r)) for r in rows])
    return ids, mask


def whisper_reference(model, features):
    """Whisper's greedy search: the decoder prompt WhisperForConditionalGeneration.generate builds
    (its _retrieve_init_tokens: start, language — given, from forced_decoder_ids, or detected — task,
    no-timestamps), then transformers' generic generate from that prompt, which applies the
    generation config's suppress_tokens and begin_suppress_tokens. Not Whisper's own generate loop:
    on these tiny random models, transformers 5.24's returns other tokens for another
    max_new_tokens (8 against 16: the 4th differs) and one row of a batch whose rows end at
    different steps, which no greedy search over the model does."""
    from transformers.generation.utils import GenerationMixin

    f = torch.from_numpy(features)
    frames = 2 * model.config.max_source_positions
    gen = copy.deepcopy(model.generation_config)
    gen.return_timestamps = False  # what Whisper's generate sets first (no timestamp decoding)
    with torch.no_grad():
        init = model._retrieve_init_tokens(f, len(f), gen, model.config, frames, {})
        out = GenerationMixin.generate(model, input_features=f, decoder_input_ids=init, max_new_tokens=NEW_TOKENS,
                                       do_sample=False, num_beams=1, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, init.shape[1]:].tolist(), torch.stack(out.logits).numpy()


def sources(name, batch):
    """The encoder's input for `batch` rows: token ids (SOURCES), Whisper's log-mel features, or Moonshine's
    samples and mask (a dict)."""
    v = seq2seq_models.VARIANTS[name]
    if v.audio:
        return seq2seq_models.audio_features(name, batch)
    if v.waveform:
        return seq2seq_models.waveforms(batch)
    return SOURCES[:batch]


def reference(model_dir, rows):
    """transformers' greedy search: the new tokens (the decoder's prompt dropped) and each step's raw
    logits [steps, B, vocab]. `rows`: token ids, or log-mel features (Whisper)."""
    model = seq2seq_models.load(model_dir)
    if isinstance(rows, np.ndarray):
        return whisper_reference(model, rows)
    elif isinstance(rows, dict):
        source = {k: torch.from_numpy(v) for k, v in rows.items()}
    else:
        ids, mask = right_padded(rows, model.generation_config.pad_token_id)
        source = {"input_ids": ids, "attention_mask": mask}
    with torch.no_grad():
        out = model.generate(**source, max_new_tokens=NEW_TOKENS, do_sample=False, num_beams=1, output_logits=True,
                             return_dict_in_generate=True)
    return out.sequences[:, -len(out.logits):].tolist(), torch.stack(out.logits).numpy()


# ---- the plain forward ---------------------------------------------------------------------------


def forward_feed(name, config, decoder=True):
    """A forward's inputs for 2 rows, in the graph's order: the encoder's (padded token ids, log-mel features or
    samples), then decoder_input_ids from decoder_start_token_id where the model has a decoder."""
    rows = sources(name, 2)
    if isinstance(rows, np.ndarray):
        feed = {"input_features": rows}
    elif isinstance(rows, dict):
        feed = dict(rows)
    else:
        ids, mask = right_padded(rows, config.pad_token_id)
        feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}
    if decoder:
        start = config.decoder_start_token_id
        feed["decoder_input_ids"] = np.array([[start, 9, 10, 11, 12], [start, 13, 14, 15, 16]])
    return feed


def forward_reference(model_dir, name):
    """The forward's inputs (in the graph's order) and transformers' logits and encoder output."""
    model = seq2seq_models.load(model_dir)
    feed = forward_feed(name, model.config)
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(v) for k, v in feed.items()})
    return feed, out.logits.numpy(), out.encoder_last_hidden_state.numpy()


@pytest.mark.parametrize("name", VARIANTS)
def test_forward_onnx(name, ckpt, export_dir):
    import onnxruntime as ort

    out = export_dir(name, "--format", "onnx")
    feed, logits, hidden = forward_reference(ckpt(name), name)
    s = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in s.get_inputs()] == list(feed)
    got = dict(zip([o.name for o in s.get_outputs()], s.run(None, feed)))
    assert_logits_close(got["logits"], logits, f"{name} onnx logits")
    assert_logits_close(got["encoder_last_hidden_state"], hidden, f"{name} onnx encoder_last_hidden_state")


@pytest.mark.parametrize("name", VARIANTS)
def test_forward_openvino(name, ckpt, export_dir):
    import openvino as ov

    out = export_dir(name, "--format", "openvino")
    feed, logits, hidden = forward_reference(ckpt(name), name)
    xml = out / json.loads((out / "export.json").read_text())["components"]["model"]["file"]
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    res = compiled(feed)
    got = {o.get_any_name(): res[o] for o in compiled.outputs}
    assert_logits_close(got["logits"], logits, f"{name} openvino logits")
    assert_logits_close(got["encoder_last_hidden_state"], hidden, f"{name} openvino encoder_last_hidden_state")


@pytest.mark.parametrize("name", VARIANTS)
def test_forward_seed_loader(name, ckpt, export_dir):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's plain ONNX export, called as the model
    (keywords): Seq2SeqLMOutput with transformers' logits and encoder output within 1e-4."""
    from transformers.exporters import ExportedModel

    out = export_dir(name, "--format", "onnx")
    feed, logits, hidden = forward_reference(ckpt(name), name)
    got = ExportedModel.from_pretrained(out)(**{k: torch.from_numpy(np.asarray(v)) for k, v in feed.items()})
    assert type(got).__name__ == "Seq2SeqLMOutput", type(got)
    assert_logits_close(np.asarray(got.logits), logits, f"{name} logits (the seed's loader)")
    assert_logits_close(np.asarray(got.encoder_last_hidden_state), hidden, f"{name} encoder output (the seed's loader)")


@pytest.mark.parametrize("name", PER_ARCHITECTURE)
def test_forward_torch_program(name, ckpt, export_dir):
    """The .pt2 runs in torch with transformers' keywords' order (input_ids, attention_mask,
    decoder_input_ids)."""
    out = export_dir(name, "--format", "dynamo")
    feed, logits, hidden = forward_reference(ckpt(name), name)
    got = call_pt2(load_pt2(out / "model.pt2"), feed)  # (keywords; Seq2SeqLMOutput's fields back in order)
    assert_logits_close(got[0].numpy(), logits, f"{name} .pt2 logits")
    assert_logits_close(got[1].numpy(), hidden, f"{name} .pt2 encoder_last_hidden_state")


@pytest.mark.parametrize("backend", ["xnnpack", "portable"])
@pytest.mark.parametrize("name", PER_ARCHITECTURE)
def test_forward_executorch(name, backend, ckpt, export_dir, tmp_path):
    import etutil

    cfg = tmp_path / "et.json"
    v = seq2seq_models.VARIANTS[name]
    bounds = ({"input_features": {"0": {"name": "batch_size", "min": 1, "max": 4}}} if v.audio
              else {**SAMPLES, "decoder_input_ids": {"1": {"name": "decoder_sequence_length", "min": 1, "max": 32}}}
              if v.waveform else {"input_ids": {"1": {"name": "sequence", "min": 1, "max": 32}}})
    cfg.write_text(json.dumps({"export_format": "executorch", "backend": backend, "dynamic_shapes": bounds}))
    out = export_dir(name, "--config", str(cfg))
    feed, logits, hidden = forward_reference(ckpt(name), name)
    got = etutil.worker().run(out / "model.pte", list(feed.values()))
    assert_logits_close(got[0], logits, f"{name} executorch {backend} logits")
    assert_logits_close(got[1], hidden, f"{name} executorch {backend} encoder_last_hidden_state")


# Moonshine's sample axis in an ExecutorTorch export: up to a second
SAMPLES = {"input_values": {"1": {"name": "samples", "min": 895, "max": 16000}}}


# ---- sequence classification ----------------------------------------------------------------


def classifier_feed(name):
    """Sources with EOS (2) where transformers needs it: the same count on every row, the last one
    read; a row right-padded after its EOS."""
    pad = seq2seq_models.VARIANTS[name].config["pad_token_id"]
    rows = [[5, 17, 2, 33, 40, 2], [7, 2, 3, 2, pad, pad], [2, 9, 10, 11, 2, pad]]
    ids = np.array(rows, np.int64)
    return {"input_ids": ids, "attention_mask": (ids != pad).astype(np.int64)}


@pytest.mark.parametrize("fmt", ["onnx", "openvino", "dynamo", "executorch"])
@pytest.mark.parametrize("name", CLASSIFIERS)
def test_classifier(name, fmt, ckpt, export_dir, tmp_path):
    """BartForSequenceClassification, MBartForSequenceClassification: logits [batch, labels] from the
    decoder's state at each row's last EOS, the decoder reading the sources shifted right."""
    feed = classifier_feed(name)
    model = seq2seq_models.load(ckpt(name), classifier=True)
    with torch.no_grad():
        want = model(**{k: torch.from_numpy(v) for k, v in feed.items()}).logits.numpy()
    args = [feed["input_ids"], feed["attention_mask"]]
    if fmt == "onnx":
        import onnxruntime as ort

        out = export_dir(name, "--format", "onnx")
        got = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(["logits"], feed)[0]
    elif fmt == "openvino":
        import openvino as ov

        out = export_dir(name, "--format", "openvino")
        xml = out / json.loads((out / "export.json").read_text())["components"]["model"]["file"]
        compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got = compiled(feed)[compiled.output("logits")]
    elif fmt == "dynamo":
        out = export_dir(name, "--format", "dynamo")
        got = call_pt2(load_pt2(out / "model.pt2"), feed)[0].numpy()
    else:
        import etutil

        cfg = tmp_path / "et.json"
        cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {
            "input_ids": {"1": {"name": "sequence", "min": 1, "max": 32}}}}))
        out = export_dir(name, "--config", str(cfg), "--batch-size", "3")  # ExecuTorch fixes the batch
        got = etutil.worker().run(out / "model.pte", args)[0]
    assert got.shape == want.shape, (got.shape, want.shape)
    assert_logits_close(got[:, None], want[:, None], f"{name} {fmt} classifier logits")


# ---- generation -----------------------------------------------------------------------------------


CACHES = {"dynamic": (), "static": ("--cache", "static", "--max-cache-len", "48")}


@pytest.fixture(scope="module")
def gen_export(export_dir, tmp_path_factory):
    """An export for generation: ONNX, or OpenVINO's separate graphs (stateful false)."""
    stateless = tmp_path_factory.mktemp("seq2seq-cfg") / "openvino-stateless.json"
    stateless.write_text(json.dumps({"export_format": "openvino", "stateful": False}))

    def get(name, runtime, cache):
        fmt = ("--format", "onnx") if runtime == "onnx" else ("--config", str(stateless))
        return export_dir(name, *fmt, "--for-generation", *CACHES[cache])
    return get


@pytest.mark.parametrize("cache", list(CACHES))
@pytest.mark.parametrize("runtime", ["onnx", "openvino"])
@pytest.mark.parametrize("name", GENERATING)
def test_generation(name, runtime, cache, ckpt, gen_export):
    check_generation(gen_export(name, runtime, cache), runtime, ckpt(name), f"{name} {runtime} {cache}", name)


def check_generation(out, runtime, model_dir, label, name):
    """The example loop of `runtime`, in-process, at batch 1 and 3 against transformers' generate."""
    mod = loop(runtime)
    export = mod.Export(out)
    eos_ids, pad_id = mod.read_generation_config(out)
    for batch in (1, 3):
        rows = sources(name, batch)
        tokens, logits = mod.generate(export, rows, NEW_TOKENS, eos_ids, pad_id)
        want_tokens, want_logits = reference(model_dir, rows)
        compare_generation(tokens, logits, want_tokens, want_logits, f"{label} batch {batch}", runtime=runtime)


@pytest.mark.parametrize("name", GENERATING)
def test_generation_stateful(name, ckpt, export_dir):
    """OpenVINO's default for generation: the encoder and one decoder for prompt and steps, as
    optimum-intel names them; the self-attention cache and the cross-attention keys and values (from
    the first call's encoder_hidden_states) in the request's variables, beam_idx reordering the rows."""
    import openvino as ov

    out = export_dir(name, "--format", "openvino", "--for-generation")
    manifest = json.loads((out / "export.json").read_text())
    assert {n: c["file"] for n, c in manifest["components"].items()} == {
        "encoder": "openvino_encoder_model.xml", "decoder": "openvino_decoder_model.xml"}
    model = ov.Core().read_model(out / "openvino_decoder_model.xml")
    audio = seq2seq_models.VARIANTS[name].audio
    assert [i.get_any_name() for i in model.inputs] == (
        ["input_ids"] + ([] if audio else ["encoder_attention_mask"]) + ["encoder_hidden_states", "beam_idx"])
    assert [o.get_any_name() for o in model.outputs] == ["logits"]
    assert len(model.get_sinks()) == 4 * decoder_layers(name)  # an Assign per self- and cross-attention key and value
    check_generation(out, "openvino", ckpt(name), f"{name} openvino stateful", name)


def decoder_layers(name):
    cfg = seq2seq_models.VARIANTS[name].config
    for key in ("decoder_layers", "num_decoder_layers", "decoder_num_hidden_layers", "num_layers"):
        if cfg.get(key):
            return cfg[key]


WHISPERS = [n for n in GENERATING if seq2seq_models.VARIANTS[n].audio]


@pytest.mark.parametrize("name", GENERATING)
def test_generation_multi_token_onnx(name, ckpt, export_dir):
    """--multi-token-decode: the encoder also returns every layer's cross-attention keys and values
    (present.{i}.encoder.*), and one decoder takes the prompt (an empty self-attention past) and
    each step, reading them as past_key_values.{i}.encoder.*."""
    import onnxruntime as ort

    out = export_dir(name, "--format", "onnx", "--for-generation", "--multi-token-decode")
    manifest = json.loads((out / "export.json").read_text())
    assert {n: c["file"] for n, c in manifest["components"].items()} == {"encoder": "encoder.onnx",
                                                                         "decoder": "decoder.onnx"}
    enc = ort.InferenceSession(str(out / "encoder.onnx"), providers=["CPUExecutionProvider"])
    cross = [f"present.{i}.encoder.{p}" for i in range(decoder_layers(name)) for p in ("key", "value")]
    mask = ["encoder_attention_mask"] if seq2seq_models.VARIANTS[name].waveform else []
    assert [o.name for o in enc.get_outputs()] == ["last_hidden_state"] + mask + cross
    check_generation(out, "onnx", ckpt(name), f"{name} onnx multi-token decode", name)


MULTI_TOKEN_OTHERS = ["bart", "t5_v11", "whisper", "moonshine"]


@pytest.mark.parametrize("name", MULTI_TOKEN_OTHERS)
def test_generation_multi_token_torch_program(name, ckpt, export_dir):
    out = export_dir(name, "--format", "dynamo", "--for-generation", "--multi-token-decode")
    check_generation(out, "torch", ckpt(name), f"{name} .pt2 multi-token decode", name)


@pytest.mark.parametrize("name", MULTI_TOKEN_OTHERS)
def test_generation_multi_token_executorch(name, ckpt, export_dir, tmp_path):
    check_generation_executorch(name, ("--multi-token-decode", "--max-cache-len", "48"), "multi-token decode", ckpt,
                                export_dir, tmp_path)


def test_whisper_onnxruntime_genai(ckpt, export_dir):
    """onnxruntime-genai's Whisper model type runs the ONNX multi-token decode through the
    genai_config.json hfx writes (its nominal names mapped to hfx's), on log-mel features given as
    the encoder's input and the decoder prompt as input_ids: its greedy tokens at batch 1 and 3 are
    transformers' greedy search from the same prompt without the suppress lists (onnxruntime-genai
    applies none). It takes 30-second windows only: a model of other windows gets no
    genai_config.json and a warning saying why."""
    import onnxruntime_genai as og
    from transformers.generation.utils import GenerationMixin

    name = "whisper_30s"
    out = export_dir(name, "--format", "onnx", "--for-generation", "--multi-token-decode")
    genai = json.loads((out / "genai_config.json").read_text())
    assert genai["model"]["type"] == "whisper" and genai["search"]["past_present_share_buffer"] is False
    model = seq2seq_models.load(ckpt(name))
    for batch in (1, 3):
        features = sources(name, batch)
        gen = copy.deepcopy(model.generation_config)
        gen.return_timestamps = False
        f = torch.from_numpy(features)
        with torch.no_grad():
            init = model._retrieve_init_tokens(f, batch, gen, model.config, features.shape[2], {})
            want = GenerationMixin.generate(model, input_features=f, decoder_input_ids=init, max_new_tokens=NEW_TOKENS,
                                            do_sample=False, num_beams=1, suppress_tokens=None,
                                            begin_suppress_tokens=None)[:, init.shape[1]:].tolist()
        runtime = og.Model(str(out))
        params = og.GeneratorParams(runtime)
        params.set_search_options(max_length=init.shape[1] + NEW_TOKENS, do_sample=False, batch_size=batch)
        generator = og.Generator(runtime, params)
        # contiguous (transformers expands one prompt row: strides of 0) and kept alive: NamedTensors
        # wraps an array's buffer as it is, without a copy
        prompt = np.ascontiguousarray(init.numpy(), dtype=np.int32)
        inputs = og.NamedTensors()
        inputs["input_features"] = features  # the encoder's graph name (genai_config maps audio_features to it)
        inputs["input_ids"] = prompt
        generator.set_inputs(inputs)
        while not generator.is_done():
            generator.generate_next_token()
        eos = model.generation_config.eos_token_id
        for row in range(batch):
            got = [int(t) for t in generator.get_sequence(row)][init.shape[1]:]
            end = want[row].index(eos) + 1 if eos in want[row] else len(want[row])
            assert got[:end] == want[row][:end], f"row {row} of {batch}: onnxruntime-genai {got}, transformers {want[row]}"
    one_second = run_hfx(["export", ckpt("whisper"), out.parent / "whisper-1s", "--format", "onnx", "--dynamic",
                          "--for-generation", "--multi-token-decode"])
    assert one_second.returncode == 0, describe(one_second)
    assert not (out.parent / "whisper-1s" / "genai_config.json").exists()
    assert "3,000 frames" in one_second.stderr, describe(one_second)


@pytest.mark.parametrize("name", WHISPERS)
def test_whisper_pipeline(name, ckpt, tmp_path):
    """OpenVINO GenAI's WhisperPipeline on hfx's stateful export of a checkpoint with its
    preprocessor_config.json and tokenizer.json: from the waveform (its own feature extractor),
    the token ids it streams are transformers' greedy tokens on transformers' features of the same
    waveform, and its text is the tokenizer's decoding of them. The language and task are passed
    as a user passes them (GenAI reads neither from generation_config.json); where no language is
    given, both detect it. A multilingual checkpoint without a task gets task "transcribe" in its
    generation config: GenAI then puts the transcribe token after a detected language, transformers
    leaves the task out (its _retrieve_init_tokens adds the default only after a given language).
    An English-only one says "is_multilingual": false, as the released ones do (GenAI's default is
    true)."""
    import shutil

    import openvino_genai
    from tokenizers import Tokenizer

    model_dir = tmp_path / "ckpt"
    shutil.copytree(ckpt(name), model_dir)
    seq2seq_models.add_whisper_processor(name, model_dir)
    gen_path = model_dir / "generation_config.json"
    gen = json.loads(gen_path.read_text())
    if gen.get("is_multilingual") and not gen.get("task"):
        gen_path.write_text(json.dumps({**gen, "task": "transcribe"}))
    elif "lang_to_id" not in gen:
        gen_path.write_text(json.dumps({**gen, "is_multilingual": False}))
    out = tmp_path / "out"
    proc = run_hfx(["export", model_dir, out, "--format", "openvino", "--dynamic", "--for-generation"])
    assert proc.returncode == 0, describe(proc)
    assert (out / "openvino_tokenizer.xml").is_file() and (out / "preprocessor_config.json").is_file()
    gen = json.loads((out / "generation_config.json").read_text())
    asked = {k: v for k, v in (("language", gen.get("language") and f"<|{gen['language']}|>"),
                               ("task", gen.get("task"))) if v}
    pipe = openvino_genai.WhisperPipeline(str(out), "CPU", **OV_CPU)
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    eos = gen["eos_token_id"]
    waves = seq2seq_models.sweeps(3)
    want_all, _ = reference(model_dir, seq2seq_models.audio_features(name, 3))
    for row, wave in enumerate(waves):
        streamed = ovutil.token_streamer()
        result = pipe.generate(wave.tolist(), max_new_tokens=NEW_TOKENS, streamer=streamed, **asked)
        want = want_all[row][:want_all[row].index(eos)] if eos in want_all[row] else want_all[row]
        assert streamed.ids == want, f"{name} row {row}: WhisperPipeline streamed {streamed.ids}, transformers {want}"
        assert result.texts[0] == tok.decode(want, skip_special_tokens=True), f"{name} row {row}: text"


@pytest.mark.parametrize("cache", list(CACHES))
@pytest.mark.parametrize("name", PER_ARCHITECTURE)
def test_generation_torch_program(name, cache, ckpt, export_dir):
    """The .pt2 components in torch (examples/generate_torch.py): a static cache written in place."""
    out = export_dir(name, "--format", "dynamo", "--for-generation", *CACHES[cache])
    check_generation(out, "torch", ckpt(name), f"{name} .pt2 {cache}", name)


@pytest.mark.parametrize("cache", list(CACHES))
@pytest.mark.parametrize("name", PER_ARCHITECTURE)
def test_generation_executorch(name, cache, ckpt, export_dir, tmp_path):
    """The .pte components in executorch.runtime (examples/generate_executorch.py in the executorch
    venv): batch 3, every length bounded (the sources by dynamic_shapes, the cache by max_cache_len)."""
    flags = CACHES[cache] if cache == "static" else ("--max-cache-len", "48")
    check_generation_executorch(name, flags, cache, ckpt, export_dir, tmp_path)


def check_generation_executorch(name, flags, label, ckpt, export_dir, tmp_path):
    """An ExecuTorch generation export at batch 3 (every length bounded: the sequence by
    dynamic_shapes, the cache by max_cache_len) in executorch.runtime against transformers."""
    import etutil

    cfg = tmp_path / "et.json"
    waveform = seq2seq_models.VARIANTS[name].waveform  # the samples' axis, the decoder's ids' own
    cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {  # Whisper: the decoder's ids
        **(SAMPLES if waveform else {}),
        "input_ids": {"1": {"name": "decoder_sequence_length" if waveform else "sequence", "min": 1, "max": 48}}}}))
    out = export_dir(name, "--config", str(cfg), "--for-generation", "--batch-size", "3", *flags)
    mod = loop("onnx")  # only for read_generation_config: the loop itself runs in the executorch venv
    eos_ids, pad_id = mod.read_generation_config(out)
    rows = sources(name, 3)
    plain = (rows if isinstance(rows, list) else {k: v.tolist() for k, v in rows.items()} if isinstance(rows, dict)
             else rows.tolist())
    tokens, logits = etutil.worker().generate(out, plain, NEW_TOKENS, eos_ids, pad_id)
    want_tokens, want_logits = reference(ckpt(name), rows)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} executorch {label}", runtime="executorch")


@pytest.mark.parametrize("name", ["mbart", "t5_v11"])
def test_generation_fixed_shapes(name, ckpt, export_dir):
    """Without --dynamic: batch 3, sources padded to the sample's 12 tokens, the prefill taking the
    one start token, the past still growing."""
    out = export_dir(name, "--format", "onnx", "--for-generation", "--batch-size", "3", "--sequence-length", "12",
                     dynamic=False)
    mod = loop("onnx")
    export = mod.Export(out)
    assert (export.encoder.batch, export.encoder.seq, export.prefill.seq) == (3, 12, 1)
    eos_ids, pad_id = mod.read_generation_config(out)
    want_tokens, want_logits = reference(ckpt(name), SOURCES)
    tokens, logits = mod.generate(export, SOURCES, NEW_TOKENS, eos_ids, pad_id)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} onnx fixed shapes")


@pytest.mark.parametrize("runtime", ["onnx", "openvino"])
def test_generation_command_line(runtime, ckpt, gen_export, tmp_path):
    """The example's command line on an encoder-decoder export: --input-ids are the sources, one
    JSON list of new tokens per row, the logits saved with --print-logits."""
    out = gen_export("m2m100", runtime, "dynamic")
    script = EXAMPLES / f"generate_{runtime}.py"
    res = run_loop(out, SOURCES, NEW_TOKENS, tmp_path / "logits.npz", script=script)
    assert res.proc.returncode == 0, describe(res.proc)
    want_tokens, want_logits = reference(ckpt("m2m100"), SOURCES)
    assert all(row[0] == 120 for row in res.tokens), "forced_bos_token_id must be the first new token"
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"m2m100 {runtime} command line",
                       runtime=runtime)


def test_components_and_names(gen_export):
    """encoder, prefill, decode, with optimum's seq2seq names; the self-attention cache grows, the
    cross-attention one comes out of the prefill and is only read by decode."""
    import onnxruntime as ort

    out = gen_export("bart", "onnx", "dynamic")
    manifest = json.loads((out / "export.json").read_text())
    assert sorted(manifest["components"]) == ["decode", "encoder", "prefill"]
    sess = {n: ort.InferenceSession(str(out / f"{n}.onnx"), providers=["CPUExecutionProvider"])
            for n in manifest["components"]}
    io = {n: ([i.name for i in s.get_inputs()], [o.name for o in s.get_outputs()]) for n, s in sess.items()}
    assert io["encoder"] == (["input_ids", "attention_mask"], ["last_hidden_state"])
    layers = seq2seq_models.VARIANTS["bart"].config["decoder_layers"]
    parts = ["decoder.key", "decoder.value", "encoder.key", "encoder.value"]
    assert io["prefill"][0] == ["input_ids", "encoder_attention_mask", "encoder_hidden_states"]
    assert io["prefill"][1] == ["logits"] + [f"present.{i}.{p}" for i in range(layers) for p in parts]
    assert io["decode"][0] == ["input_ids", "encoder_attention_mask"] + [
        f"past_key_values.{i}.{p}" for i in range(layers) for p in parts]
    assert io["decode"][1] == ["logits"] + [f"present.{i}.{p}" for i in range(layers) for p in parts[:2]]


def test_components_cover_the_seeds(ckpt):
    """transformers.exporters' decomposition of the same model: its components are hfx's prefill and
    decode (it leaves the encoder to generate(), which hfx exports as `encoder`), and its prefill
    takes the encoder's output as hfx's does."""
    from transformers.exporters.utils import decompose_for_generation

    model = seq2seq_models.load(ckpt("bart"))
    ids, mask = right_padded(SOURCES[:1], model.config.pad_token_id)
    comps = decompose_for_generation(model, {"input_ids": ids, "attention_mask": mask})
    assert list(comps) == ["prefill", "decode"]
    assert "encoder_outputs" in comps["prefill"][1] and "decoder_input_ids" in comps["prefill"][1]


# ---- the seed's I/O profile ("io": "seed") -------------------------------------------------------

SEED_IO = ["bart", "t5_v11", "whisper"]
SEED_MAX_CACHE = 48  # a static cache's slots: the prompt and NEW_TOKENS fit


def seed_io_export(ckpt, out, name, fmt, static=False):
    """hfx's export in the seed's profile; `static`: its StaticCache (OpenVINO's stateless: a stateful model keeps a
    growing cache); fmt "openvino-stateless": OpenVINO's stateless decode with either cache."""
    cfg = out.parent / f"{out.name}.json"
    stateless = fmt == "openvino-stateless" or (static and fmt == "openvino")
    cfg.write_text(json.dumps({"export_format": fmt.removesuffix("-stateless"), "dynamic": True, "io": "seed",
                               **({"stateful": False} if stateless else {})}))
    cache = ["--cache", "static", "--max-cache-len", str(SEED_MAX_CACHE)] if static else []
    proc = run_hfx(["export", ckpt(name), out, "--config", str(cfg), "--for-generation", "--quiet", *cache])
    assert proc.returncode == 0, describe(proc)
    return out


def seeds_own_export(model_dir, name, fmt, out, static=False):
    """transformers.exporters' export_for_generation of the same checkpoint (its prefill and decode); `static`: with
    generation_config's static cache, from the model as transformers loads it by default (sdpa: a boolean mask)."""
    import warnings

    from transformers import GenerationConfig
    from transformers.exporters import OnnxExporter, OpenVINOExporter
    from transformers.exporters.configs import OnnxConfig, OpenVINOConfig

    model = seq2seq_models.load(model_dir, attn="sdpa" if static else "eager")
    rows = sources(name, 1)
    inputs = ({"input_features": torch.from_numpy(rows)} if isinstance(rows, np.ndarray) else
              dict(zip(("input_ids", "attention_mask"), right_padded(rows, model.config.pad_token_id))))
    from transformers.exporters import DynamoExporter
    from transformers.exporters.configs import DynamoConfig
    exporter, config = {"onnx": (OnnxExporter, OnnxConfig), "openvino": (OpenVINOExporter, OpenVINOConfig),
                        "dynamo": (DynamoExporter, DynamoConfig)}[fmt]
    gen = GenerationConfig(cache_implementation="static", max_cache_len=SEED_MAX_CACHE) if static else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exporter().export_for_generation(model, inputs, config=config(dynamic=True),
                                         generation_config=gen).save_pretrained(str(out))
    return out


def graph_io(path):
    """(inputs, outputs[, variable ids]) of a graph: names in order, element types, ranks."""
    if path.suffix == ".onnx":
        import onnx

        m = onnx.load(str(path), load_external_data=False)
        side = lambda vs: [(v.name, v.type.tensor_type.elem_type, len(v.type.tensor_type.shape.dim)) for v in vs]
        return side(m.graph.input), side(m.graph.output)
    import openvino as ov

    m = ov.Core().read_model(str(path))
    side = lambda ps: [(p.get_any_name(), p.get_element_type().get_type_name(), p.get_partial_shape().rank.get_length())
                       for p in ps]
    return side(m.inputs), side(m.outputs), sorted(op.get_variable_id() for op in m.get_ops()
                                                   if op.get_type_name() == "ReadValue")


# (the seed's OpenVINO static export would keep the cache in variables, which hfx's stateless one does not)
SEED_IO_CASES = [("onnx", False), ("openvino", False), ("onnx", True)]


@pytest.mark.parametrize("fmt,static", SEED_IO_CASES, ids=lambda v: "static" if v is True else "" if v is False else v)
@pytest.mark.parametrize("name", SEED_IO)
def test_seed_io_equals_the_seeds(name, fmt, static, ckpt, tmp_path):
    """io "seed": the prefill and decode take and return what transformers.exporters' own export of
    the same model does — its forward's keywords (attention_mask, decoder_input_ids,
    encoder_outputs.last_hidden_state) and its EncoderDecoderCache flattened (every layer's
    self-attention keys and values, then every layer's cross-attention ones; input./output. around
    a step; the encoder's output passed through) — in order, with the same element types and ranks;
    OpenVINO's decode keeps that cache in variables of the same ids. A static cache (StaticCache in
    both halves): each layer's write counter cumulative_length after its keys and values, the prefill
    taking the counters alone, and a 4-D boolean decoder_attention_mask (none in Whisper's prefill,
    whose prompt is causal). export.json records the same keyword arguments. hfx also writes the
    encoder, which the seed leaves to generate()."""
    ours = seed_io_export(ckpt, tmp_path / "hfx", name, fmt, static)
    theirs = seeds_own_export(ckpt(name), name, fmt, tmp_path / "seed", static)
    prefix, ext = ("", ".onnx") if fmt == "onnx" else ("openvino_", ".xml")
    for comp in ("prefill", "decode"):
        assert graph_io(ours / f"{prefix}{comp}{ext}") == graph_io(theirs / f"{prefix}{comp}{ext}"), comp
    mine = json.loads((ours / "export.json").read_text())["components"]
    want = json.loads((theirs / "export.json").read_text())["components"]
    assert set(mine) == set(want) | {"encoder"}

    def kind(entry):  # what hfx can know without tracing: rank and dtype, or the container
        if "leaves" in entry:
            return {leaf: kind(e) for leaf, e in entry["leaves"].items()}
        return entry["container"] if "container" in entry else (entry["rank"], entry["dtype"])
    for comp in want:
        got_kwargs, want_kwargs = mine[comp]["metadata"]["kwargs"], want[comp]["metadata"]["kwargs"]
        assert {k: kind(v) for k, v in got_kwargs.items()} == {k: kind(v) for k, v in want_kwargs.items()}, comp


def plain_greedy(model_dir, rows):
    """transformers' greedy search without the generation config's logits processors (suppressed,
    forced or banned tokens), from the decoder start (Whisper: its prompt): new tokens, per-step
    logits, and the prompt."""
    from transformers.generation.utils import GenerationMixin

    model = seq2seq_models.load(model_dir)
    off = dict(suppress_tokens=None, begin_suppress_tokens=None, forced_bos_token_id=None, forced_eos_token_id=None,
               no_repeat_ngram_size=0, min_length=0, max_new_tokens=NEW_TOKENS, do_sample=False, num_beams=1,
               output_logits=True, return_dict_in_generate=True)
    with torch.no_grad():
        if isinstance(rows, np.ndarray):
            f = torch.from_numpy(rows)
            gen = copy.deepcopy(model.generation_config)
            gen.return_timestamps = False
            init = model._retrieve_init_tokens(f, len(f), gen, model.config, f.shape[2], {})
            out = GenerationMixin.generate(model, input_features=f, decoder_input_ids=init, **off)
        else:
            ids, mask = right_padded(rows, model.generation_config.pad_token_id)
            init = torch.full((len(rows), 1), model.generation_config.decoder_start_token_id)
            out = model.generate(input_ids=ids, attention_mask=mask, **off)
    n = len(out.logits)
    return out.sequences[:, -n:].tolist(), torch.stack(out.logits).numpy(), init.numpy()


def causal_slots(rows, start, length, slots):
    """A static cache's decoder_attention_mask [rows, 1, length, slots] as generate() makes it for queries at
    positions start.. : each sees the slots up to its own."""
    q = np.arange(start, start + length)[:, None]
    return np.broadcast_to(np.arange(slots)[None, :] <= q, (rows, 1, length, slots)).copy()


def seed_io_loop(out, fmt, rows, prompt, eos, pad):
    """Greedy search over hfx's seed-profile export as a user of the seed's graphs runs it: hfx's
    encoder, then the prefill on the decoder prompt with the encoder's output (its whole cache
    back), then decode steps feeding each output.<cache> back as input.<cache> — in OpenVINO, the
    stateful decode's variables set from the prefill's cache first. A static cache: its counters start
    at 0 and each call takes the 4-D causal mask over the cache's slots."""
    audio = isinstance(rows, np.ndarray)
    mask = None if audio else right_padded(rows, pad)[1].numpy()
    source = {"input_features": rows} if audio else {"input_ids": right_padded(rows, pad)[0].numpy(), "attention_mask": mask}
    if fmt == "onnx":
        import onnxruntime as ort

        sess = {c: ort.InferenceSession(str(out / f"{c}.onnx"), providers=["CPUExecutionProvider"])
                for c in ("encoder", "prefill", "decode")}

        def run(c, feed):
            names = [o.name for o in sess[c].get_outputs()]
            return dict(zip(names, sess[c].run(None, {i.name: feed[i.name] for i in sess[c].get_inputs()})))
    else:
        import openvino as ov

        core = ov.Core()
        req = {c: core.compile_model(str(out / f"openvino_{c}.xml"), "CPU", OV_CPU).create_infer_request()
               for c in ("encoder", "prefill", "decode")}

        def run(c, feed):
            names = {i.get_any_name() for i in req[c].model_inputs}
            res = req[c].infer({k: v for k, v in feed.items() if k in names})
            return {p.get_any_name(): np.array(res[p]) for p in req[c].model_outputs}
    hidden = run("encoder", source)["last_hidden_state"]
    feed = {"decoder_input_ids": prompt.astype(np.int64), "encoder_outputs.last_hidden_state": hidden,
            "attention_mask": mask, "beam_idx": np.arange(len(prompt), dtype=np.int32)}
    components = json.loads((out / "export.json").read_text())["components"]
    static = "decoder_attention_mask" in components["decode"]["metadata"]["kwargs"]
    if static:  # every counter at 0, the prompt's mask
        feed.update({k: np.array(0, np.int64) for k in components["prefill"]["metadata"]["input_names"]
                     if k.endswith(".cumulative_length")})
        feed["decoder_attention_mask"] = causal_slots(len(prompt), 0, prompt.shape[1], SEED_MAX_CACHE)
    res = run("prefill", feed)
    cache = {k.removeprefix("output."): v for k, v in res.items() if k.removeprefix("output.").startswith("cache.")}
    if fmt == "openvino":
        req["decode"].reset_state()
        for state in req["decode"].query_state():  # input.<name>output.<name>
            state.state = ov.Tensor(np.ascontiguousarray(cache[state.name.split("output.")[0].removeprefix("input.")]))
    tokens, logits, done = [], [], np.zeros(len(prompt), bool)
    for step in range(NEW_TOKENS):
        step_logits = res["logits"][:, -1].astype(np.float32)
        logits.append(step_logits)
        nxt = np.where(done, pad, step_logits.argmax(-1))
        done |= nxt == eos
        tokens.append(nxt)
        if done.all():
            break
        feed["decoder_input_ids"] = nxt[:, None].astype(np.int64)
        if static:
            feed["decoder_attention_mask"] = causal_slots(len(prompt), prompt.shape[1] + step, 1, SEED_MAX_CACHE)
        feed.update({f"input.{k}": v for k, v in cache.items()})
        res = run("decode", feed)
        cache = {k.removeprefix("output."): v for k, v in res.items() if k.startswith("output.")}
    return np.stack(tokens, 1), np.stack(logits)


@pytest.mark.parametrize("fmt,static", [*SEED_IO_CASES, ("openvino", True)],
                         ids=lambda v: "static" if v is True else "" if v is False else v)
@pytest.mark.parametrize("name", SEED_IO)
def test_seed_io_generates(name, fmt, static, ckpt, tmp_path):
    """The seed-profile graphs in a plain greedy loop at batch 1 and 3 (right-padded sources) give
    transformers' greedy tokens, every step's logits within 1e-4, with a growing and a static cache."""
    out = seed_io_export(ckpt, tmp_path / "hfx", name, fmt, static)
    gen = json.loads((ckpt(name) / "generation_config.json").read_text())
    for batch in (1, 3):
        rows = sources(name, batch)
        want_tokens, want_logits, prompt = plain_greedy(ckpt(name), rows)
        tokens, logits = seed_io_loop(out, fmt, rows, prompt, gen["eos_token_id"], gen["pad_token_id"])
        compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {fmt} io seed batch {batch}",
                           runtime="onnx" if fmt == "onnx" else "openvino")


# ---- the seed's profile in torch.export (.pt2): the seed's own call, through its runners ----------------------------

# (name, static): a static cache's cross-attention StaticCache pins the sources' length in the call's spec, so BART's
# is exported with static shapes at the seed's sample (batch 1, its first source), Whisper's sources are fixed anyway
SEED_PT2 = [("bart", False), ("t5_v11", False), ("whisper", False), ("bart", True), ("whisper", True)]


def seed_pt2_export(ckpt, out, name, static):
    """hfx's .pt2 export in the seed's profile: dynamic shapes, or with a static cache of a text model the seed's
    sample's (batch 1, the first source's length)."""
    shapes = (["--batch-size", "1", "--sequence-length", str(len(SOURCES[0]))]
              if static and not seq2seq_models.VARIANTS[name].audio else ["--dynamic"])
    cache = ["--cache", "static", "--max-cache-len", str(SEED_MAX_CACHE)] if static else []
    proc = run_hfx(["export", ckpt(name), out, "--format", "dynamo", "--io", "seed", "--for-generation", "--quiet",
                    *shapes, *cache])
    assert proc.returncode == 0, describe(proc)
    return out


@pytest.mark.parametrize("name,static", SEED_PT2, ids=lambda v: "static" if v is True else "" if v is False else v)
def test_seed_pt2_specs_equal_the_seeds(name, static, ckpt, tmp_path):
    """The prefill's and decode's call — the forward's keywords with encoder_outputs as the encoder stack's
    ModelOutput (BART's and Whisper's BaseModelOutput, T5's BaseModelOutputWithPastAndCrossAttentions) and the
    EncoderDecoderCache (a DynamicCache or StaticCache per half, is_updated per layer), returning Seq2SeqLMOutput over
    the logits, the cache and encoder_last_hidden_state — is the one transformers.exporters' own export_for_generation
    records, as torch TreeSpecs; hfx's encoder is called as transformers calls model.get_encoder(): the specs torch
    derives from that call's keywords and result."""
    from torch.utils._pytree import tree_flatten, treespec_loads
    from transformers.exporters.metadata import register_treespec_types

    ours = json.loads((seed_pt2_export(ckpt, tmp_path / "hfx", name, static) / "export.json").read_text())["components"]
    theirs = json.loads((seeds_own_export(ckpt(name), name, "dynamo", tmp_path / "seed", static) / "export.json")
                        .read_text())["components"]
    assert sorted(ours) == sorted([*theirs, "encoder"])
    for comp in theirs:
        for field in ("in_spec", "out_spec"):
            register_treespec_types(want := theirs[comp]["metadata"][field])
            got = ours[comp]["metadata"][field]
            assert treespec_loads(got) == treespec_loads(want), f"{name} {comp} {field}: {got} != {want}"
    model = seq2seq_models.load(ckpt(name))
    rows = sources(name, 1)
    source = ({"input_features": torch.from_numpy(rows)} if isinstance(rows, np.ndarray) else
              dict(zip(("input_ids", "attention_mask"), right_padded(rows, model.config.pad_token_id))))
    with torch.no_grad():
        result = model.get_encoder()(**source)
    for field, tree in (("in_spec", ((), source)), ("out_spec", result)):
        got = treespec_loads(ours["encoder"]["metadata"][field])
        assert got == tree_flatten(tree)[1], f"{name} encoder {field}: {got}"


def seed_runner_loop(out, model, rows, prompt, static):
    """Greedy search through the seed's ExportedModel over hfx's folder, as its runners are called: hfx's
    encoder on the sources, the prefill on the decoder prompt with its result as encoder_outputs and an empty
    EncoderDecoderCache as generate() makes one, then decode steps on the cache each call returns (a static cache:
    the 4-D mask over the slots beside). Rows that end are fed the pad token."""
    import transformers
    from transformers.exporters import ExportedModel

    runner = {"config": OV_CPU} if (out / "openvino_decode.xml").exists() else {}
    # (a .pt2 is pickled: trust_remote_code is the seed's gate)
    runners = ExportedModel.from_pretrained(out, trust_remote_code=True, **runner).runners
    gen = model.generation_config
    audio = isinstance(rows, np.ndarray)
    if audio:
        source = {"input_features": torch.from_numpy(rows)}
    else:
        ids, mask = right_padded(rows, gen.pad_token_id)
        source = {"input_ids": ids, "attention_mask": mask}
    encoder_outputs = runners["encoder"](**source)
    config = model.config.get_text_config(decoder=True)
    if static:
        length = encoder_outputs.last_hidden_state.shape[1]
        cache = transformers.EncoderDecoderCache(transformers.StaticCache(config=config, max_cache_len=SEED_MAX_CACHE),
                                                 transformers.StaticCache(config=config, max_cache_len=length))
    else:
        cache = transformers.EncoderDecoderCache(transformers.DynamicCache(config=config),
                                                 transformers.DynamicCache(config=config))
    feed = {} if audio else {"attention_mask": source["attention_mask"]}
    prompt = torch.from_numpy(prompt)
    if static and not audio:  # (Whisper's prompt is causal: its prefill takes no mask)
        feed["decoder_attention_mask"] = torch.from_numpy(causal_slots(len(prompt), 0, prompt.shape[1], SEED_MAX_CACHE))
    step = runners["prefill"](decoder_input_ids=prompt, encoder_outputs=encoder_outputs, cache=cache, **feed)
    tokens, logits, done = [], [], np.zeros(len(prompt), bool)
    for n in range(NEW_TOKENS):
        step_logits = torch.as_tensor(step.logits)[:, -1].numpy()
        logits.append(step_logits)
        nxt = np.where(done, gen.pad_token_id, step_logits.argmax(-1))
        done |= nxt == gen.eos_token_id
        tokens.append(nxt)
        if done.all():
            break
        if static:
            feed["decoder_attention_mask"] = torch.from_numpy(causal_slots(len(prompt), prompt.shape[1] + n, 1,
                                                                           SEED_MAX_CACHE))
        step = runners["decode"](decoder_input_ids=torch.from_numpy(nxt[:, None].astype(np.int64)),
                                 encoder_outputs=encoder_outputs, cache=step.cache, **feed)
    return np.stack(tokens, 1), np.stack(logits)


def seed_et_export(ckpt, out, name, static):
    """hfx's ExecuTorch export in the seed's profile: batch 1 (ExecuTorch fixes it), the decoder's tokens bounded; a
    static cache of a text model at the seed's sample's length, as for the .pt2."""
    cfg = out.parent / f"{out.name}.json"
    fixed = static and not seq2seq_models.VARIANTS[name].audio
    cfg.write_text(json.dumps({"export_format": "executorch", "io": "seed", **({} if fixed else {"dynamic_shapes": {
        "input_ids": {"1": {"name": "sequence", "min": 1, "max": SEED_MAX_CACHE}}}})}))
    length = ["--sequence-length", str(len(SOURCES[0]))] if fixed else []
    proc = run_hfx(["export", ckpt(name), out, "--config", str(cfg), "--for-generation", "--quiet", "--batch-size", "1",
                    "--max-cache-len", str(SEED_MAX_CACHE), *length, *(["--cache", "static"] if static else [])])
    assert proc.returncode == 0, describe(proc)
    return out


# the greedy loop below in the executorch virtualenv (its runtime's Python bindings), on an export folder
SEED_RUNNERS_ET = """
import sys
import numpy as np
sys.path.insert(0, args[0])
import seq2seq_models, test_seq2seq
out, name, ckpt, static, prompt, save = args[1:]
rows = test_seq2seq.sources(name, 1)
tokens, logits = test_seq2seq.seed_runner_loop(test_seq2seq.Path(out), seq2seq_models.load(ckpt), rows,
                                               np.array(prompt, np.int64), static)
np.savez(save, tokens=tokens, logits=logits)
"""


@pytest.mark.parametrize("fmt", ["dynamo", "onnx", "openvino-stateless", "executorch"])
@pytest.mark.parametrize("name,static", SEED_PT2, ids=lambda v: "static" if v is True else "" if v is False else v)
def test_seed_runners_generate(name, static, fmt, ckpt, tmp_path):
    """transformers.exporters' ExportedModel loads hfx's seed-profile folder — .pt2, ONNX, OpenVINO (stateless: the
    seed's runner feeds the cache object it is given), ExecuTorch (in its virtualenv) — and its runners give
    transformers' greedy tokens, every step's logits within 1e-4: at batch 1 and 3 (right-padded sources) with a
    growing cache; at batch 1 with a static one (its StaticCache's batch_size is in the call's spec) and in
    ExecuTorch (which fixes the batch)."""
    out = (seed_pt2_export(ckpt, tmp_path / "hfx", name, static) if fmt == "dynamo"
           else seed_et_export(ckpt, tmp_path / "hfx", name, static) if fmt == "executorch"
           else seed_io_export(ckpt, tmp_path / "hfx", name, fmt, static))
    model = seq2seq_models.load(ckpt(name))
    for batch in (1,) if static or fmt == "executorch" else (1, 3):
        rows = sources(name, batch)
        want_tokens, want_logits, prompt = plain_greedy(ckpt(name), rows)
        if fmt == "executorch":
            got = etutil.worker().python_arrays(SEED_RUNNERS_ET, [str(Path(__file__).parent), str(out), name,
                                                                  str(ckpt(name)), static, prompt.tolist()])
            tokens, logits = got["tokens"], got["logits"]
        else:
            tokens, logits = seed_runner_loop(out, model, rows, prompt, static)
        compare_generation(tokens, logits, want_tokens, want_logits,
                           f"{name} {fmt} io seed batch {batch} (its runners)",
                           runtime={"dynamo": "torch"}.get(fmt, fmt.removesuffix("-stateless")))


def test_refusals(ckpt, tmp_path):
    multi = run_hfx(["export", ckpt("bart"), tmp_path / "ov", "--format", "onnx", "--dynamic", "--for-generation",
                     "--multi-token-decode", "--cache", "static", "--max-cache-len", "32"])
    assert multi.returncode == 2, describe(multi)
    assert "growing" in multi.stderr and "BartForConditionalGeneration" in multi.stderr, describe(multi)
    stateful_static = run_hfx(["export", ckpt("bart"), tmp_path / "ovs", "--format", "openvino", "--dynamic",
                               "--for-generation", "--cache", "static", "--max-cache-len", "32"])
    assert stateful_static.returncode == 2 and "stateful" in stateful_static.stderr, describe(stateful_static)
    # a static cross-attention cache in a .pt2 pins the sources' length: refused where it varies
    pt2_cfg = tmp_path / "pt2.json"
    pt2_cfg.write_text(json.dumps({"export_format": "dynamo", "io": "seed", "dynamic": True}))
    pt2 = run_hfx(["export", ckpt("bart"), tmp_path / "pt2", "--config", str(pt2_cfg), "--for-generation",
                   "--cache", "static", "--max-cache-len", "32"])
    assert pt2.returncode == 2 and "StaticCache" in pt2.stderr and "length" in pt2.stderr, describe(pt2)
    assert not any((tmp_path / d).exists() for d in ("ov", "ovs", "pt2"))


# ---- Moonshine ------------------------------------------------------------------------------------


# (variant, the field, config overrides under which transformers' logits move: hfx's parity proves it reads it)
MOONSHINE_FIELDS = [
    ("moonshine", "partial rotary (14 of 16 dims)",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0}}),
    ("moonshine_odd", "an odd rotary count (21: 22 dims turn)",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 1000.0, "partial_rotary_factor": 0.84}}),
    ("moonshine_odd", "rope_theta", {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                                         "partial_rotary_factor": 0.9}}),
    ("moonshine_odd", "q/k/v biases", {"attention_bias": False}),
    ("moonshine_odd", "each stack's activation", {"encoder_hidden_act": "gelu", "decoder_hidden_act": "silu"}),
]


@pytest.mark.parametrize("name,field,overrides", MOONSHINE_FIELDS, ids=[f"{f[0]}-{f[1]}" for f in MOONSHINE_FIELDS])
def test_moonshine_fields_are_visible(name, field, overrides, ckpt):
    from transformers import MoonshineForConditionalGeneration

    feed, logits, _ = forward_reference(ckpt(name), name)
    other = MoonshineForConditionalGeneration.from_pretrained(str(ckpt(name)), attn_implementation="eager",
                                                              **overrides).eval()
    with torch.no_grad():
        got = other(**{k: torch.from_numpy(v) for k, v in feed.items()}).logits.numpy()
    assert np.abs(got - logits).max() > 100 * PARITY_ATOL, f"{name}: {field} does not move the logits"


def test_moonshine_mask_is_visible(ckpt):
    """Without its attention_mask the padded row's logits move: the frames' mask (every 384th sample's) matters."""
    feed, logits, _ = forward_reference(ckpt("moonshine"), "moonshine")
    model = seq2seq_models.load(ckpt("moonshine"))
    with torch.no_grad():
        got = model(input_values=torch.from_numpy(feed["input_values"]),
                    decoder_input_ids=torch.from_numpy(feed["decoder_input_ids"])).logits.numpy()
    assert feed["attention_mask"][1].min() == 0 and np.abs(got[1] - logits[1]).max() > 100 * PARITY_ATOL


@pytest.mark.parametrize("runtime", ["onnx", "openvino"])
def test_moonshine_command_line(runtime, ckpt, gen_export, tmp_path):
    """The example's --audio: WAV files through the export's feature extractor (preprocessor_config.json), greedy
    tokens equal to transformers' generate on the same samples, batch 3, the logits within 1e-4."""
    from mmutil import write_wav

    out = gen_export("moonshine", runtime, "dynamic")
    files = [write_wav(tmp_path / f"s{i}.wav", x) for i, x in enumerate(seq2seq_models.sweeps(3))]
    res = run_loop(out, None, NEW_TOKENS, tmp_path / "logits.npz", script=EXAMPLES / f"generate_{runtime}.py",
                   audio=files)
    assert res.proc.returncode == 0, describe(res.proc)
    read_wav = loop(runtime).decode_loop.read_wav
    heard = seq2seq_models.waveform_extractor()([read_wav(f, 16000) for f in files], sampling_rate=16000,
                                                padding=True, return_tensors="np")
    want_tokens, want_logits = reference(ckpt("moonshine"), {"input_values": heard.input_values.astype(np.float32),
                                                             "attention_mask": heard.attention_mask.astype(np.int64)})
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"moonshine {runtime} --audio", runtime=runtime)


@pytest.mark.parametrize("edit,words", [
    ({"decoder_num_attention_heads": 2}, "decoder_num_attention_heads"),
    ({"encoder_num_key_value_heads": 2}, "encoder_num_key_value_heads"),
    ({"decoder_hidden_act": "swiglu"}, "decoder_hidden_act"),
    ({"hidden_size": 30}, "hidden_size"),
    # an odd rotary count only with the default (or linear) frequencies
    ({"rope_parameters": {"rope_type": "yarn", "factor": 2.0, "rope_theta": 10000.0, "partial_rotary_factor": 0.95}},
     "rotary dimension"),
])
def test_moonshine_bad_configs(edit, words, ckpt, tmp_path):
    assert_config_refused(ckpt("moonshine"), tmp_path, edit, words, "--dynamic")


def test_moonshine_refusals(ckpt, tmp_path):
    """A fixed sample shorter than one frame (895 samples: the three convolutions' receptive field), and the seed's
    profile (transformers.exporters has none for Moonshine), are refused by name, nothing written."""
    short = run_hfx(["export", ckpt("moonshine"), tmp_path / "short", "--format", "onnx"])  # the default 2 × 16
    assert short.returncode == 2 and "input_values" in short.stderr and "895" in short.stderr, describe(short)
    seed_cfg = tmp_path / "seed.json"
    seed_cfg.write_text(json.dumps({"export_format": "onnx", "io": "seed", "dynamic": True}))
    seed = run_hfx(["export", ckpt("moonshine"), tmp_path / "seed", "--config", str(seed_cfg), "--for-generation"])
    assert seed.returncode == 2 and 'io "seed"' in seed.stderr and "Moonshine" in seed.stderr, describe(seed)
    assert not (tmp_path / "short").exists() and not (tmp_path / "seed").exists()


# ---- the bare models and T5's encoders ------------------------------------------------------------

BARE_RUNS = ([(n, f) for n in BARE for f in ("onnx", "openvino")] +
             [(n, "dynamo") for n in ("bart_model", "t5_encoder", "whisper_model", "moonshine_model")] +
             [(n, "executorch") for n in ("t5_encoder", "mbart_model")])


@pytest.mark.parametrize("name,fmt", BARE_RUNS)
def test_bare_models(name, fmt, ckpt, export_dir, tmp_path):
    """The model without its head: the decoder's last hidden state (no output scale, no final_logits_bias) and the
    encoder's; T5's encoder alone: its last hidden state. Checkpoints as save_pretrained writes the bare classes
    (their stacks at the top: "encoder.", not "model.encoder.")."""
    from conftest import run_forward

    v = seq2seq_models.VARIANTS[name]
    model = seq2seq_models.load(ckpt(name), cls=v.cls)
    feed = forward_feed(name, model.config, decoder=v.bare == "model")
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(x) for k, x in feed.items()})
    want = {"last_hidden_state": out.last_hidden_state.numpy()}
    if v.bare == "model":
        want["encoder_last_hidden_state"] = out.encoder_last_hidden_state.numpy()
    if fmt == "executorch":
        axes = {"1": {"name": "sequence", "min": 1, "max": 32}}
        shapes = {"input_ids": axes, **({"decoder_input_ids": {"1": {"name": "decoder_sequence_length", "min": 1,
                                                                      "max": 32}}} if v.bare == "model" else {})}
        cfg = tmp_path / "et.json"
        cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": shapes}))
        out_dir = export_dir(name, "--config", str(cfg))
    else:
        out_dir = export_dir(name, "--format", fmt)
    got = run_forward(fmt, out_dir, feed, list(want))
    assert list(got) == list(want), (list(got), list(want))
    for k in want:
        assert_logits_close(got[k], want[k], f"{name} {fmt} {k}")
