"""Parity: hfx's ONNX export, run by ONNX Runtime (CPU), gives transformers' logits.

The reference is AutoModelForCausalLM.from_pretrained(dir, dtype=float32,
attn_implementation="eager") called with (input_ids, attention_mask, position_ids); position_ids
are generate()'s: cumsum(mask) - 1, 0 on padding. Every logit must agree within 1e-4, padded
positions included (eager attention gives fully-masked query rows a uniform average over ALL
keys, because the mask is finfo(float32).min added to the scores, not -inf).

Each variant is exported once with --dynamic; see models.py for the variants.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import models
from conftest import (
    PARITY_ATOL,
    assert_logits_close,
    export,
    run_exported,
    run_ort,
)

INPUT_NAMES = ["input_ids", "attention_mask", "position_ids"]

PARITY_PARAMS = [
    pytest.param(v.name, case, id=f"{v.name}-{case.id}")
    for v in models.VARIANTS_LIST
    for case in v.cases
]


def _dims(value_info) -> list:
    """[dim_param or dim_value or None] of a graph input/output."""
    t = value_info.type.tensor_type
    assert t.HasField("shape"), f"{value_info.name} has no shape"
    out = []
    for d in t.shape.dim:
        if d.HasField("dim_param") and d.dim_param:
            out.append(d.dim_param)
        elif d.HasField("dim_value"):
            out.append(d.dim_value)
        else:
            out.append(None)
    return out


def _load_graph_only(path: Path) -> onnx.ModelProto:
    return onnx.load(str(path), load_external_data=False)


# ---- harness self-checks (no hfx needed) ------------------------------------------------------


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_reference_left_padding_is_consistent(checkpoints, name):
    """Harness sanity: in the reference, a left-padded row's logits at its real positions equal
    the logits of the same tokens run alone, unpadded (within 1e-5).

    Exception (a transformers fact the graph must reproduce, not a harness bug): dynamic NTK
    RoPE scales by max(position_ids)+1 over the WHOLE batch, so only rows as long as the longest
    row are comparable there."""
    variant = models.VARIANTS[name]
    model_dir = checkpoints(name)
    dynamic = variant.config.get("rope_parameters", {}).get("rope_type") == "dynamic"
    for case in variant.cases:
        if not any(case.pads):
            continue
        inputs = models.make_inputs(case, variant.vocab_size)
        full = models.reference_logits(model_dir, inputs)
        assert np.isfinite(full).all(), f"{name} {case.id}: non-finite reference logits"
        longest = case.seq - min(case.pads)
        for row, pad in enumerate(case.pads):
            mpe = variant.config["max_position_embeddings"]
            if dynamic and max(case.seq - pad, mpe) != max(longest, mpe):
                continue  # scaled by a different length alone than in the batch
            alone = {k: v[row:row + 1, pad:] for k, v in inputs.items()}
            alone["position_ids"] = np.arange(case.seq - pad, dtype=np.int64)[None]
            assert (alone["position_ids"] == inputs["position_ids"][row:row + 1, pad:]).all()
            want = models.reference_logits(model_dir, alone)
            diff = float(np.abs(full[row:row + 1, pad:] - want).max())
            assert diff <= 1e-5, f"{name} {case.id} row {row}: padded vs unpadded reference differ by {diff:.3g}"


def test_reference_dynamic_ntk_uses_batch_max_position(checkpoints):
    """Documents the transformers behaviour the dynamic-NTK graph must reproduce: the scaling
    length is max(position_ids)+1 over the whole batch (not the row, not the sequence axis)."""
    model_dir = checkpoints("llama_dynamic")
    inputs = models.make_inputs(models.Case(2, 24, (2, 5)), 256)
    full = models.reference_logits(model_dir, inputs)
    row1 = {k: v[1:2, 5:] for k, v in inputs.items()}  # 19 tokens alone: 19 > 16, scaled by 19
    alone = models.reference_logits(model_dir, row1)
    assert float(np.abs(full[1:2, 5:] - alone).max()) > 1e-2
    row0 = {k: v[0:1, 2:] for k, v in inputs.items()}  # the longest row: scaled by 22 either way
    assert float(np.abs(full[0:1, 2:] - models.reference_logits(model_dir, row0)).max()) <= 1e-5


@pytest.mark.parametrize("a,b,case", [pytest.param(a, b, c, id=f"{a}-vs-{b}") for a, b, c in models.DISTINGUISHABLE])
def test_variant_is_distinguishable(checkpoints, a, b, case):
    """Harness sanity: two variants with the same weights that differ in one feature give
    reference logits that differ by >> the parity tolerance, so parity proves the feature."""
    va, vb = models.VARIANTS[a], models.VARIANTS[b]
    inputs = models.make_inputs(case, va.vocab_size)
    la = models.reference_logits(checkpoints(a), inputs)
    lb = models.reference_logits(checkpoints(b), inputs)
    diff = float(np.abs(la - lb).max())
    assert diff > 100 * PARITY_ATOL, f"{a} vs {b}: reference logits differ by only {diff:.3g}"


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST if v.twin])
def test_twin_variants_agree(checkpoints, name):
    """Harness sanity: an old-format (or sharded) checkpoint means the same model as its twin."""
    variant = models.VARIANTS[name]
    for case in variant.cases:
        inputs = models.make_inputs(case, variant.vocab_size)
        la = models.reference_logits(checkpoints(name), inputs)
        lb = models.reference_logits(checkpoints(variant.twin), inputs)
        # bit-equality is too strict: the same weights at other addresses (shards) may take
        # another SIMD path in the CPU kernels (~5e-7 seen)
        diff = float(np.abs(la - lb).max())
        assert diff <= 1e-5, f"{name} vs {variant.twin} at {case.id}: {diff:.3g}"


# ---- parity -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,case", PARITY_PARAMS)
def test_parity(exports, name, case):
    variant = models.VARIANTS[name]
    exported = exports(name)
    inputs = models.make_inputs(case, variant.vocab_size)
    want = models.reference_logits(exported.model_dir, inputs)
    got = run_ort(exports.session(exported), inputs)
    assert_logits_close(got, want, f"{name} {case.id}")


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_checker_full(exports, name):
    """onnx.checker with full_check (strict shape inference), external data included."""
    exported = exports(name)
    onnx.checker.check_model(str(exported.onnx_path), full_check=True)


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_dynamic_signature(exports, name):
    variant = models.VARIANTS[name]
    graph = _load_graph_only(exports(name).onnx_path).graph
    assert [i.name for i in graph.input] == INPUT_NAMES, f"graph inputs {[i.name for i in graph.input]}"
    for i in graph.input:
        assert i.type.tensor_type.elem_type == onnx.TensorProto.INT64, f"{i.name} is not int64"
        assert _dims(i) == ["batch_size", "sequence_length"], f"{i.name} dims {_dims(i)}"
    assert [o.name for o in graph.output] == ["logits"], f"graph outputs {[o.name for o in graph.output]}"
    (out,) = graph.output
    assert out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT, "logits is not float32"
    assert _dims(out) == ["batch_size", "sequence_length", variant.vocab_size], f"logits dims {_dims(out)}"


@pytest.mark.parametrize("name", ["llama_default", "llama_sharded", "llama_bf16", "qwen3_tied"])
def test_external_data(exports, checkpoints, name):
    """Weights live in model.onnx.data (relative location, the seed's name for it), not inline in model.onnx."""
    exported = exports(name)
    proto = _load_graph_only(exported.onnx_path)
    inline_big = []
    for init in proto.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            loc = {e.key: e.value for e in init.external_data}.get("location")
            assert loc == "model.onnx.data", f"initializer {init.name} external location {loc!r}"
        elif len(init.raw_data) > 1024:
            inline_big.append(init.name)
    assert not inline_big, f"initializers stored inline in model.onnx: {inline_big[:5]}"
    data = exported.out_dir / "model.onnx.data"
    assert data.is_file(), f"no {data}"
    n_params = checkpoints.num_parameters(name)
    # small tensors (norm weights, <= 1 KiB) may stay inline: they are < 1 % of these models
    assert data.stat().st_size >= 0.95 * 4 * n_params, (
        f"model.onnx.data holds {data.stat().st_size} bytes; {n_params} fp32 parameters need ~{4 * n_params}"
    )


# ---- determinism, static shapes, config-file shapes --------------------------------------------


@pytest.mark.parametrize("name", ["llama_default", "qwen2_swa", "llama_bf16"])
def test_export_is_deterministic(checkpoints, tmp_path, name):
    model_dir = checkpoints(name)
    export(model_dir, tmp_path / "a")
    export(model_dir, tmp_path / "b")
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b, f"different file sets: {files_a} vs {files_b}"
    differing = [str(f) for f in files_a if (tmp_path / "a" / f).read_bytes() != (tmp_path / "b" / f).read_bytes()]
    assert not differing, f"files differ between two exports of the same checkpoint: {differing}"


def test_static_export(checkpoints, tmp_path):
    """No --dynamic: shapes fixed to --batch-size 2 --sequence-length 5; ORT refuses others."""
    name = "llama_default"
    model_dir = checkpoints(name)
    out = tmp_path / "static"
    export(model_dir, out, "--batch-size", "2", "--sequence-length", "5", dynamic=False)
    graph = _load_graph_only(out / "model.onnx").graph
    for i in graph.input:
        assert _dims(i) == [2, 5], f"static export: {i.name} dims {_dims(i)}"
    assert _dims(graph.output[0]) == [2, 5, 256], f"static export: logits dims {_dims(graph.output[0])}"
    onnx.checker.check_model(str(out / "model.onnx"), full_check=True)

    from conftest import ort_session

    session = ort_session(out / "model.onnx")
    for case in (models.Case(2, 5), models.Case(2, 5, (3, 0))):
        inputs = models.make_inputs(case, 256)
        assert_logits_close(run_ort(session, inputs), models.reference_logits(model_dir, inputs),
                            f"static {case.id}")
    for bad in (models.Case(1, 5), models.Case(2, 6), models.Case(3, 4)):
        with pytest.raises(Exception) as info:
            run_ort(session, models.make_inputs(bad, 256))
        assert "dimension" in str(info.value).lower() or "shape" in str(info.value).lower(), str(info.value)


def test_static_export_default_shape(checkpoints, tmp_path):
    """No --dynamic and no shape flags: batch 2, sequence 16."""
    model_dir = checkpoints("llama_default")
    out = tmp_path / "static16"
    export(model_dir, out, dynamic=False)
    graph = _load_graph_only(out / "model.onnx").graph
    for i in graph.input:
        assert _dims(i) == [2, 16], f"{i.name} dims {_dims(i)}"
    inputs = models.make_inputs(models.Case(2, 16, (0, 6)), 256)
    assert_logits_close(run_exported(out, inputs), models.reference_logits(model_dir, inputs), "static default")


def _config_file(tmp_path: Path, **overrides) -> Path:
    axes = {"0": {"name": "batch", "min": 1, "max": 8}, "1": {"name": "seq", "min": 1, "max": 512}}
    cfg = {
        "export_format": "onnx",
        "dynamic": True,
        "opset_version": 18,
        "external_data": True,
        "dynamic_shapes": {name: axes for name in INPUT_NAMES},
    }
    cfg.update(overrides)
    path = tmp_path / "export_config_in.json"
    path.write_text(json.dumps(cfg, indent=2))
    return path


def test_config_file_dynamic_shapes(checkpoints, tmp_path):
    """--config with the Python system's dynamic_shapes: symbolic dims carry the given names."""
    model_dir = checkpoints("qwen3")
    out = tmp_path / "cfg"
    export(model_dir, out, "--config", _config_file(tmp_path), dynamic=False)
    graph = _load_graph_only(out / "model.onnx").graph
    for i in graph.input:
        assert _dims(i) == ["batch", "seq"], f"{i.name} dims {_dims(i)}"
    logits_dims = _dims(graph.output[0])
    assert isinstance(logits_dims[0], str) and isinstance(logits_dims[1], str), f"logits dims {logits_dims}"
    assert logits_dims[2] == 200, f"logits dims {logits_dims}"
    opsets = {o.domain: o.version for o in _load_graph_only(out / "model.onnx").opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == 18, f"opset_import {opsets}"
    written = json.loads((out / "export_config.json").read_text())
    assert written.get("export_format") == "onnx" and written.get("dynamic") is True, written
    for case in (models.Case(1, 3), models.Case(3, 12, (0, 3, 11))):
        inputs = models.make_inputs(case, 200)
        assert_logits_close(run_exported(out, inputs), models.reference_logits(model_dir, inputs),
                            f"config-file {case.id}")


def test_opset_flag(checkpoints, tmp_path):
    model_dir = checkpoints("llama_default")
    out = tmp_path / "opset17"
    export(model_dir, out, "--opset", "17")
    opsets = {o.domain: o.version for o in _load_graph_only(out / "model.onnx").opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == 17, f"opset_import {opsets}"
    onnx.checker.check_model(str(out / "model.onnx"), full_check=True)
    written = json.loads((out / "export_config.json").read_text())
    assert written.get("opset_version") == 17, written
    inputs = models.make_inputs(models.Case(2, 9, (4, 1)), 256)
    assert_logits_close(run_exported(out, inputs), models.reference_logits(model_dir, inputs), "opset 17")


# ---- the committed example checkpoint (what `make demo` exports) ------------------------------


def test_example_tiny_llama(tmp_path):
    model_dir = Path(__file__).resolve().parents[2] / "examples" / "tiny-llama"
    out = tmp_path / "tiny-llama-onnx"
    export(model_dir, out)
    onnx.checker.check_model(str(out / "model.onnx"), full_check=True)
    for case in (models.Case(1, 6), models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True)):
        inputs = models.make_inputs(case, 64)
        assert_logits_close(run_exported(out, inputs), models.reference_logits(model_dir, inputs),
                            f"examples/tiny-llama {case.id}")
