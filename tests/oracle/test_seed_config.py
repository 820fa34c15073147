"""The Python system's export configs (transformers.exporters' config dataclasses) are hfx's:
every field of OnnxConfig and OpenVINOConfig is accepted as the seed writes it (its
to_json_string, the export_config that its export.json records), null meaning the default, and
hfx's export_config.json loads back through the seed's AutoExportConfig.from_dict."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import describe, run_hfx

from transformers.exporters import configs
from transformers.exporters.auto import AutoExportConfig

SEED = {"onnx": configs.OnnxConfig, "openvino": configs.OpenVINOConfig}


@pytest.mark.parametrize("fmt", sorted(SEED))
@pytest.mark.parametrize("how", ["defaults", "nulls"])
def test_every_seed_field_is_accepted_and_round_trips(checkpoints, tmp_path, fmt, how):
    cls = SEED[fmt]
    seed = json.loads(cls(dynamic=True).to_json_string())  # what the seed records
    fields = {f.name for f in dataclasses.fields(cls)} - {"quantizer"}
    assert fields <= set(seed), "the seed's JSON lacks a field of its own class"
    if how == "nulls":  # the seed's dataclasses take None for every field: its default
        seed = {k: (v if k in ("export_format", "dynamic") else None) for k, v in seed.items()}
        seed["quantizer"] = None
    path = tmp_path / "seed_config.json"
    path.write_text(json.dumps(seed))
    out = tmp_path / "out"
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--config", path, "--quiet"])
    assert proc.returncode == 0, describe(proc)
    written = json.loads((out / "export_config.json").read_text())
    back = AutoExportConfig.from_dict(written)  # the seed reads hfx's file
    assert isinstance(back, cls)
    for name in fields:
        assert getattr(back, name) == seed.get(name, getattr(cls(), name)), name


@pytest.mark.parametrize("cfg, words, code", [
    ({"ort_fusions": "tpu"}, ("ort_fusions", "cpu"), 2),
    ({"ort_fusions": "cpu", "optimize": False}, ("ort_fusions", "optimize"), 2),
    ({"quantizer": {"kind": "int8"}}, ("quantizer",), 2),
], ids=["ort-fusions-unknown", "ort-fusions-without-optimize", "quantizer-object"])
def test_seed_values_the_seed_refuses_are_refused(checkpoints, tmp_path, cfg, words, code):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(dict({"export_format": "onnx"}, **cfg)))
    proc = run_hfx(["export", checkpoints("llama_default"), tmp_path / "out", "--config", path])
    assert proc.returncode == code, describe(proc)
    assert all(w in proc.stderr for w in words), describe(proc)


def test_ort_fusions_is_a_documented_no_op(checkpoints, tmp_path):
    """ort_fusions asks the seed for ONNX Runtime contrib ops; hfx's standard-op graph is what ORT
    fuses at load, so the value changes no byte of the graph."""
    outs = []
    for value in (None, "cpu"):
        path = tmp_path / f"c-{value}.json"
        path.write_text(json.dumps({"export_format": "onnx", "ort_fusions": value}))
        out = tmp_path / f"out-{value}"
        proc = run_hfx(["export", checkpoints("llama_default"), out, "--config", path, "--quiet"])
        assert proc.returncode == 0, describe(proc)
        outs.append((out / "model.onnx").read_bytes())
    assert outs[0] == outs[1]
