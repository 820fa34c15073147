"""The Python system's I/O profile ("io": "seed"): hfx's generation graphs take and return what
transformers.exporters' own ONNX export of the same tiny model does — the same inputs and outputs,
in order, with the same dtypes and ranks (compared with a fresh export by the seed, made here) — and
the seed's documented ONNX Runtime decode loop runs on them unchanged (CPU io-binding in place of
its CudaSession), giving transformers' greedy tokens."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from conftest import describe, run_hfx

from seedutil import MAX_CACHE_LEN, MODES, hfx_seed_export, seed_exporter  # noqa: E402,F401


def _io(path):
    """A graph's (inputs, outputs): names, element types and ranks in order — but the masks per layer type in name
    order: the seed's order is that of a Python set of strings (create_masks_for_generate), which changes with
    PYTHONHASHSEED from one export to the next."""
    m = onnx.load(str(path), load_external_data=False)

    def side(vs):
        return [(v.name, onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type), len(v.type.tensor_type.shape.dim))
                for v in vs]
    inputs = side(m.graph.input)
    at = [k for k, v in enumerate(inputs) if v[0].startswith("attention_mask.")]
    if at:
        assert at == list(range(at[0], at[0] + len(at))), inputs
        inputs[at[0]:at[-1] + 1] = sorted(inputs[at[0]:at[-1] + 1])
    return inputs, side(m.graph.output)


def _hfx_seed_export(checkpoint, out, mode):
    return hfx_seed_export(checkpoint, out, "onnx", mode)


@pytest.fixture(scope="session")
def seed_exports(tmp_path_factory, checkpoints):
    """transformers.exporters' own export of a checkpoint, per cache mode (made once)."""
    return seed_exporter(tmp_path_factory, checkpoints, "onnx")


# Qwen3's transformers config declares layer_types: the seed names its mask per type there
@pytest.mark.parametrize("name,mode", [("llama_default", m) for m in sorted(MODES)] +
                         [("qwen3", "static"), ("qwen3", "static-multi"), ("gemma", "static"),
                          ("mistral_swa", "dynamic"), ("mistral_swa", "dynamic-multi"), ("gemma2", "dynamic"),
                          ("mistral_swa", "static"), ("qwen2_swa", "static"), ("gemma2", "static")])
def test_io_lists_equal_the_seeds(checkpoints, seed_exports, tmp_path, name, mode):
    seed = seed_exports(name, mode)
    ours = _hfx_seed_export(checkpoints(name), tmp_path / "hfx", mode)
    graphs = sorted(p.name for p in seed.glob("*.onnx"))
    assert graphs == sorted(p.name for p in ours.glob("*.onnx")) == ["decode.onnx", "prefill.onnx"]
    for g in graphs:
        assert _io(ours / g) == _io(seed / g), g
        assert (ours / f"{g}.data").is_file(), "each graph's weights beside it, as the seed writes them"
    # export.json: the seed's per-component fields, but its torch pytree specs (no ONNX meaning)
    theirs = json.loads((seed / "export.json").read_text())["components"]
    mine = json.loads((ours / "export.json").read_text())["components"]
    assert set(mine) == set(theirs)
    for comp, entry in theirs.items():
        want, got = entry["metadata"], mine[comp]["metadata"]
        assert mine[comp]["file"] == entry["file"]
        assert set(want) - {"in_spec", "out_spec"} <= set(got), sorted(set(want) - set(got))
        assert set(got["kwargs"]) == set(want["kwargs"]), comp
        def kind(entry):  # what hfx can know without tracing: rank and dtype, or the container
            if "leaves" in entry:
                return {leaf: kind(e) for leaf, e in entry["leaves"].items()}
            return entry["container"] if "container" in entry else (entry["rank"], entry["dtype"])
        for k, v in want["kwargs"].items():
            assert kind(got["kwargs"][k]) == kind(v), (comp, k)


TYPES = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(bool)": np.bool_}


def _seed_ort_loop(out, prompt, new_tokens):
    """The seed docs' ONNX Runtime decode loop, as written, with ORT's CPU io-binding in place of
    CudaSession (set_buffer_sharing → one OrtValue bound to input.<name> and output.<name>), and
    the mask bound under every attention_mask* name, as the seed's own exports of models with
    layer_types need."""
    max_cache_len = MAX_CACHE_LEN
    session = ort.InferenceSession(str(out / "decode.onnx"), providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    cache = {}
    for i in session.get_inputs():
        if not i.name.startswith("input."):
            continue
        name = i.name[len("input."):]
        dims = [max_cache_len if isinstance(d, str) and not d.isdigit() else int(d) for d in i.shape]
        cache[name] = ort.OrtValue.ortvalue_from_numpy(np.zeros(dims, dtype=TYPES[i.type]))

    def causal_mask(positions, cache_len):
        return (np.arange(cache_len)[None, :] <= positions[:, None])[None, None]

    mask_names = [i.name for i in session.get_inputs() if i.name.startswith("attention_mask")]

    def infer(feed):
        # the mask under every name the graph takes it (Qwen3's seed export: attention_mask.full_attention)
        feed = {**{n: feed["attention_mask"] for n in mask_names},
                **{k: v for k, v in feed.items() if k != "attention_mask"}}
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
        for k, v in feed.items():
            binding.bind_cpu_input(k, v)
        for name, buf in cache.items():
            binding.bind_ortvalue_input(f"input.{name}", buf)
            binding.bind_ortvalue_output(f"output.{name}", buf)
        binding.bind_output("logits")
        session.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()[-1]

    prompt_len = prompt.shape[1]
    positions = np.arange(prompt_len)
    logits = infer({"input_ids": prompt, "attention_mask": causal_mask(positions, max_cache_len),
                    "position_ids": positions[None]})
    tokens = [int(logits[0, -1].argmax())]
    for position in range(prompt_len, prompt_len + new_tokens - 1):
        logits = infer({"input_ids": np.array([[tokens[-1]]]),
                        "attention_mask": causal_mask(np.array([position]), max_cache_len),
                        "position_ids": np.array([[position]])})
        tokens.append(int(logits[0, -1].argmax()))
    return tokens


def _greedy(checkpoint, prompt, new_tokens):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(str(checkpoint)).eval()
    with torch.no_grad():
        out = model.generate(torch.tensor(prompt), max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             do_sample=False)
    return out[0, prompt.shape[1]:].tolist()


@pytest.mark.parametrize("name", ["llama_default", "qwen3", "granite", "olmo2", "gemma", "llama_gqa"])
def test_seed_decode_loop_gives_transformers_tokens(checkpoints, tmp_path, name):
    ck = checkpoints(name)
    out = _hfx_seed_export(ck, tmp_path / "hfx", "static-multi")
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    prompt = np.random.default_rng(7).integers(3, vocab, size=(1, 6)).astype(np.int64)
    assert _seed_ort_loop(out, prompt, 32) == _greedy(ck, prompt, 32)


@pytest.mark.parametrize("name,mode", [("llama_default", "dynamic"), ("llama_default", "static"),
                                       ("mistral_swa", "dynamic"), ("gemma2", "dynamic")])
def test_prefill_then_decode_gives_transformers_tokens(checkpoints, tmp_path, name, mode):
    """The two-graph layout: prefill.onnx starts the cache (cache.layers.* out), decode.onnx
    continues it one token at a time (input.cache.* in, output.cache.* out). A sliding layer's
    window travels as input.cache.layers.{i}._sliding_window_tensor (the window, passed through);
    the steps go past the window."""
    ck = checkpoints(name)
    out = _hfx_seed_export(ck, tmp_path / "hfx", mode)
    prefill = ort.InferenceSession(str(out / "prefill.onnx"), providers=["CPUExecutionProvider"])
    decode = ort.InferenceSession(str(out / "decode.onnx"), providers=["CPUExecutionProvider"])
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    prompt = np.random.default_rng(3).integers(3, vocab, size=(1, 5)).astype(np.int64)
    n = prompt.shape[1]
    feed = {"input_ids": prompt, "position_ids": np.arange(n)[None]}
    feed.update({i.name: np.array(0, np.int64) for i in prefill.get_inputs() if i.name.endswith("cumulative_length")})
    window = json.loads((ck / "config.json").read_text()).get("sliding_window") or 0
    feed.update({i.name: np.array(window, np.int64) for i in prefill.get_inputs()
                 if i.name.endswith("_sliding_window_tensor")})
    names = [o.name for o in prefill.get_outputs()]
    res = dict(zip(names, prefill.run(None, feed)))
    cache = {k.removeprefix("output."): v for k, v in res.items() if k != "logits"}
    tokens = [int(res["logits"][0, -1].argmax())]
    for position in range(n, n + 15):
        feed = {"input_ids": np.array([[tokens[-1]]]), "position_ids": np.array([[position]])}
        if mode == "static":
            feed["attention_mask"] = (np.arange(MAX_CACHE_LEN) <= position)[None, None, None]
        feed.update({f"input.{k}": v for k, v in cache.items()})
        names = [o.name for o in decode.get_outputs()]
        res = dict(zip(names, decode.run(None, feed)))
        cache = {k.removeprefix("output."): v for k, v in res.items() if k != "logits"}
        tokens.append(int(res["logits"][0, -1].argmax()))
    assert tokens == _greedy(ck, prompt, 16)


def _assert_static_seed_refused(checkpoint, tmp_path, fmt, reason):
    """A static-cache export in the seed profile that hfx refuses: exit 2, `reason` in the message."""
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"export_format": fmt, "dynamic": True, "io": "seed",
                               "cache_implementation": "static", "max_cache_len": 32}))
    proc = run_hfx(["export", checkpoint, tmp_path / "o", "--config", cfg, "--for-generation"])
    assert proc.returncode == 2 and reason in proc.stderr, describe(proc)


def _generate_calls(checkpoint, prompt, new_tokens):
    """transformers' greedy generate with a static cache of MAX_CACHE_LEN slots: the keyword tensors of every forward
    call it makes (its masks as it builds them, per layer type where the config has layer_types), and each step's
    logits."""
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(str(checkpoint)).eval()
    calls, forward = [], model.forward

    def tensors(v):
        if isinstance(v, dict):
            return {k: t.clone().numpy() for k, t in v.items() if t is not None}
        return v.clone().numpy()

    def record(*args, **kwargs):
        calls.append({k: tensors(v) for k, v in kwargs.items() if k in ("input_ids", "position_ids", "attention_mask")})
        return forward(*args, **kwargs)
    model.forward = record
    with torch.no_grad():
        out = model.generate(torch.tensor(prompt), max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             do_sample=False, cache_implementation="static", max_cache_len=MAX_CACHE_LEN,
                             output_logits=True, return_dict_in_generate=True)
    return calls, out.sequences[0, prompt.shape[1]:].tolist(), torch.stack(out.logits)[:, 0].numpy()


def _runner(out, fmt, component):
    """(input names, run(feed) → {output name: array}) of a component in ONNX Runtime or OpenVINO (f32)."""
    if fmt == "onnx":
        session = ort.InferenceSession(str(out / f"{component}.onnx"), providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return [i.name for i in session.get_inputs()], lambda feed: dict(zip(names, session.run(None, feed)))
    import openvino as ov
    request = ov.Core().compile_model(str(out / f"openvino_{component}.xml"), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    def run(feed):
        res = request.infer(feed)
        return {p.get_any_name(): np.array(res[p]) for p in request.model_outputs}
    return [i.get_any_name() for i in request.model_inputs], run


@pytest.mark.parametrize("name,fmt", [("mistral_swa", "onnx"), ("qwen2_swa", "onnx"), ("gemma2", "onnx"),
                                      ("gemma2", "openvino")])
def test_static_sliding_window_takes_what_generate_passes(checkpoints, tmp_path, name, fmt):
    """A static cache with sliding layers (window 4; Mistral's every layer, Qwen2's layer 1, Gemma 2's even ones):
    each sliding layer keeps the last `window` keys, as transformers' StaticSlidingWindowLayer does, and the
    prefill and decode take the masks generate() builds for each call — a sliding layer's over the window or the
    longer prompt, a full layer's over the cache (none in an sdpa prefill; Gemma 2's eager attention: additive
    floats in every call). Fed exactly those, with the counters and caches passed back, 20 steps past the window
    give generate's tokens, every step's logits within 1e-4."""
    ck = checkpoints(name)
    if fmt == "onnx":
        out = _hfx_seed_export(ck, tmp_path / "hfx", "static")
    else:  # (a static cache: stateless)
        cfg = tmp_path / "ov.json"
        cfg.write_text(json.dumps({"export_format": "openvino", "dynamic": True, "io": "seed", "stateful": False}))
        out = tmp_path / "hfx"
        proc = run_hfx(["export", ck, out, "--config", cfg, "--for-generation", "--quiet", *MODES["static"][0]])
        assert proc.returncode == 0, describe(proc)
    prefill, decode = _runner(out, fmt, "prefill"), _runner(out, fmt, "decode")
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    prompt = np.random.default_rng(5).integers(3, vocab, size=(1, 6)).astype(np.int64)
    calls, want, want_logits = _generate_calls(ck, prompt, 20)
    cache, logits, seen = {}, [], 0
    for step, call in enumerate(calls):
        session = prefill if step == 0 else decode
        n = call["input_ids"].shape[1]  # (generate passes no position_ids: the seed's call adds them)
        feed = {"input_ids": call["input_ids"], "position_ids": np.arange(seen, seen + n)[None]}
        seen += n
        masks = call["attention_mask"]
        feed.update({f"attention_mask.{k}": v for k, v in masks.items()} if isinstance(masks, dict)
                    else {"attention_mask": masks})
        feed.update({f"input.{k}": v for k, v in cache.items()})
        names, run = session
        feed.update({n: np.array(0, np.int64) for n in names if n.endswith("cumulative_length") and step == 0})
        res = run({n: feed[n] for n in names})
        cache = {k.removeprefix("output."): v for k, v in res.items() if k != "logits"}
        logits.append(res["logits"][0, -1])
    assert [int(v.argmax()) for v in logits] == want
    np.testing.assert_allclose(np.stack(logits), want_logits, atol=1e-4, rtol=0)


@pytest.mark.parametrize("fmt", ["dynamo", "executorch"])
def test_static_sliding_window_refused_in_torch_formats(checkpoints, tmp_path, fmt):
    """The torch programs cannot hold it: .pt2's input spec pins the sliding layers' Python token count, ExecuTorch's
    memory plan the counter-dependent size of the keys they keep."""
    _assert_static_seed_refused(checkpoints("mistral_swa"), tmp_path, fmt, "sliding-window")


# ---- OpenVINO ------------------------------------------------------------------------------------

def _ov_io(path):
    import openvino as ov
    m = ov.Core().read_model(str(path))

    def side(ports):
        return [(p.get_any_name(), p.get_element_type().get_type_name(), p.get_partial_shape().rank.get_length())
                for p in ports]
    variables = sorted({op.get_variable_id() for op in m.get_ops() if op.get_type_name() == "ReadValue"})
    return side(m.inputs), side(m.outputs), variables


def _seed_ov_export(checkpoint, out):
    from transformers import AutoModelForCausalLM
    from transformers.exporters import OpenVINOExporter
    from transformers.exporters.configs import OpenVINOConfig
    model = AutoModelForCausalLM.from_pretrained(str(checkpoint)).eval()
    ids = torch.tensor([[1, 5, 9, 3]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = OpenVINOConfig(dynamic=True)
        OpenVINOExporter().export_for_generation(
            model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, config=cfg).save_pretrained(str(out))
    return out


def _ov_prefill_then_stateful_decode(out, prompt, new_tokens):
    """The seed's OpenVINO layout: openvino_prefill.xml returns the cache, openvino_decode.xml keeps
    it in variables (input.<name>output.<name>) that start from the prefill's outputs."""
    import openvino as ov
    core = ov.Core()
    cfg = {"INFERENCE_PRECISION_HINT": "f32"}
    prefill = core.compile_model(str(out / "openvino_prefill.xml"), "CPU", cfg).create_infer_request()
    decode = core.compile_model(str(out / "openvino_decode.xml"), "CPU", cfg).create_infer_request()
    n = prompt.shape[1]
    res = prefill.infer({"input_ids": prompt, "position_ids": np.arange(n)[None]})
    outs = {p.get_any_name(): res[p] for p in prefill.model_outputs}
    for state in decode.query_state():
        name = state.name.split("output.")[0].removeprefix("input.")
        state.state = ov.Tensor(np.ascontiguousarray(outs[name]))
    tokens = [int(outs["logits"][0, -1].argmax())]
    for position in range(n, n + new_tokens - 1):
        res = decode.infer({"input_ids": np.array([[tokens[-1]]]), "position_ids": np.array([[position]]),
                            "beam_idx": np.zeros(1, np.int32)})
        tokens.append(int(res[decode.model_outputs[0]][0, -1].argmax()))
    return tokens


def test_openvino_seed_profile_equals_the_seeds_and_generates(checkpoints, tmp_path):
    """--format openvino --io seed: openvino_prefill.xml (stateless, cache out) and
    openvino_decode.xml (stateful, beam_idx), I/O and variable ids equal to the seed's own
    OpenVINO export; one decode loop gives transformers' greedy tokens on both."""
    ck = checkpoints("llama_default")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"export_format": "openvino", "dynamic": True, "io": "seed"}))
    proc = run_hfx(["export", ck, tmp_path / "hfx", "--config", cfg, "--for-generation", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    seed = _seed_ov_export(ck, tmp_path / "seed")
    assert {p.name for p in (tmp_path / "hfx").glob("openvino_*")} >= {p.name for p in seed.glob("openvino_*")}
    for comp in ("prefill", "decode"):
        assert _ov_io(tmp_path / "hfx" / f"openvino_{comp}.xml") == _ov_io(seed / f"openvino_{comp}.xml"), comp
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    prompt = np.random.default_rng(5).integers(3, vocab, size=(1, 6)).astype(np.int64)
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(str(ck)).eval()
    with torch.no_grad():  # free generation: it may end at EOS, where the loops' tokens are cut
        want = model.generate(torch.tensor(prompt), max_new_tokens=24, do_sample=False)[0, prompt.shape[1]:].tolist()
    assert len(want) > 8
    assert _ov_prefill_then_stateful_decode(seed, prompt, 24)[:len(want)] == want  # the loop itself is right
    assert _ov_prefill_then_stateful_decode(tmp_path / "hfx", prompt, 24)[:len(want)] == want


def test_openvino_seed_static_cache_needs_stateless(checkpoints, tmp_path):
    _assert_static_seed_refused(checkpoints("llama_default"), tmp_path, "openvino", "stateful false")


def test_openvino_seed_stateful_sliding_window_is_refused(checkpoints, tmp_path):
    """The seed's growing cache carries a sliding layer's window as a scalar state; OpenVINO's
    stateful decode cannot start one from zeros, so the export is refused by name (exit 2,
    nothing written) rather than crashing (it did: a rank-0 state has no batch axis)."""
    import json

    cfg = tmp_path / "seed.json"
    cfg.write_text(json.dumps({"export_format": "openvino", "io": "seed"}))
    out = tmp_path / "out"
    proc = run_hfx(["export", checkpoints("gemma2"), out, "--config", cfg, "--for-generation", "--dynamic", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert "_sliding_window_tensor" in proc.stderr and '"stateful": false' in proc.stderr, proc.stderr
    assert not out.exists(), sorted(out.iterdir())
    stateless = tmp_path / "stateless.json"
    stateless.write_text(json.dumps({"export_format": "openvino", "io": "seed", "stateful": False}))
    proc = run_hfx(["export", checkpoints("gemma2"), tmp_path / "ok", "--config", stateless, "--for-generation",
                    "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)


def test_dynamic_shapes_name_the_4d_mask_axes(checkpoints, tmp_path):
    """dynamic_shapes in the seed's terms: the static decode's mask is [batch, 1, sequence, cache],
    so its axes 0, 2 and 3 name the batch, the query length and the cache length (axis 1 cannot
    vary); the seed's loop runs on the result."""
    spec = {"input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "seq", "min": 1, "max": 64}},
            "attention_mask": {"0": {"name": "batch", "min": 1, "max": 4}, "2": {"name": "seq", "min": 1, "max": 64},
                               "3": {"name": "cache", "min": 1, "max": MAX_CACHE_LEN}}}
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"export_format": "onnx", "io": "seed", "cache_implementation": "static",
                               "max_cache_len": MAX_CACHE_LEN, "dynamic_shapes": spec}))
    ck = checkpoints("llama_default")
    proc = run_hfx(["export", ck, tmp_path / "o", "--config", cfg, "--for-generation", "--multi-token-decode", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    m = onnx.load(str(tmp_path / "o" / "decode.onnx"), load_external_data=False)
    dims = {v.name: [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim] for v in m.graph.input}
    assert dims["attention_mask"] == ["batch", 1, "seq", "cache"]
    assert dims["input.cache.layers.0.keys"][2] == "cache"
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    prompt = np.random.default_rng(11).integers(3, vocab, size=(1, 5)).astype(np.int64)
    assert _seed_ort_loop(tmp_path / "o", prompt, 16) == _greedy(ck, prompt, 16)
    spec["attention_mask"]["1"] = {"name": "heads"}
    cfg.write_text(json.dumps({"export_format": "onnx", "io": "seed", "cache_implementation": "static",
                               "max_cache_len": MAX_CACHE_LEN, "dynamic_shapes": spec}))
    proc = run_hfx(["export", ck, tmp_path / "p", "--config", cfg, "--for-generation", "--multi-token-decode"])
    assert proc.returncode == 2 and "axes 0, 2 and 3 can vary" in proc.stderr, describe(proc)
