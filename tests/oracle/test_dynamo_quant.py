"""--format dynamo --quantize int8|int4: torch.export programs whose linears read weight-only int8 or int4 weights as
PT2E's programs do — the codes (int4 stored two a byte offset by 8, unpacked in the program into one int8 code a byte)
and float32 scales as constants, dequantized by torch.ops.quantized_decomposed.dequantize_per_channel (int64 zero
points of 0) or dequantize_per_channel_group (registered by torch.ao.quantization.fx._decomposed) before each
aten.linear. The
reference is torchao on the transformers model (IntxWeightOnlyConfig: int8 per output channel, int4 in groups of 32
and per channel, symmetric), in the executorch venv (etutil's worker, which has torchao):

  * the program's codes and scales are torchao's, bit for bit, for every linear (the head too);
  * its logits are that quantized model's eager forward within 1e-4 (batch 2, left-padded), and examples/
    generate_torch.py's greedy loop over the prefill and decode programs gives its generate() tokens, each step's
    logits within 1e-4;
  * torch._inductor.aoti_compile_and_package compiles the program, and the compiled package returns its logits;
  * what is not written yet (asymmetric weights, quantized embedding tables) is refused by name, leaving no output."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import models
from conftest import REPO, assert_logits_close, call_pt2, describe, load_pt2, run_hfx
from etutil import worker
from genutil import NEW_TOKENS, compare_generation, left_pad, prompts, run_loop

NAME = "llama_default"  # (untied: torchao quantizes the head as a linear of its own)

WEIGHT_ONLY = r"""
import numpy as np, torch
from transformers import AutoModelForCausalLM
from torchao.quantization import quantize_
from torchao.quantization.granularity import PerAxis, PerGroup
from torchao.quantization.quant_api import IntxWeightOnlyConfig
ck, bits, group, what, payload, out = args
m = AutoModelForCausalLM.from_pretrained(ck, dtype=torch.float32, attn_implementation="eager").eval()
quantize_(m, IntxWeightOnlyConfig(weight_dtype=getattr(torch, f"int{bits}"),
                                  granularity=PerGroup(group) if group else PerAxis(0)))
saved = {}
with torch.no_grad():
    if what == "parts":
        for name, mod in m.named_modules():
            w = getattr(mod, "weight", None)
            if isinstance(mod, torch.nn.Linear) and hasattr(w, "qdata"):
                saved[name + "/codes"] = w.qdata.numpy().copy()
                saved[name + "/scales"] = w.scale.reshape(-1).float().numpy().copy()
    elif what == "forward":
        ids, mask = (torch.tensor(x) for x in payload)
        saved["logits"] = m(input_ids=ids, attention_mask=mask, use_cache=False).logits.numpy()
    else:
        ids, mask, n = payload
        g = m.generate(torch.tensor(ids), attention_mask=torch.tensor(mask), max_new_tokens=n, do_sample=False,
                       eos_token_id=None, pad_token_id=0, output_logits=True, return_dict_in_generate=True)
        saved["tokens"] = g.sequences[:, len(ids[0]):].numpy()
        saved["logits"] = torch.stack(g.logits).float().numpy()
np.savez(out, **saved)
"""


# (bits, group; 0: per output channel)
SCHEMES = [(8, 0), (4, 32), (4, 0)]


def _sid(scheme):
    return f"int{scheme[0]}-{'g' + str(scheme[1]) if scheme[1] else 'channel'}"


def _flags(scheme):
    return ("--quantize", f"int{scheme[0]}", "--group-size", str(scheme[1]))


def torchao(checkpoint, scheme, what, payload=None) -> dict:
    return worker().python_arrays(WEIGHT_ONLY, [str(checkpoint), scheme[0], scheme[1], what, payload])


def _export(checkpoint, out, scheme, *flags):
    proc = run_hfx(["export", checkpoint, out, "--format", "dynamo", "--dynamic", "--quiet", *_flags(scheme), *flags])
    assert proc.returncode == 0, describe(proc)
    return out


@pytest.fixture(scope="module")
def plain(checkpoints, tmp_path_factory):
    root, done = tmp_path_factory.mktemp("quant_pt2"), {}

    def get(scheme):
        if scheme not in done:
            done[scheme] = _export(checkpoints(NAME), root / _sid(scheme), scheme)
        return done[scheme]
    return get


DEQUANTIZE = ("dequantize_per_channel", "dequantize_per_channel_group")


def _stored_codes(program, constants, node):
    """The int8 codes a dequantize reads: its input constant, or (int4) the uint8 constant the program unpacks,
    unpacked here (low nibble first, offset by 8)."""
    while node.op != "placeholder":  # (its first tensor argument, a list's first item)
        node = next(a for a in torch.fx.node.map_aggregate(node.args, lambda x: x) if isinstance(a, torch.fx.Node)) \
            if any(isinstance(a, torch.fx.Node) for a in node.args) else node.args[0][0]
    stored = constants[node.name].numpy()
    if stored.dtype == np.int8:
        return stored
    return (np.stack([stored & 15, stored >> 4], -1).reshape(stored.shape[0], -1).astype(np.int16) - 8).astype(np.int8)


@pytest.mark.parametrize("scheme", SCHEMES, ids=_sid)
def test_codes_and_scales_equal_torchao(plain, checkpoints, scheme):
    program = load_pt2(plain(scheme) / "model.pt2")
    dequantized = [n for n in program.graph.nodes if getattr(n.target, "__name__", "").split(".")[0] in DEQUANTIZE]
    want = torchao(checkpoints(NAME), scheme, "parts")
    assert len(dequantized) == len(want) // 2 > 0  # every linear, the head too
    constants = {n.name: program.constants[spec.target] for n in program.graph.nodes if n.op == "placeholder"
                 for spec in program.graph_signature.input_specs
                 if spec.arg.name == n.name and spec.kind.name == "CONSTANT_TENSOR"}
    got = sorted((_stored_codes(program, constants, d.args[0]).tobytes(),
                  constants[d.args[1].name].numpy().reshape(-1).tobytes()) for d in dequantized)
    wanted = sorted((want[k].astype(np.int8).tobytes(), want[k[:-len("codes")] + "scales"].astype(np.float32).tobytes())
                    for k in want if k.endswith("/codes"))
    assert got == wanted
    # no float copy of a quantized weight is stored beside its codes; int4 codes stored two a byte
    assert not [k for k in program.state_dict if k.endswith("proj.weight") or k.startswith("lm_head")]
    stored = [c for c in constants.values() if c.dtype in (torch.int8, torch.uint8) and c.dim() == 2]
    assert sum(c.numel() for c in stored) * (2 if scheme[0] == 4 else 1) == sum(want[k].size for k in want
                                                                               if k.endswith("/codes"))


@pytest.mark.parametrize("scheme", SCHEMES, ids=_sid)
def test_logits_equal_torchao(plain, checkpoints, scheme):
    ids, mask = left_pad(prompts((9, 4), models.VARIANTS[NAME].vocab_size), 0)
    positions = np.maximum(np.cumsum(mask, 1) - 1, 0)
    got = call_pt2(load_pt2(plain(scheme) / "model.pt2"),
                   {"input_ids": ids, "attention_mask": mask, "position_ids": positions})
    want = torchao(checkpoints(NAME), scheme, "forward", [ids.tolist(), mask.tolist()])["logits"]
    for b, row in enumerate(mask.astype(bool)):  # each row's real positions
        assert_logits_close(got[0].numpy()[b:b + 1, row], want[b:b + 1, row], f"{_sid(scheme)} .pt2 row {b} vs torchao")


@pytest.mark.parametrize("scheme", [(8, 0), (4, 32)], ids=_sid)
def test_generation_equals_torchao(checkpoints, tmp_path, scheme):
    out = _export(checkpoints(NAME), tmp_path / "gen", scheme, "--for-generation")
    (out / "generation_config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": None}))
    rows = prompts((7, 3), models.VARIANTS[NAME].vocab_size)
    ids, mask = left_pad(rows, 0)
    want = torchao(checkpoints(NAME), scheme, "generate", [ids.tolist(), mask.tolist(), NEW_TOKENS])
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz", timeout=300,
                   script=REPO / "examples" / "generate_torch.py")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want["tokens"], want["logits"], f"[dynamo {_sid(scheme)}] generate")


@pytest.mark.parametrize("scheme", [(8, 0), (4, 32)], ids=_sid)
def test_aoti_compiles_it(plain, tmp_path, scheme):
    program = load_pt2(plain(scheme) / "model.pt2")
    path = torch._inductor.aoti_compile_and_package(program, package_path=str(tmp_path / "compiled.pt2"))
    compiled = torch._inductor.aoti_load_package(path)
    ids = torch.tensor([[1, 5, 9, 3, 7]])
    feed = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "position_ids": torch.arange(5)[None]}
    want = call_pt2(program, feed)[0]
    with torch.no_grad():
        got = compiled(**feed)
    assert_logits_close(torch.as_tensor(got.logits).numpy(), want.numpy(), "aoti package vs program")


@pytest.mark.parametrize("flags, message", [
    (("--quantize", "int4", "--asym"), "symmetric weights (torchao's"),
    (("--quantize", "int8", "--quantize-embeddings", "int8"), "quantized embedding table"),
])
def test_unwritten_forms_are_refused(checkpoints, tmp_path, flags, message):
    proc = run_hfx(["export", checkpoints(NAME), tmp_path / "out", "--format", "dynamo", "--dynamic", *flags])
    assert proc.returncode == 2 and message in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()
