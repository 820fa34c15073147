"""`--weight-layout stored` (ONNX option `weight_layout`): every float linear reads its weight as
the checkpoint stores it, [out, in], through Gemm(transB), so nothing is transposed while
exporting (the default, `transposed`, writes MatMul on [in, out], which onnxruntime's quantizers
take).

- Parity: every variant of the suite gives transformers' logits within 1e-4 (its padded case).
- The graph holds no transposed copy: every linear is a Gemm on a checkpoint tensor (or a slice
  of a fused one), and no MatMul reads an initializer.
- Generation: the prefill + decode export in the stored layout gives transformers' greedy tokens
  and logits through examples/generate_onnx.py, batch 1 and 3 left-padded."""

from __future__ import annotations

import onnx
import pytest

import models
from conftest import assert_logits_close, describe, run_ort

# each variant's last case: the padded batch where it has one
LAYOUT_PARAMS = [pytest.param(v.name, v.cases[-1], id=v.name) for v in models.VARIANTS_LIST]


@pytest.mark.parametrize("name,case", LAYOUT_PARAMS)
def test_stored_layout_parity(exports, name, case):
    variant = models.VARIANTS[name]
    exported = exports(name, "--weight-layout", "stored")
    inputs = models.make_inputs(case, variant.vocab_size)
    want = models.reference_logits(exported.model_dir, inputs)
    got = run_ort(exports.session(exported), inputs)
    assert_logits_close(got, want, f"{name} {case.id} (stored layout)")


@pytest.mark.parametrize("name", ["llama_default", "qwen3_tied"])
def test_stored_layout_has_no_transposed_weights(exports, name):
    m = onnx.load(str(exports(name, "--weight-layout", "stored").onnx_path), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    assert not [n.name for n in m.graph.node if n.op_type == "MatMul" and n.input[1] in inits]
    gemms = [n for n in m.graph.node if n.op_type == "Gemm"]
    cfg = models.VARIANTS[name].config
    assert len(gemms) == 7 * cfg["num_hidden_layers"] + 1  # every projection, and the head
    for g in gemms:
        assert g.input[1] in inits and "/T" not in g.input[1], g.input[1]
        assert {a.name: onnx.helper.get_attribute_value(a) for a in g.attribute} == {"transB": 1}
    transposed = onnx.load(str(exports(name).onnx_path), load_external_data=False)
    assert any(n.op_type == "MatMul" and n.input[1] in {i.name for i in transposed.graph.initializer}
               for n in transposed.graph.node), "the default layout is MatMul on [in, out]"


def test_stored_layout_generation(checkpoints, tmp_path):
    """The prefill + decode export in the stored layout: transformers' greedy tokens and every
    step's logits within 1e-4, batch 1 and 3 left-padded (the generation suite's own comparison)."""
    from genutil import NEW_TOKENS, GenExports, References, compare_generation, prompts, run_loop

    exports = GenExports(tmp_path / "exports", checkpoints)
    refs = References(checkpoints)
    no_eos = {"bos_token_id": 1, "eos_token_id": None}
    out = exports.with_generation_config(exports("llama_default", "--for-generation", "--dynamic",
                                                 "--weight-layout", "stored"), no_eos)
    for lengths in ((7,), (10, 5, 1)):
        rows = prompts(lengths, models.VARIANTS["llama_default"].vocab_size)
        want_tokens, want_logits = refs.generate("llama_default", rows, no_eos)
        res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
        assert res.proc.returncode == 0, describe(res.proc)
        compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"stored layout b{len(rows)}")
