"""--format executorch: ExecuTorch programs (.pte) written by hfx from C, on ExecuTorch's portable
kernels, for every decoder variant the other suites cover (the wave-1b architectures and encoders
are in test_wave1b.py). Each program decodes with the wheel's flatc against its program.fbs,
loads in executorch.runtime (a worker in the executorch venv, etutil.py) and gives transformers'
eager logits within 1e-4 on every element for every input case, left-padded batches included,
from one export whose batch and sequence vary up to the bounds its config gives."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import models
from conftest import assert_logits_close, describe, run_hfx
from etutil import flatc_json, worker

# bounds of the dynamic dims: every case of every variant fits
MAX_BATCH, MAX_SEQ = 4, 80
BOUNDED = {"export_format": "executorch",
           "dynamic_shapes": {"input_ids": {"0": {"name": "batch", "min": 1, "max": MAX_BATCH},
                                            "1": {"name": "sequence", "min": 1, "max": MAX_SEQ}}}}


def et_export(checkpoint, out, config: dict | None = None, *flags):
    """`hfx export --format executorch` with an export config (bounded dynamic dims by default)."""
    cfg = out.parent / f"{out.name}-cfg.json"
    cfg.write_text(json.dumps(BOUNDED if config is None else config))
    return run_hfx(["export", checkpoint, out, "--config", cfg, "--quiet", *flags])


@pytest.fixture(scope="module")
def et_exports(tmp_path_factory, checkpoints):
    root = tmp_path_factory.mktemp("executorch")
    done = {}

    def get(name):
        if name not in done:
            out = root / name
            done[name] = (out, et_export(checkpoints(name), out))
        return done[name]
    return get


def run_pte(out, inputs: dict) -> list:
    meta = json.loads((out / "export.json").read_text())["components"]["model"]
    names = meta["metadata"]["input_names"]
    return worker().run(out / meta["file"], [inputs[n] for n in names])


PARAMS = [pytest.param(v.name, case, id=f"{v.name}-{case.id}") for v in models.VARIANTS_LIST for case in v.cases]


def test_cases_fit_the_bounds():
    assert all(c.batch <= MAX_BATCH and c.seq <= MAX_SEQ for v in models.VARIANTS_LIST for c in v.cases)


@pytest.mark.parametrize("name,case", PARAMS)
def test_executorch_parity(et_exports, checkpoints, name, case):
    variant = models.VARIANTS[name]
    out, proc = et_exports(name)
    assert proc.returncode == 0, describe(proc)
    inputs = models.make_inputs(case, variant.vocab_size)
    got = run_pte(out, inputs)[0]
    want = models.reference_logits(checkpoints(name), inputs)
    assert_logits_close(got, want, f"[executorch] {name} {case.id}")


def _header(data: bytes) -> dict:
    magic, length, program_size, base, seg = struct.unpack_from("<4sIQQQ", data, 8)
    return {"ident": data[4:8], "magic": magic, "length": length, "program_size": program_size, "base": base,
            "segment": seg}


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_program_is_well_formed(et_exports, checkpoints, tmp_path, name):
    """flatc decodes the whole program against the shipped schema; the extended header, the
    constant segment and the memory plan say what ExecuTorch's own serializer would: the segment
    at a 128-byte boundary right after the program, each constant at a 16-byte boundary and
    holding the checkpoint's tensor, every planned tensor inside the arena."""
    out, proc = et_exports(name)
    assert proc.returncode == 0, describe(proc)
    pte = out / "model.pte"
    data = pte.read_bytes()
    h = _header(data)
    assert h["ident"] == b"ET12" and h["magic"] == b"eh00" and h["length"] == 32
    assert h["base"] % 128 == 0 and h["program_size"] <= h["base"] < h["program_size"] + 128
    assert len(data) == h["base"] + h["segment"]
    program = flatc_json(pte, tmp_path)
    plan, = program["execution_plan"]
    assert plan["name"] == "forward"
    offsets = program["constant_segment"]["offsets"]
    assert program["segments"] == [{"offset": 0, "size": h["segment"]}]
    assert all(o % 16 == 0 for o in offsets)
    arena = plan["non_const_buffer_sizes"][1]
    ops = {f"{o['name']}.{o['overload']}" for o in plan["operators"]}
    assert "aten::linear.out" in ops and not any("scaled_dot_product" in o for o in ops)
    reference = models.load_reference_model(checkpoints(name)).state_dict()
    embed = reference["model.embed_tokens.weight"].numpy()
    found_embed = False
    for v in plan["values"]:
        if v["val_type"] != "Tensor":
            continue
        t = v["val"]
        n = int(np.prod(t["sizes"])) * {"FLOAT": 4, "LONG": 8, "BOOL": 1, "INT": 4}[t["scalar_type"]]
        if t["data_buffer_idx"]:
            start = h["base"] + offsets[t["data_buffer_idx"]]
            if t["sizes"] == list(embed.shape):
                found_embed |= np.array_equal(np.frombuffer(data[start:start + n], np.float32).reshape(embed.shape),
                                              embed)
        elif t.get("allocation_info"):
            a = t["allocation_info"]
            assert a["memory_id"] == 1 and a["memory_offset_low"] + n <= arena
    assert found_embed, "the embedding table is not stored as the checkpoint has it"


def test_static_export_and_planning_against_executorch(checkpoints, tmp_path):
    """A static export (no dynamic dims) runs at its sample shape; its planned arena is reported
    next to ExecuTorch's own planner's for the same model and shape (to_executorch of the
    torch.export of transformers' model): hfx's must stay within 2× of it."""
    out = tmp_path / "static"
    proc = et_export(checkpoints("llama_default"), out, {"export_format": "executorch"})
    assert proc.returncode == 0, describe(proc)
    inputs = models.make_inputs(models.Case(2, 16, (0, 5)), models.VARIANTS["llama_default"].vocab_size)
    got = run_pte(out, inputs)[0]
    assert_logits_close(got, models.reference_logits(checkpoints("llama_default"), inputs), "[executorch static]")
    ours = flatc_json(out / "model.pte", tmp_path)["execution_plan"][0]["non_const_buffer_sizes"][1]
    theirs = worker().python(NATIVE_ARENA, [str(checkpoints("llama_default")), 2, 16])
    print(f"planned arena: hfx {ours} bytes, ExecuTorch {theirs} bytes")
    assert ours <= 2 * theirs, (ours, theirs)


# ExecuTorch's own pipeline on transformers' model (eager attention, so both programs compute the
# same ops): torch.export, to_edge_transform_and_lower without a partitioner, to_executorch; the
# planned arena of memory id 1.
NATIVE_ARENA = r"""
import torch, warnings
from transformers import AutoModelForCausalLM
from executorch.exir import to_edge_transform_and_lower
path, batch, seq = args
model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
    def forward(self, input_ids, attention_mask, position_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                      use_cache=False).logits
ids = torch.ones(batch, seq, dtype=torch.long)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ep = torch.export.export(Logits(model), (ids, torch.ones_like(ids), torch.arange(seq).repeat(batch, 1)))
    program = to_edge_transform_and_lower(ep).to_executorch()
result = program.executorch_program.execution_plan[0].non_const_buffer_sizes[1]
"""


@pytest.mark.parametrize("flags,config,message", [
    (["--dynamic"], {"export_format": "executorch"}, "'batch_size' has no upper bound"),
    ([], {"export_format": "executorch", "backend": "xnnpack"}, "backend 'xnnpack' is not written yet"),
    (["--for-generation"], {"export_format": "executorch"}, "generation programs"),
], ids=["unbounded-dim", "xnnpack", "generation"])
def test_refusals_are_clear_and_leave_nothing(checkpoints, tmp_path, flags, config, message):
    out = tmp_path / "out"
    proc = et_export(checkpoints("llama_default"), out, config, *flags)
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr, proc.stderr
    assert not out.exists() or not any(out.iterdir())
