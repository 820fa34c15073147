"""--dtype: fp16 and bf16 graphs (weights and activations in that dtype, norms and softmax in
float32 as transformers computes them).

fp16 runs in ONNX Runtime's CPU provider and is compared with transformers running the same
checkpoint in float16 on CPU; the bound is fp16-sized, not the fp32 1e-4. bf16 graphs are checked
structurally only: ONNX Runtime's CPU provider has no bf16 kernels for Mul/MatMul."""
import numpy as np
import onnx
import torch
from transformers import AutoModelForCausalLM

import models
from conftest import export, ort_session, run_ort

FP16_ATOL = 2e-2  # logits of magnitude ~1 carry fp16 rounding (2^-11 relative) through 2 layers


def _elem_type(value_info):
    return value_info.type.tensor_type.elem_type


def test_fp16_export_runs_and_matches_transformers_fp16(checkpoints, tmp_path):
    model_dir = checkpoints("llama_default")
    out = tmp_path / "fp16"
    export(model_dir, out, "--dtype", "fp16")
    onnx.checker.check_model(str(out / "model.onnx"), full_check=True)
    graph = onnx.load(str(out / "model.onnx"), load_external_data=False).graph
    assert _elem_type(graph.output[0]) == onnx.TensorProto.FLOAT16
    session = ort_session(out / "model.onnx")
    ref_model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float16, attn_implementation="eager")
    worst = 0.0
    for case in (models.Case(1, 7), models.Case(3, 12, (0, 4, 7))):
        inputs = models.make_inputs(case, 256)
        got = run_ort(session, inputs).astype(np.float32)
        with torch.no_grad():
            want = ref_model(**{k: torch.from_numpy(v) for k, v in inputs.items()}).logits.float().numpy()
        mask = inputs["attention_mask"].astype(bool)  # fp16 rounding differs most in padded rows
        diff = float(np.abs(got - want)[mask].max())
        worst = max(worst, diff)
        assert diff <= FP16_ATOL, f"fp16 {case.id}: max abs diff {diff:.3g} > {FP16_ATOL}"
    print(f"fp16 worst diff {worst:.3g}")


def test_bf16_export_is_valid_onnx(checkpoints, tmp_path):
    out = tmp_path / "bf16"
    export(checkpoints("llama_default"), out, "--dtype", "bf16")
    onnx.checker.check_model(str(out / "model.onnx"), full_check=True)
    model = onnx.load(str(out / "model.onnx"), load_external_data=False)
    assert _elem_type(model.graph.output[0]) == onnx.TensorProto.BFLOAT16
    weights = [t for t in model.graph.initializer if t.name.endswith("embed_tokens.weight")]
    assert weights and weights[0].data_type == onnx.TensorProto.BFLOAT16
