"""OpenVINO IR exports (`hfx export --format openvino`) against transformers.

Forward: every variant of models.py is exported once with --dynamic (model.xml + model.bin, IR
v11) and run by OpenVINO's CPU plugin with f32 inference precision; every logit must be within
1e-4 of transformers' eager float32 logits over the variant's shapes (left-padded batches
included), as tests/test_parity.py does for ONNX. Static shapes, determinism and
--compress-to-fp16 are checked on a few variants.

Generation: `--for-generation` is stateful by default (the KV cache in ReadValue/Assign variables,
a beam_idx input: the optimum-intel / OpenVINO GenAI convention); `--stateless` gives the ONNX
components and I/O (docs/GENERATION.md). Greedy generation through examples/generate_openvino.py
must equal transformers' generate() token for token with every step's logits within 1e-4, and
OpenVINO GenAI's LLMPipeline must run the stateful export as it is (no tokenizer files).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

import models
from conftest import PARITY_ATOL, assert_logits_close, describe, run_hfx
from genutil import (FIXED_SEQ, GEN_VARIANTS, MAX_CACHE_LEN, NEW_TOKENS, References, eos_pad, left_pad,
                     positions, prompts)
from ovutil import (
    GENERATE_OV_SCRIPT,
    OV_CONFIG,
    OVExports,
    compare_generation,
    compile_model,
    core,
    ir_version,
    load_loop_module,
    manifest,
    run_forward,
    run_loop,
)

NO_EOS = {"bos_token_id": 1, "eos_token_id": None}
BATCH1 = (7,)
BATCH3 = (10, 5, 1)  # left padding 0, 5 and 9: one row of a single real token

PLAIN_FILES = {"model.xml", "model.bin", "export.json", "config.json", "generation_config.json", "export_config.json"}


@pytest.fixture(scope="session")
def ov_exports(tmp_path_factory, checkpoints) -> OVExports:
    return OVExports(tmp_path_factory.mktemp("ov_exports"), checkpoints)


@pytest.fixture(scope="session")
def ov_refs(checkpoints) -> References:
    return References(checkpoints)


def _type(port) -> str:
    return port.get_element_type().get_type_name()


def _shape(port) -> list:
    """[int or None (dynamic)] of a port's partial shape."""
    return [d.get_length() if d.is_static else None for d in port.get_partial_shape()]


def _head_dim(cfg: dict) -> int:
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


# ---- forward parity: every variant ------------------------------------------------------------

PARITY_PARAMS = [
    pytest.param(v.name, case, id=f"{v.name}-{case.id}")
    for v in models.VARIANTS_LIST
    for case in v.cases
]


@pytest.mark.parametrize("name,case", PARITY_PARAMS)
def test_ov_parity(ov_exports, name, case):
    variant = models.VARIANTS[name]
    out = ov_exports(name, "--dynamic")
    inputs = models.make_inputs(case, variant.vocab_size)
    want = models.reference_logits(ov_exports.checkpoints(name), inputs)
    got = run_forward(ov_exports.compiled(out / "model.xml"), inputs)
    assert_logits_close(got, want, f"[openvino] {name} {case.id}")


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_ov_export_files_and_signature(ov_exports, name):
    """model.xml (IR v11) + model.bin and the json files; export.json's one component "model";
    inputs input_ids / attention_mask / position_ids i64 [?, ?], output logits f32 [?, ?, vocab]."""
    variant = models.VARIANTS[name]
    out = ov_exports(name, "--dynamic")
    files = {p.name for p in out.iterdir()}
    assert PLAIN_FILES <= files, f"missing {sorted(PLAIN_FILES - files)} in {sorted(files)}"
    assert not [f for f in files if f.endswith((".onnx", ".onnx_data", ".onnx.data"))], sorted(files)
    assert ir_version(out / "model.xml") == "11", f"IR version {ir_version(out / 'model.xml')}"
    man = manifest(out)
    assert man["export_format"] == "openvino", man
    assert list(man["components"]) == ["model"], man["components"].keys()
    comp = man["components"]["model"]
    assert comp["role"] == "model" and comp["file"] == "model.xml", comp
    assert comp["metadata"]["architecture"] == variant.architecture, comp["metadata"]
    model = core().read_model(str(out / "model.xml"))
    ins = {i.get_any_name(): i for i in model.inputs}
    assert list(ins) == ["input_ids", "attention_mask", "position_ids"], list(ins)
    for n, port in ins.items():
        assert _type(port) == "i64" and _shape(port) == [None, None], f"{n}: {_type(port)} {_shape(port)}"
    assert [o.get_any_name() for o in model.outputs] == ["logits"]
    (logits,) = model.outputs
    assert _type(logits) == "f32" and _shape(logits) == [None, None, variant.vocab_size], \
        f"logits {_type(logits)} {_shape(logits)}"
    # weights in model.bin, not in the xml (the tiny models have >= 38k parameters)
    n_params = ov_exports.checkpoints.num_parameters(name)
    size = (out / "model.bin").stat().st_size
    assert size >= 0.95 * 4 * n_params, f"model.bin {size} bytes for {n_params} fp32 parameters"
    assert (out / "model.xml").stat().st_size < size, "weights in the xml?"


def test_ov_static_shapes(ov_exports):
    """No --dynamic: --batch-size 2 --sequence-length 5 fixes the inputs; OpenVINO refuses other
    shapes."""
    name = "llama_default"
    out = ov_exports(name, "--batch-size", "2", "--sequence-length", "5")
    model = core().read_model(str(out / "model.xml"))
    for port in model.inputs:
        assert _shape(port) == [2, 5], f"{port.get_any_name()}: {_shape(port)}"
    assert _shape(model.outputs[0]) == [2, 5, 256], _shape(model.outputs[0])
    compiled = compile_model(out / "model.xml")
    for case in (models.Case(2, 5), models.Case(2, 5, (3, 0))):
        inputs = models.make_inputs(case, 256)
        assert_logits_close(run_forward(compiled, inputs), models.reference_logits(ov_exports.checkpoints(name), inputs),
                            f"[openvino] static {case.id}")
    for bad in (models.Case(1, 5), models.Case(2, 6), models.Case(3, 4)):
        with pytest.raises(Exception) as info:
            run_forward(compiled, models.make_inputs(bad, 256))
        msg = " ".join(str(info.value).split())
        print(f"{bad.id}: {msg[:300]}")
        assert "shape" in msg.lower(), msg


@pytest.mark.parametrize("name,flags", [
    ("llama_default", ("--dynamic",)),
    ("qwen2_swa", ("--dynamic",)),
    ("llama_bf16", ("--dynamic",)),
    ("qwen3", ("--for-generation", "--dynamic")),
    ("qwen3", ("--for-generation", "--stateless", "--dynamic", "--cache", "static", "--max-cache-len", "32")),
], ids=["llama_default", "qwen2_swa", "llama_bf16", "qwen3-stateful", "qwen3-stateless-static"])
def test_ov_export_is_deterministic(checkpoints, tmp_path, name, flags):
    trees = []
    for run in ("a", "b"):
        proc = run_hfx(["export", checkpoints(name), tmp_path / run, "--format", "openvino", "--quiet", *flags])
        assert proc.returncode == 0, describe(proc)
        trees.append({str(p.relative_to(tmp_path / run)): p.read_bytes()
                      for p in sorted((tmp_path / run).rglob("*")) if p.is_file()})
    assert sorted(trees[0]) == sorted(trees[1]), f"different file sets: {sorted(trees[0])} vs {sorted(trees[1])}"
    differing = [f for f in trees[0] if trees[0][f] != trees[1][f]]
    assert not differing, f"files differ between two exports of the same checkpoint: {differing}"


def _fp16_rounded_reference(model_dir, inputs) -> np.ndarray:
    """transformers (fp32 compute) with every parameter rounded to float16: what an export whose
    weights are stored as f16 and widened back to f32 computes."""
    model = models.load_reference_model(model_dir)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.float16).to(torch.float32))
        out = model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, use_cache=False)
    return out.logits.numpy()


@pytest.mark.parametrize("name", ["llama_default", "qwen3_tied"])
def test_ov_compress_to_fp16(ov_exports, name):
    """--compress-to-fp16: weights stored as f16 Constants, each widened by a Convert; model.bin
    about half the fp32 one; logits within fp16 rounding of transformers (5e-2), and close to
    transformers run with fp16-rounded weights (1e-4: nothing but the weights is rounded; rounding
    small constants too, as OpenVINO's own compress_to_fp16 does with eps and RoPE frequencies,
    moves logits by ~2e-3)."""
    variant = models.VARIANTS[name]
    full = ov_exports(name, "--dynamic")
    half = ov_exports(name, "--dynamic", "--compress-to-fp16")
    ratio = (half / "model.bin").stat().st_size / (full / "model.bin").stat().st_size
    print(f"{name}: model.bin {ratio:.3f} of the fp32 export's")
    assert 0.45 <= ratio <= 0.55, f"--compress-to-fp16 model.bin is {ratio:.3f} of the fp32 one"
    model = core().read_model(str(half / "model.xml"))
    f16_consts = [op for op in model.get_ops()
                  if op.get_type_name() == "Constant" and op.get_output_element_type(0).get_type_name() == "f16"]
    assert f16_consts, "no f16 Constant in the compressed model"
    for op in f16_consts:
        users = {t.get_node().get_type_name() for t in op.output(0).get_target_inputs()}
        assert users == {"Convert"}, f"f16 Constant {op.get_friendly_name()} feeds {users}, not a Convert"
    big_f32 = [op.get_friendly_name() for op in model.get_ops()
               if op.get_type_name() == "Constant" and op.get_output_element_type(0).get_type_name() == "f32"
               and int(np.prod(list(op.get_output_shape(0)))) >= 1024]
    assert not big_f32, f"f32 weights left uncompressed: {big_f32[:5]}"
    compiled = compile_model(half / "model.xml")
    model_dir = ov_exports.checkpoints(name)
    for case in (models.Case(1, 7), models.Case(3, 12, (0, 3, 11))):
        inputs = models.make_inputs(case, variant.vocab_size)
        got = run_forward(compiled, inputs)
        want = models.reference_logits(model_dir, inputs)
        # fp16 rounding of the weights alone moves these peaked tiny models' logits by ~1e-2
        assert_logits_close(got, want, f"[openvino fp16 weights] {name} {case.id} vs fp32 transformers", atol=5e-2)
        assert_logits_close(got, _fp16_rounded_reference(model_dir, inputs),
                            f"[openvino fp16 weights] {name} {case.id} vs transformers on fp16-rounded weights")


# ---- generation ---------------------------------------------------------------------------------

_STATIC = ("--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN))
OV_MODES = {
    "stateful": ("--for-generation", "--dynamic"),
    "dyncache": ("--for-generation", "--stateless", "--cache", "dynamic", "--dynamic"),
    "static": ("--for-generation", "--stateless", *_STATIC, "--dynamic"),
    "dyncache-mtd": ("--for-generation", "--stateless", "--multi-token-decode", "--dynamic"),
    "static-mtd": ("--for-generation", "--stateless", "--multi-token-decode", *_STATIC, "--dynamic"),
    "static-fixed-b3": ("--for-generation", "--stateless", *_STATIC, "--batch-size", "3",
                        "--sequence-length", str(FIXED_SEQ)),
}

GEN_MATRIX = (
    [(v, m, b) for v in GEN_VARIANTS for m in ("stateful", "dyncache", "static") for b in (BATCH1, BATCH3)]
    + [("llama_default", "dyncache-mtd", b) for b in (BATCH1, BATCH3)]
    + [("qwen2_swa", "static-mtd", b) for b in (BATCH1, BATCH3)]
    + [("mistral_swa", "static-fixed-b3", BATCH3)]
    # MHA / MQA: the CPU plugin fuses a 4-D attention with its stateful cache (u8 by default)
    + [(v, "stateful", BATCH3) for v in ("llama_mha", "llama_mqa")]
    # the decoder template's other families (models.py): every one stateful; the windowed Gemma 2 / Gemma 3 also stateless
    # with a static cache, StarCoder2 (window on every layer) stateless with a dynamic cache
    + [(v, "stateful", b) for v in ("granite", "olmo2", "starcoder2", "gemma", "gemma2", "gemma3")
       for b in (BATCH1, BATCH3)]
    + [(v, "static", b) for v in ("gemma2", "gemma3") for b in (BATCH1, BATCH3)]
    + [("starcoder2", "dyncache", BATCH3)]
)


@pytest.mark.parametrize("name,mode,lengths", [pytest.param(v, m, b, id=f"{v}-{m}-b{len(b)}") for v, m, b in GEN_MATRIX])
def test_ov_greedy_generation(ov_exports, ov_refs, tmp_path, name, mode, lengths):
    """32 new tokens through examples/generate_openvino.py equal generate()'s, and every step's
    logits are within 1e-4 (no EOS: always 32 tokens)."""
    out = ov_exports.with_generation_config(ov_exports(name, *OV_MODES[mode]), NO_EOS)
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    pad_to = FIXED_SEQ if "fixed" in mode else None
    want_tokens, want_logits = ov_refs.generate(name, rows, NO_EOS, pad_to=pad_to)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    assert all(len(t) == NEW_TOKENS for t in res.tokens), f"without EOS every row gets {NEW_TOKENS}: {res.tokens}"
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"{name} {mode} b{len(rows)}")


def _eos_config(refs, name, lengths):
    """EOS ids that transformers generates (without EOS) at step 4 of row 0 and step 9 of row 1:
    rows finish early, at different steps."""
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    tokens, _ = refs.generate(name, rows, NO_EOS)
    eos = [int(tokens[0, 4])] + ([int(tokens[1, 9])] if len(rows) > 1 else [])
    return rows, {"bos_token_id": 1, "eos_token_id": eos, "pad_token_id": 0}


@pytest.mark.parametrize("mode", ["stateful", "dyncache", "static"])
def test_ov_eos(ov_exports, ov_refs, tmp_path, mode):
    """A real EOS (two ids): finished rows get pad_token_id, the loop stops once all are done."""
    rows, gen = _eos_config(ov_refs, "llama_default", BATCH3)
    out = ov_exports.with_generation_config(ov_exports("llama_default", *OV_MODES[mode]), gen)
    want_tokens, want_logits = ov_refs.generate("llama_default", rows, gen)
    assert set(eos_pad(gen)[0]) & set(want_tokens[0].tolist()), "harness: row 0 must finish early"
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"llama_default {mode} eos {gen}")


@pytest.mark.parametrize("name", ["llama_default", "qwen2_swa"])
def test_ov_stateful_state_resets(ov_exports, ov_refs, name):
    """Two different sequences in a row on ONE compiled model / infer request: with
    reset_state() between them (what the loop does) both equal transformers'. Without the reset
    the second sequence runs against the first one's cache and its logits differ, which proves
    the state is real and the reset does the work."""
    gen = load_loop_module()
    export = gen.Export(ov_exports(name, *OV_MODES["stateful"]))
    assert export.stateful and export.prefill is None
    vocab = models.VARIANTS[name].vocab_size
    first, second = prompts((9, 4), vocab, seed=11), prompts((6, 6), vocab, seed=12)
    for label, rows in (("first", first), ("second", second), ("first again", first)):
        want_tokens, want_logits = ov_refs.generate(name, rows, NO_EOS, max_new_tokens=12)
        tokens, logits = gen.generate(export, rows, 12, [], 0)
        compare_generation(tokens, logits, want_tokens, want_logits, f"{name} stateful, {label} sequence")

    # the same second prompt without reset_state(): its prefill sees the previous sequence's cache
    request = export.decode.request
    ids, mask = left_pad(second, 0)
    request.reset_state()
    request.infer({"input_ids": ids, "attention_mask": mask, "position_ids": positions(mask),
                   "beam_idx": np.arange(2, dtype=np.int32)})
    ok = np.array(request.get_tensor("logits").data[:, -1])
    states = request.query_state()
    assert states, "stateful export: the infer request has no state"
    assert all(s.state.shape[2] == ids.shape[1] for s in states), [s.state.shape for s in states]
    # no reset: the cache still holds `second`, so the same tokens again see it (the mask covers it)
    request.infer({"input_ids": ids, "attention_mask": np.concatenate([np.ones_like(mask), mask], axis=1),
                   "position_ids": positions(mask), "beam_idx": np.arange(2, dtype=np.int32)})
    assert all(s.state.shape[2] == 2 * ids.shape[1] for s in request.query_state())
    stale = np.array(request.get_tensor("logits").data[:, -1])
    assert np.abs(stale - ok).max() > 100 * PARITY_ATOL, "state ignored: the cache changed nothing"
    request.reset_state()
    assert all(s.state.shape[0] * s.state.shape[2] == 0 or not s.state.data.any() for s in request.query_state()), \
        "reset_state() left cache contents"


def test_ov_loop_helpers():
    mod = load_loop_module()
    ids, mask = mod.left_pad([[5, 6, 7], [8]], 9, 4)
    assert ids.tolist() == [[9, 5, 6, 7], [9, 9, 9, 8]] and mask.tolist() == [[0, 1, 1, 1], [0, 0, 0, 1]]
    assert mod.parse_prompts("1,2,3;4,5") == [[1, 2, 3], [4, 5]]
    for bad in ("1,x", "1,,2", "1;;2", ""):
        with pytest.raises(mod.UsageError):
            mod.parse_prompts(bad)


SMALL_M = 24


@pytest.mark.parametrize("mode", ["static", "static-mtd"])
def test_ov_static_cache_end(ov_exports, ov_refs, tmp_path, mode):
    """M 24, prompt 10, 32 new tokens asked: the loop stops at the cache end after M - 10 + 1 = 15
    tokens with a message on stderr, equal to generate()'s; a prompt of M tokens gives one token;
    a longer prompt is refused (exit 2)."""
    flags = [f if f != str(MAX_CACHE_LEN) else str(SMALL_M) for f in OV_MODES[mode]]
    out = ov_exports.with_generation_config(ov_exports("llama_default", *flags), NO_EOS)
    vocab = models.VARIANTS["llama_default"].vocab_size
    for plen in (10, SMALL_M):
        rows = prompts((plen,), vocab, seed=3)
        want_tokens, want_logits = ov_refs.generate("llama_default", rows, NO_EOS)
        res = run_loop(out, rows, NEW_TOKENS, tmp_path / f"logits{plen}.npz")
        assert res.proc.returncode == 0, describe(res.proc)
        n = SMALL_M - plen + 1
        assert len(res.tokens[0]) == n, f"prompt {plen}, M {SMALL_M}: {len(res.tokens[0])} tokens, want {n}"
        assert "cache" in res.proc.stderr.lower(), describe(res.proc)
        compare_generation(res.tokens, res.logits, want_tokens[:, :n], want_logits[:n], f"{mode} prompt {plen} M {SMALL_M}")
    res = run_loop(out, prompts((SMALL_M + 1,), vocab), NEW_TOKENS)
    assert res.proc.returncode == 2 and "max_cache_len" in res.proc.stderr, describe(res.proc)
    assert res.proc.stdout.strip() == ""


def test_ov_loop_refuses_bad_requests(ov_exports, tmp_path):
    """Exit 2 with a message: a fixed-batch export given another batch, a prompt longer than the
    fixed prefill length, bad --input-ids, an id outside the vocabulary, a plain (non-generation)
    export, a directory that is no export."""
    vocab = models.VARIANTS["llama_default"].vocab_size
    fixed = ov_exports("llama_default", *OV_MODES["static-fixed-b3"])
    stateful = ov_exports("llama_default", *OV_MODES["stateful"])
    for out, rows, word in ((fixed, prompts(BATCH1, vocab), "batch"),
                            (fixed, prompts((FIXED_SEQ + 1, 2, 3), vocab), str(FIXED_SEQ)),
                            (stateful, [[1, vocab]], str(vocab))):
        res = run_loop(out, rows, 4)
        assert res.proc.returncode == 2 and word in res.proc.stderr, describe(res.proc)
        assert res.proc.stdout.strip() == ""
    for text in ("1,x", "1;;2"):
        proc = subprocess.run([sys.executable, str(GENERATE_OV_SCRIPT), str(stateful), "--input-ids", text],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "--input-ids" in proc.stderr, describe(proc)
    res = run_loop(ov_exports("llama_default", "--dynamic"), [[1, 2]], 4)
    assert res.proc.returncode == 2 and "--for-generation" in res.proc.stderr, describe(res.proc)
    res = run_loop(tmp_path, [[1, 2]], 4)
    assert res.proc.returncode == 2 and "export.json" in res.proc.stderr, describe(res.proc)


# ---- the generation exports' files, manifest and I/O ---------------------------------------------


@pytest.mark.parametrize("name,mode", [("llama_default", m) for m in OV_MODES] + [("qwen2_swa", "stateful"),
                                                                                 ("qwen3", "static")]
                         + [("gemma3", "stateful"), ("gemma2", "static"), ("starcoder2", "dyncache")])
def test_ov_generation_export_structure(ov_exports, name, mode):
    """export.json (components, roles, files, metadata with "stateful" and every layer's cache
    geometry) and the models' I/O: the stateful export is optimum-intel's (openvino_model.xml;
    input_ids, attention_mask, position_ids, beam_idx i32 [batch]; logits only; one ReadValue /
    Assign pair per cache tensor, variable id = past name + present name); the stateless ones
    have the ONNX export's I/O (docs/GENERATION.md), each .xml with its .bin."""
    out = ov_exports(name, *OV_MODES[mode])
    man = manifest(out)
    assert man["export_format"] == "openvino", man
    variant = models.VARIANTS[name]
    cfg = variant.config
    n_layers, kv, hd = cfg["num_hidden_layers"], cfg["num_key_value_heads"], _head_dim(cfg)
    mc = models.build_model(variant).config
    layer_types = getattr(mc, "layer_types", None) or \
        ["sliding_attention" if getattr(mc, "sliding_window", None) else "full_attention"] * n_layers
    windows = [mc.sliding_window if t == "sliding_attention" else None for t in layer_types]
    stateful = mode == "stateful"
    static_cache = "static" in mode
    mtd = mode.endswith("mtd")
    fixed_batch = 3 if "fixed" in mode else None
    names = {"decode"} if (stateful or mtd) else {"prefill", "decode"}
    assert set(man["components"]) == names, man["components"].keys()
    files = {p.name for p in out.iterdir()}
    assert not [f for f in files if f.endswith((".onnx", ".onnx_data", ".onnx.data"))], sorted(files)
    want_files = {"openvino_model.xml", "openvino_model.bin"} if stateful else \
        {f"{c}.{ext}" for c in names for ext in ("xml", "bin")}
    assert {f for f in files if f.endswith((".xml", ".bin"))} == want_files, sorted(files)

    past = [f"past_key_values.{i}.{k}" for i in range(n_layers) for k in ("key", "value")]
    present = [p.replace("past_key_values.", "present.") for p in past]
    for cname, comp in man["components"].items():
        assert comp["role"] == cname, comp
        assert comp["file"] == ("openvino_model.xml" if stateful else f"{cname}.xml"), comp
        md = comp["metadata"]
        assert md["stateful"] is stateful, f"{cname} metadata stateful: {md.get('stateful')!r}"
        assert md["role"] == cname and md["architecture"] == variant.architecture, md
        assert ir_version(out / comp["file"]) == "11"
        cache = md["cache"]
        assert len(cache["layers"]) == n_layers, cache
        for i, layer in enumerate(cache["layers"]):
            assert (layer["heads"], layer["key_dim"], layer["value_dim"], layer["sliding_window"]) == \
                (kv, hd, hd, windows[i]), f"{cname} layer {i}: {layer}"
        if static_cache:
            assert cache["implementation"] == "static" and cache["max_cache_len"] == MAX_CACHE_LEN, cache

        model = core().read_model(str(out / comp["file"]))
        ins = {i.get_any_name(): i for i in model.inputs}
        outs = {o.get_any_name(): o for o in model.outputs}
        vocab_shape = _shape(outs["logits"])
        assert _type(outs["logits"]) == "f32" and vocab_shape[2] == variant.vocab_size, vocab_shape
        batch = fixed_batch
        if stateful:
            assert list(ins) == ["input_ids", "attention_mask", "position_ids", "beam_idx"], list(ins)
            assert list(outs) == ["logits"], list(outs)
            for n in ("input_ids", "attention_mask", "position_ids"):
                assert _type(ins[n]) == "i64" and _shape(ins[n]) == [None, None], (n, _shape(ins[n]))
            assert _type(ins["beam_idx"]) == "i32" and _shape(ins["beam_idx"]) == [None], _shape(ins["beam_idx"])
            assert vocab_shape[:2] == [None, None], f"logits {vocab_shape}: all positions, dynamic"
            reads = {op.get_variable_id(): op for op in model.get_ops() if op.get_type_name() == "ReadValue"}
            assigns = {op.get_variable_id() for op in model.get_ops() if op.get_type_name() == "Assign"}
            want_ids = {p + q for p, q in zip(past, present)}
            assert set(reads) == want_ids and assigns == want_ids, f"variables {sorted(reads)} / {sorted(assigns)}"
            for vid, op in reads.items():
                shape = _shape(op.output(0))
                assert shape[1] == kv and shape[3] == hd, f"{vid}: {shape}"
        elif static_cache:
            cache_in = ["input." + p for p in past]
            assert set(ins) == {"input_ids", "position_ids", "cache_position", "attention_mask", *cache_in}, list(ins)
            assert set(outs) == {"logits", *("output." + p for p in past)}, list(outs)
            assert _shape(ins["attention_mask"])[0] == batch and len(_shape(ins["cache_position"])) == 1
            if fixed_batch:
                assert _shape(ins["attention_mask"]) == [batch, MAX_CACHE_LEN], _shape(ins["attention_mask"])
                seq = FIXED_SEQ if cname == "prefill" else 1
                assert _shape(ins["input_ids"]) == [batch, seq], _shape(ins["input_ids"])
            for n in cache_in:
                shape = _shape(ins[n])
                assert shape[0] == batch and shape[1] == kv and shape[3] == hd, (n, shape)
                assert shape[2] == (MAX_CACHE_LEN if fixed_batch else shape[2]), (n, shape)
                assert _shape(outs[n.replace("input.", "output.")]) == shape, f"{n}: output shape differs"
        else:
            want_ins = {"input_ids", "attention_mask", "position_ids"} | (set(past) if cname == "decode" else set())
            assert set(ins) == want_ins, list(ins)
            assert set(outs) == {"logits", *present}, list(outs)
            seq = 1 if cname == "decode" and not mtd else None
            assert _shape(ins["input_ids"]) == [None, seq], _shape(ins["input_ids"])
            for p in (past if cname == "decode" else []):
                assert _shape(ins[p]) == [None, kv, None, hd], (p, _shape(ins[p]))
        for n, port in ins.items():
            want_type = "i32" if n == "beam_idx" else ("f32" if "past_key_values" in n else "i64")
            assert _type(port) == want_type, f"{cname} {n}: {_type(port)}"


# ---- OpenVINO GenAI ---------------------------------------------------------------------------------

GENAI_NEW_TOKENS = 24


def _genai_generate(out, rows, max_new_tokens, **kwargs):
    import openvino as ov
    import openvino_genai

    pipe = openvino_genai.LLMPipeline(str(out), "CPU", **OV_CONFIG)
    ids, mask = left_pad(rows, 0)
    res = pipe.generate(openvino_genai.TokenizedInputs(ov.Tensor(ids), ov.Tensor(mask)),
                        max_new_tokens=max_new_tokens, do_sample=False, **kwargs)
    return [list(map(int, t)) for t in res.tokens]


def _until_eos(row, eos):
    """transformers' row up to and including its first EOS (GenAI returns no padding after it)."""
    out = []
    for t in map(int, row):
        out.append(t)
        if t in eos:
            break
    return out


@pytest.mark.parametrize("name", ["llama_default", "llama_mha", "mistral_swa", "qwen2_swa", "qwen3"])
@pytest.mark.parametrize("lengths", [BATCH1, BATCH3], ids=["b1", "b3"])
def test_genai_llm_pipeline(ov_exports, ov_refs, name, lengths):
    """openvino_genai.LLMPipeline(OUT, "CPU") loads the stateful export as it is (no tokenizer
    files: generation from token ids) and its greedy tokens equal transformers' generate: with the
    checkpoint's generation_config.json (EOS 2), and with EOS ids that stop rows early (GenAI
    returns each row up to and including its EOS, without padding)."""
    out = ov_exports(name, *OV_MODES["stateful"])
    assert not list(out.glob("openvino_*tokenizer*")), "the export has no tokenizer; GenAI must not need one"
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    ckpt_gen = json.loads((out / "generation_config.json").read_text())
    _, eos_gen = _eos_config(ov_refs, name, lengths)
    for gen, out_dir in ((ckpt_gen, out), (eos_gen, ov_exports.with_generation_config(out, eos_gen))):
        eos, _ = eos_pad(gen)
        want, _ = ov_refs.generate(name, rows, gen, max_new_tokens=GENAI_NEW_TOKENS)
        want = [_until_eos(r, eos) for r in want]
        got = _genai_generate(out_dir, rows, GENAI_NEW_TOKENS)
        assert got == want, f"{name} b{len(rows)} eos {eos}: GenAI {got}\n!= transformers {want}"


@pytest.mark.parametrize("name", ["llama_mha", "llama_default", "llama_mqa", "qwen3"])
def test_genai_paged_attention_backend(ov_exports, ov_refs, name):
    """GenAI's PagedAttention backend (ATTENTION_BACKEND "PA": continuous batching, what
    LLMPipeline tries first) rewrites the stateful model with SDPAToPagedAttention. hfx writes
    attention as 4-D ScaledDotProductAttention with k/v repeated to all heads (as transformers'
    repeat_kv), which that rewrite recognises for MHA, GQA and MQA alike. The PA KV cache is u8
    by default on CPU: KV_CACHE_PRECISION f32 (OV_CONFIG) is needed for equal tokens."""
    import openvino as ov
    import openvino_genai

    out = ov_exports(name, *OV_MODES["stateful"])
    rows = prompts(BATCH1, models.VARIANTS[name].vocab_size)
    gen = json.loads((out / "generation_config.json").read_text())
    eos, _ = eos_pad(gen)
    want, _ = ov_refs.generate(name, rows, gen, max_new_tokens=GENAI_NEW_TOKENS)
    pipe = openvino_genai.LLMPipeline(str(out), "CPU", ATTENTION_BACKEND="PA", **OV_CONFIG)
    ids, mask = left_pad(rows, 0)
    res = pipe.generate(openvino_genai.TokenizedInputs(ov.Tensor(ids), ov.Tensor(mask)),
                        max_new_tokens=GENAI_NEW_TOKENS, do_sample=False)
    got = [list(map(int, t)) for t in res.tokens]
    assert got == [_until_eos(r, eos) for r in want], f"{name}: GenAI (PA) {got} != transformers {want}"


@pytest.mark.parametrize("name", ["mistral_swa", "qwen2_swa"])
def test_genai_paged_attention_refuses_sliding_windows(ov_exports, name):
    """The PagedAttention rewrite keeps causality but drops the attention mask, which is where
    hfx's sliding windows live: a windowed export must not be rewritten into wrong attention.
    hfx writes windowed attention decomposed (no SDPA), so the rewrite refuses the model and
    LLMPipeline falls back to running it as written (test_genai_llm_pipeline: equal tokens)."""
    import openvino_genai

    out = ov_exports(name, *OV_MODES["stateful"])
    with pytest.raises(RuntimeError):
        openvino_genai.LLMPipeline(str(out), "CPU", ATTENTION_BACKEND="PA", **OV_CONFIG)


def test_genai_needs_tokenizer_only_for_text(ov_exports):
    """Without openvino_tokenizer.xml GenAI generates from token ids but refuses text prompts:
    what the export gives GenAI is enough for token-id generation."""
    import openvino_genai

    out = ov_exports("llama_default", *OV_MODES["stateful"])
    pipe = openvino_genai.LLMPipeline(str(out), "CPU", **OV_CONFIG)
    with pytest.raises(RuntimeError, match="openvino_tokenizer.xml"):
        pipe.generate("hello", max_new_tokens=2)


def test_ov_config_stateful_false(checkpoints, ov_exports, ov_refs, tmp_path):
    """The export config's "stateful": false is --stateless: prefill.xml + decode.xml with the cache
    as inputs/outputs, and it generates like transformers."""
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"export_format": "openvino", "stateful": False}))
    out = ov_exports("llama_default", "--for-generation", "--dynamic", "--config", str(cfg))
    man = manifest(out)
    assert set(man["components"]) == {"prefill", "decode"}, man["components"].keys()
    assert all(c["metadata"]["stateful"] is False for c in man["components"].values())
    assert "past_key_values.0.key" in man["components"]["decode"]["metadata"]["input_names"]
    rows = prompts(BATCH3, models.VARIANTS["llama_default"].vocab_size)
    want_tokens, want_logits = ov_refs.generate("llama_default", rows, NO_EOS)
    res = run_loop(ov_exports.with_generation_config(out, NO_EOS), rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, "config stateful false")


# ---- export configurations refused ------------------------------------------------------------------


def _config(tmp_path, **cfg):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(dict({"export_format": "openvino"}, **cfg)))
    return path


@pytest.mark.parametrize("extra,words", [
    (["--stateless"], ("stateless", "for-generation")),
    (["--config", {"no_such_key": 1}], ("no_such_key",)),
    (["--for-generation", "--config", {"no_such_key": 1}], ("no_such_key",)),
], ids=["stateless-flag-plain", "unknown-key", "unknown-key-generation"])
def test_ov_bad_config(checkpoints, tmp_path, extra, words):
    """Exit 2 with a message that names the problem, nothing left in the output directory."""
    args = [_config(tmp_path, **a) if isinstance(a, dict) else a for a in extra]
    out = tmp_path / "o"
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "openvino", "--dynamic", "--quiet", *args])
    assert proc.returncode == 2, describe(proc)
    assert any(w in proc.stderr for w in words), f"the message names none of {words}:\n{describe(proc)}"
    assert not out.exists() or not any(out.iterdir()), sorted(p.name for p in out.iterdir())


@pytest.mark.parametrize("stateful", [True, False, None], ids=["true", "false", "null"])
def test_ov_stateful_is_a_no_op_for_a_plain_forward(checkpoints, tmp_path, stateful):
    """The seed's OpenVINOConfig always carries `stateful` (default true) and calls it a no-op for a
    model without round-tripped state: a plain forward takes any value and has no variables."""
    out = tmp_path / "o"
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "openvino", "--dynamic", "--quiet",
                    "--config", _config(tmp_path, stateful=stateful)])
    assert proc.returncode == 0, describe(proc)
    assert "ReadValue" not in (out / "model.xml").read_text()
