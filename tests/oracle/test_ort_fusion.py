"""ONNX Runtime's graph optimizer recognizes hfx's RMSNorm as one SimplifiedLayerNormalization
kernel. The lowering writes the exact op sequence its fusion looks for; a change that breaks the
match would still pass parity but cost runtime speed (about 10% of a 0.6B prefill on CPU), so the
optimized graph ORT itself produces is checked here."""

from __future__ import annotations

from collections import Counter

import onnx
import onnxruntime as ort
import pytest

import models


@pytest.mark.parametrize("name", ["llama_default", "qwen3", "llama_bf16", "gemma", "gemma3"])
def test_rms_norm_fuses_in_onnxruntime(name, exports, tmp_path):
    exported = exports(name)
    # every RMSNorm hfx writes has exactly one ReduceMean, and these decoders use it nowhere else
    written = Counter(n.op_type for n in onnx.load(exported.onnx_path, load_external_data=False).graph.node)
    assert written["ReduceMean"] > models.VARIANTS[name].config["num_hidden_layers"], written
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    opts.log_severity_level = 3
    ort.InferenceSession(str(exported.onnx_path), opts, providers=["CPUExecutionProvider"])
    ops = Counter(n.op_type for n in onnx.load(opts.optimized_model_filepath, load_external_data=False).graph.node)
    fused = ops["SimplifiedLayerNormalization"] + ops["SkipSimplifiedLayerNormalization"]
    assert fused == written["ReduceMean"] and ops["ReduceMean"] == 0, (
        f"{name}: ORT fused {fused} of hfx's {written['ReduceMean']} RMSNorms; optimized graph ops {dict(ops)}")
