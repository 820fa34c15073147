"""--format executorch: ExecuTorch programs (.pte) written by hfx from C, on ExecuTorch's portable
kernels, for every decoder variant the other suites cover (the architectures and encoders of decoders_encoders_models.py
are in test_decoders_encoders.py). Each program decodes with the wheel's flatc against its program.fbs,
loads in executorch.runtime (a worker in the executorch venv, etutil.py) and gives transformers'
eager logits within 1e-4 on every element for every input case, left-padded batches included,
from one export whose batch and sequence vary up to the bounds its config gives. Generation
exports (growing and static caches, prefill+decode and multi-token decode) generate transformers'
tokens through examples/generate_executorch.py, and the LLM runner's layout through ExecuTorch's
own TextLLMRunner."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch

import models
from conftest import assert_logits_close, describe, run_hfx
from etutil import flatc_json, worker

# bounds of the dynamic dims: every case of every variant fits
MAX_BATCH, MAX_SEQ = 4, 80
BOUNDED = {"export_format": "executorch",
           "dynamic_shapes": {"input_ids": {"0": {"name": "batch", "min": 1, "max": MAX_BATCH},
                                            "1": {"name": "sequence", "min": 1, "max": MAX_SEQ}}}}


# generation: batch bounded as above, every length by max_cache_len
MAX_CACHE_LEN = 64
GEN_BOUNDS = {"export_format": "executorch",
              "dynamic_shapes": {"input_ids": {"0": {"name": "batch", "min": 1, "max": MAX_BATCH},
                                               "1": {"name": "sequence", "min": 1, "max": MAX_CACHE_LEN}}}}


def et_export(checkpoint, out, config: dict | None = None, *flags):
    """`hfx export --format executorch` with an export config (bounded dynamic dims by default)."""
    cfg = out.parent / f"{out.name}-cfg.json"
    cfg.write_text(json.dumps(BOUNDED if config is None else config))
    return run_hfx(["export", checkpoint, out, "--config", cfg, "--quiet", *flags])


BACKENDS = ("portable", "xnnpack")


@pytest.fixture(scope="module")
def et_exports(tmp_path_factory, checkpoints):
    """(out dir, hfx's process) of each variant's export, per backend: `portable` runs every op on
    ExecuTorch's portable kernels, `xnnpack` delegates the linear layers to XNNPACK."""
    root = tmp_path_factory.mktemp("executorch")
    done = {}

    def get(name, backend="portable"):
        if (name, backend) not in done:
            out = root / f"{name}-{backend}"
            done[name, backend] = (out, et_export(checkpoints(name), out, {**BOUNDED, "backend": backend}))
        return done[name, backend]
    return get


def run_pte(out, inputs: dict) -> list:
    meta = json.loads((out / "export.json").read_text())["components"]["model"]
    names = meta["metadata"]["input_names"]
    return worker().run(out / meta["file"], [inputs[n] for n in names])


PARAMS = [pytest.param(v.name, case, backend, id=f"{v.name}-{case.id}-{backend}")
          for v in models.VARIANTS_LIST for case in v.cases for backend in BACKENDS]


def test_cases_fit_the_bounds():
    assert all(c.batch <= MAX_BATCH and c.seq <= MAX_SEQ for v in models.VARIANTS_LIST for c in v.cases)


@pytest.mark.parametrize("name,case,backend", PARAMS)
def test_executorch_parity(et_exports, checkpoints, name, case, backend):
    variant = models.VARIANTS[name]
    out, proc = et_exports(name, backend)
    assert proc.returncode == 0, describe(proc)
    inputs = models.make_inputs(case, variant.vocab_size)
    got = run_pte(out, inputs)[0]
    want = models.reference_logits(checkpoints(name), inputs)
    assert_logits_close(got, want, f"[executorch {backend}] {name} {case.id}")


# transformers.exporters' ExportedModel over a plain export folder, called as the model (keywords): (its output class,
# logits)
SEED_PLAIN = """
import numpy as np, torch
from transformers.exporters import ExportedModel
out, inputs = args
got = ExportedModel.from_pretrained(out)(**{k: torch.tensor(v) for k, v in inputs.items()})
result = [type(got).__name__, torch.as_tensor(got.logits).tolist()]
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_seed_loader_runs_plain_programs(et_exports, checkpoints, name, backend):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's plain .pte (its ExecuTorch runner, in the
    executorch venv), called with keywords as the model: CausalLMOutputWithPast with transformers' logits within 1e-4
    on a left-padded batch."""
    variant = models.VARIANTS[name]
    out, proc = et_exports(name, backend)
    assert proc.returncode == 0, describe(proc)
    case = next((c for c in variant.cases if c.batch > 1), variant.cases[-1])
    inputs = models.make_inputs(case, variant.vocab_size)
    cls, logits = worker().python(SEED_PLAIN, [str(out), {k: np.asarray(v).tolist() for k, v in inputs.items()}])
    assert cls == "CausalLMOutputWithPast", cls
    assert_logits_close(np.asarray(logits, np.float32), models.reference_logits(checkpoints(name), inputs),
                        f"[executorch {backend}] {name} {case.id} (the seed's loader)")


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


def _calls(plan: dict) -> list:
    """Each instruction as "aten::op.overload" or "delegate:<index>"."""
    ops = [f"{o['name']}.{o['overload']}" for o in plan["operators"]]
    return [ops[i["instr_args"]["op_index"]] if i["instr_args_type"] == "KernelCall"
            else f"delegate:{i['instr_args']['delegate_index']}" for i in plan["chains"][0]["instructions"]]


def test_xnnpack_delegates_every_linear(et_exports, checkpoints, tmp_path):
    """backend xnnpack: every linear of the portable program is a DelegateCall of its own
    XnnpackBackend delegate (a segment), and nothing else changes; each payload is XNNPACK's header
    and an XNNGraph that flatc decodes against the wheel's runtime_schema.fbs: one fully-connected
    node whose filter is named data holding the checkpoint's [N, K] weight as stored; weights only
    delegates read leave the constant segment."""
    from etutil import flatc_xnngraph

    portable, proc = et_exports("llama_default", "portable")
    assert proc.returncode == 0, describe(proc)
    xnn, proc = et_exports("llama_default", "xnnpack")
    assert proc.returncode == 0, describe(proc)
    p_prog = flatc_json(portable / "model.pte", tmp_path / "p")
    x_prog = flatc_json(xnn / "model.pte", tmp_path / "x")
    p_calls, x_calls = _calls(p_prog["execution_plan"][0]), _calls(x_prog["execution_plan"][0])
    n_linear = p_calls.count("aten::linear.out")
    assert n_linear >= 7 and "aten::linear.out" not in x_calls
    assert [c for c in x_calls if c.startswith("delegate:")] == [f"delegate:{i}" for i in range(n_linear)]
    assert [c for c in x_calls if not c.startswith("delegate:")] == [c for c in p_calls if c != "aten::linear.out"]
    delegates = x_prog["execution_plan"][0]["delegates"]
    assert all(d["id"] == "XnnpackBackend" and d["processed"]["location"] == "SEGMENT" for d in delegates)
    data = (xnn / "model.pte").read_bytes()
    base = struct.unpack_from("<4sIQQQ", data, 8)[3]
    segments = x_prog["segments"]
    named = {n["key"]: n["segment_index"] for n in x_prog["named_data"]}
    reference = models.load_reference_model(checkpoints("llama_default")).state_dict()
    q = reference["model.layers.0.self_attn.q_proj.weight"].numpy()
    seg = segments[named["model.layers.0.self_attn.q_proj.weight"]]
    stored = np.frombuffer(data[base + seg["offset"]:base + seg["offset"] + seg["size"]], np.float32)
    assert np.array_equal(stored.reshape(q.shape), q)
    first = segments[delegates[0]["processed"]["index"]]
    graph = flatc_xnngraph(data[base + first["offset"]:base + first["offset"] + first["size"]], tmp_path)
    node, = graph["xnodes"]
    assert node["xnode_union_type"] == "XNNFullyConnected"
    filt = graph["xvalues"][node["xnode_union"]["filter_id"]]["xvalue_union"]
    assert filt["dims"] == list(q.shape) and graph["constant_data"][filt["constant_buffer_idx"]]["named_key"] == \
        "model.layers.0.self_attn.q_proj.weight"
    assert x_prog["constant_segment"]["offsets"].__len__() < p_prog["constant_segment"]["offsets"].__len__()


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_xnnpack_program_is_well_formed(et_exports, tmp_path, name):
    """Every variant's XNNPACK program and every delegate payload in it decode with flatc against
    the shipped schemas; each payload is one fully-connected node over float32 values, and the
    segments tile the file after the program at 128-byte boundaries."""
    from etutil import flatc_xnngraph

    out, proc = et_exports(name, "xnnpack")
    assert proc.returncode == 0, describe(proc)
    data = (out / "model.pte").read_bytes()
    h = _header(data)
    program = flatc_json(out / "model.pte", tmp_path)
    segments = program["segments"]
    assert all(s["offset"] % 128 == 0 for s in segments) and len(data) == h["base"] + h["segment"]
    assert segments[-1]["offset"] + segments[-1]["size"] == h["segment"]
    delegates = program["execution_plan"][0]["delegates"]
    assert delegates
    for i, d in enumerate(delegates):
        seg = segments[d["processed"]["index"]]
        graph = flatc_xnngraph(data[h["base"] + seg["offset"]:h["base"] + seg["offset"] + seg["size"]], tmp_path / str(i))
        assert [n["xnode_union_type"] for n in graph["xnodes"]] == ["XNNFullyConnected"]
        assert {v["xvalue_union"]["datatype"] for v in graph["xvalues"]} == {"xnn_datatype_fp32"}


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
    ([], {"export_format": "executorch", "backend": "cuda"}, "'backend' must be null or one of 'portable', 'xnnpack'"),
    (["--for-generation"], {"export_format": "executorch"}, "generation needs max_cache_len"),
    (["--for-generation", "--max-cache-len", "64", "--multi-token-decode"], {"export_format": "executorch", "dynamic": True},
     "'batch_size' has no upper bound"),
    (["--for-generation", "--max-cache-len", "64", "--multi-token-decode"],
     {**GEN_BOUNDS, "llm_runner": True}, "llm_runner writes ExecuTorch's LLM runner layout from a static-cache"),
    (["--for-generation", "--max-cache-len", "64", "--multi-token-decode", "--cache", "static"],
     {**GEN_BOUNDS, "llm_runner": True}, "its batch is not fixed at 1"),
    ([], {**BOUNDED, "llm_runner": True}, "this graph has no cache"),
    (["--for-generation", "--max-cache-len", "64", "--cache", "static", "--batch-size", "1", "--sequence-length", "12"],
     {"export_format": "executorch", "llm_runner": True}, "its sequence is fixed at 12 tokens"),
    (["--for-generation", "--max-cache-len", "64", "--multi-token-decode", "--cache", "static"],
     {**GEN_BOUNDS, "llm_runner": True, "alloc_mutable_buffers": False},
     "alloc_mutable_buffers must be true with it"),
], ids=["unbounded-dim", "backend", "generation-without-max-cache-len", "generation-unbounded-batch",
        "runner-growing-cache", "runner-batch", "runner-forward", "runner-fixed-prompt", "runner-buffers-unplanned"])
def test_refusals_are_clear_and_leave_nothing(checkpoints, tmp_path, flags, config, message):
    out = tmp_path / "out"
    proc = et_export(checkpoints("llama_default"), out, config, *flags)
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr, proc.stderr
    assert not out.exists() or not any(out.iterdir())


def test_unplanned_mutable_buffers_change_nothing_without_buffers(checkpoints, tmp_path):
    """alloc_mutable_buffers false (the seed's ExecutorchConfig field, its memory planning pass's flag): a program
    without mutable buffers (every export but llm_runner's) is planned alike, so its bytes are the default's."""
    outs = []
    for flag in (True, False):
        outs.append(tmp_path / f"out-{flag}")
        proc = et_export(checkpoints("llama_default"), outs[-1], {**BOUNDED, "alloc_mutable_buffers": flag})
        assert proc.returncode == 0, describe(proc)
    assert (outs[0] / "model.pte").read_bytes() == (outs[1] / "model.pte").read_bytes()


def test_bounds_are_the_generation_suites():
    import genutil
    assert MAX_CACHE_LEN == genutil.MAX_CACHE_LEN


# ---- generation: examples/generate_executorch.py against transformers' generate -----------------

from genutil import FIXED_QUERY, FIXED_SEQ, NEW_TOKENS, GenExports, References, compare_generation, prompts  # noqa: E402

NO_EOS = {"bos_token_id": 1, "eos_token_id": None}


class _EtGen:
    """Generation exports (GenExports, --format executorch) and their modes: batch bounded by
    MAX_BATCH, every length by max_cache_len; static shapes need no bounds. The default backend
    (XNNPACK's linears), and `-portable` modes on the portable kernels only."""

    def __init__(self, root, checkpoints):
        self.exports = GenExports(root, checkpoints, fmt="executorch")
        cfg, portable = root / "bounds.json", root / "bounds-portable.json"
        cfg.write_text(json.dumps(GEN_BOUNDS))
        portable.write_text(json.dumps({**GEN_BOUNDS, "backend": "portable"}))
        cache = ("--max-cache-len", str(MAX_CACHE_LEN))
        self.modes = {}
        for suffix, bounds in (("", cfg), ("-portable", portable)):
            bounded = ("--config", str(bounds))
            self.modes.update({
                "dyncache" + suffix: ("--cache", "dynamic", *cache, *bounded),
                "dyncache-mtd" + suffix: ("--cache", "dynamic", *cache, "--multi-token-decode", *bounded),
                "static" + suffix: ("--cache", "static", *cache, *bounded),
                "static-mtd" + suffix: ("--cache", "static", *cache, "--multi-token-decode", *bounded),
            })
        self.modes["static-fixed-b3"] = ("--cache", "static", *cache, "--batch-size", "3", "--sequence-length",
                                         str(FIXED_SEQ))
        # a multi-token decode of static shapes: every call FIXED_QUERY tokens (genutil's mode of the same name)
        self.modes["static-mtd-fixed-b3"] = ("--cache", "static", *cache, "--multi-token-decode", "--batch-size", "3",
                                             "--sequence-length", str(FIXED_QUERY))

    def __call__(self, name, mode, *extra):
        return self.exports(name, "--for-generation", *self.modes[mode], *extra)


@pytest.fixture(scope="module")
def et_gen(tmp_path_factory, checkpoints):
    return _EtGen(tmp_path_factory.mktemp("executorch_gen"), checkpoints)


@pytest.fixture(scope="module")
def et_refs(checkpoints):
    return References(checkpoints)


ET_GEN_MATRIX = [pytest.param(v, m, lengths, id=f"{v}-{m}-b{len(lengths)}")
                 for v in ("llama_default", "mistral_swa", "qwen2", "qwen2_swa", "qwen3", "gemma2", "gemma3",
                           "starcoder2", "granite", "olmo2", "gemma")
                 for m in ("dyncache", "dyncache-mtd", "static", "static-mtd", "dyncache-portable", "static-portable")
                 for lengths in ((7,), (10, 5, 1))] + [
    pytest.param(v, m, (10, 5, 1), id=f"{v}-{m}") for v in ("llama_default", "gemma2")
    for m in ("static-fixed-b3", "static-mtd-fixed-b3")]


@pytest.mark.parametrize("name,mode,lengths", ET_GEN_MATRIX)
def test_executorch_greedy_generation(et_gen, et_refs, name, mode, lengths):
    """32 new tokens through examples/generate_executorch.py (executorch.runtime; a growing cache,
    or a static one the program writes in place) equal generate()'s, every step's logits within
    1e-4; batch 1 and batch 3 left-padded; prefill + decode and one multi-token decode."""
    out = et_gen.exports.with_generation_config(et_gen(name, mode), NO_EOS)
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    want_tokens, want_logits = et_refs.generate(name, rows, NO_EOS)
    tokens, logits = worker().generate(out, rows, NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, f"[executorch] {name} {mode} b{len(rows)}")


def test_static_cache_is_written_in_place(et_gen, tmp_path):
    """A static cache is each cache input written at its slots by aten::index_put_ (no copy of the
    cache), and returned as that same input. With alloc_graph_input false no memory is planned for
    inputs (the runtime uses the caller's; executorch.runtime's Python binding copies its
    arguments into storage of its own first, so there the result is read from the outputs): one
    decode step on zero buffers returns them written at slot `cache_position` and nowhere else."""
    out = et_gen("llama_default", "static")
    program = flatc_json(out / "decode.pte", tmp_path)
    plan, = program["execution_plan"]
    calls = _calls(plan)
    assert calls.count("aten::index_put_.") == 4 and "aten::copy_." not in calls, sorted(set(calls))
    meta = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]
    names = meta["input_names"]
    cache_in = [names.index(n) for n in names if n.startswith("input.past_key_values.")]
    assert [plan["inputs"][i] for i in cache_in] == plan["outputs"][1:], (plan["inputs"], plan["outputs"])

    cfg = tmp_path / "in-place.json"
    cfg.write_text(json.dumps({**GEN_BOUNDS, "alloc_graph_input": False}))
    unplanned = et_gen("llama_default", "static", "--config", str(cfg))
    plan, = flatc_json(unplanned / "decode.pte", tmp_path)["execution_plan"]
    assert all(plan["values"][i]["val"].get("allocation_info") is None for i in plan["inputs"])
    layer = meta["cache"]["layers"][0]
    shape = [1, layer["heads"], MAX_CACHE_LEN, layer["key_dim"]]
    changed = worker().python(IN_PLACE_STEP, [str(unplanned / "decode.pte"), names, shape])
    assert changed == {"slot_written": True, "rest_zero": True}, changed


# One decode step on zero buffers at slot 3: what the program returns for the first key cache.
IN_PLACE_STEP = r"""
import torch
from executorch.runtime import Runtime
pte, names, shape = args
method = Runtime.get().load_program(pte).load_method("forward")
bufs = {n: torch.zeros(shape) for n in names if n.startswith("input.past_key_values.")}
mask = torch.zeros(1, shape[2], dtype=torch.long)
mask[0, :4] = 1
feed = {"input_ids": torch.tensor([[5]]), "position_ids": torch.tensor([[3]]), "cache_position": torch.tensor([3]),
        "attention_mask": mask}
outs = method.execute([bufs[n] if n in bufs else feed[n] for n in names])
key = outs[1]
result = {"slot_written": bool(key[:, :, 3].abs().sum() > 0),
          "rest_zero": bool(key[:, :, :3].abs().sum() == 0 and key[:, :, 4:].abs().sum() == 0)}
"""


# ---- ExecuTorch's LLM runner on hfx's program -----------------------------------------------------

RUNNER_NEW_TOKENS = 24


def _byte_level_tokenizer(vocab_size: int):
    """A byte-level BPE tokenizer.json of exactly `vocab_size` tokens (the checkpoint's), trained on a
    fixed corpus of ASCII words, as GPT-2-style checkpoints ship one: the kind ExecuTorch's runner
    reads (pytorch-tokenizers' HF tokenizer)."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers import models as tok_models

    rng = np.random.default_rng(7)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    corpus = [" ".join("".join(rng.choice(letters, size=rng.integers(2, 7))) for _ in range(40)) for _ in range(200)]
    tok = Tokenizer(tok_models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"]))
    assert tok.get_vocab_size() == vocab_size, tok.get_vocab_size()
    return tok


def test_llm_runner_generates_transformers_text(checkpoints, tmp_path):
    """`llm_runner: true` writes the layout of ExecuTorch's LLM runner: forward(tokens, input_pos)
    with the cache in mutable buffers, and the constant methods the runner reads. The runner's own
    TextLLMRunner (C++, through its Python binding), given hfx's .pte and the checkpoint's
    tokenizer.json, prints, piece by piece, the text of transformers' greedy generate() from the
    same prompt; the program's metadata methods say what the checkpoint says."""
    import shutil

    name = "llama_default"
    vocab = models.VARIANTS[name].vocab_size
    ckpt = tmp_path / "ckpt"
    shutil.copytree(checkpoints(name), ckpt)
    tok = _byte_level_tokenizer(vocab)
    tok.save(str(ckpt / "tokenizer.json"))
    (ckpt / "generation_config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": [2, 0]}))
    sequence = {"input_ids": {"1": {"name": "sequence", "min": 1, "max": MAX_CACHE_LEN}}}
    out = tmp_path / "out"
    proc = et_export(ckpt, out, {"export_format": "executorch", "dynamic_shapes": sequence}, "--for-generation",
                     "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN), "--multi-token-decode",
                     "--batch-size", "1", "--llm-runner")
    assert proc.returncode == 0, describe(proc)
    pte = out / json.loads((out / "export.json").read_text())["components"]["decode"]["file"]
    prompt = "the quick brown fox"
    ids = tok.encode(prompt).ids
    model = models.load_reference_model(ckpt)
    with torch.no_grad():
        seq = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             max_new_tokens=RUNNER_NEW_TOKENS, do_sample=False, eos_token_id=[2, 0], pad_token_id=2)
    want = seq[0, len(ids):].tolist()
    if want[-1] in (2, 0):  # the runner stops at an EOS id without printing it
        want = want[:-1]
    want_pieces = [tok.decode([t]) for t in want]
    got = worker().python(RUNNER, [str(pte), str(out / "tokenizer.json"), prompt, RUNNER_NEW_TOKENS])
    assert got["metadata"] == {"get_max_seq_len": [MAX_CACHE_LEN], "get_max_context_len": [MAX_CACHE_LEN],
                               "get_vocab_size": [vocab], "get_bos_id": [1], "get_eos_ids": [2, 0],
                               "use_kv_cache": [True], "enable_dynamic_shape": [True]}, got["metadata"]
    assert len(want_pieces) >= 8, want  # a generation long enough to say something
    assert got["pieces"] == want_pieces, (got["pieces"], want_pieces, want)
    print(f"LLM runner: {len(want_pieces)} pieces equal to generate()'s: {''.join(want_pieces)!r}")


RUNNER = r"""
from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
from executorch.runtime import Runtime
pte, tokenizer, prompt, n = args
program = Runtime.get().load_program(pte)
metadata = {m: [v if isinstance(v, bool) else int(v) for v in program.load_method(m).execute([])]
            for m in ("get_max_seq_len", "get_max_context_len", "get_vocab_size", "get_bos_id", "get_eos_ids",
                      "use_kv_cache", "enable_dynamic_shape")}
pieces = []
runner = TextLLMRunner(pte, tokenizer)
runner.generate(prompt, GenerationConfig(echo=False, max_new_tokens=n, temperature=0.0), token_callback=pieces.append)
result = {"metadata": metadata, "pieces": pieces}
"""


# ---- the C++ decode loop (examples/executorch_cpp), built against the wheel ---------------------------

@pytest.fixture(scope="module")
def cpp_loop(tmp_path_factory):
    """examples/executorch_cpp built with the executorch wheel's CMake package, headers and
    libraries (a build failure fails the tests that need it)."""
    import subprocess

    from conftest import REPO
    from etutil import worker as et_worker

    site = et_worker().python("import executorch; result = list(executorch.__path__)[0]")
    build = tmp_path_factory.mktemp("executorch_cpp")
    for cmd in (["cmake", "-S", str(REPO / "examples" / "executorch_cpp"), "-B", str(build),
                 f"-Dexecutorch_DIR={site}/lib/cmake/executorch", "-DCMAKE_BUILD_TYPE=Release"],
                ["cmake", "--build", str(build), "-j", "2"]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return build / "generate_executorch"


@pytest.mark.parametrize("alloc_graph_input", [False, True], ids=["in-place", "planned-inputs"])
def test_cpp_loop_generates_into_the_callers_cache(cpp_loop, checkpoints, tmp_path, alloc_graph_input):
    """The C++ loop (ExecuTorch's C++ runtime, the wheel's libraries) on a static-cache multi-token
    decode gives transformers' greedy tokens, and its own cache buffer ends holding transformers'
    layer-0 keys at the slots written and zeros after them. With alloc_graph_input false the
    program writes that buffer itself (set_input shares it; nothing is copied back); with planned
    inputs the loop copies the returned cache back."""
    import subprocess

    name = "llama_default"
    sequence = {"input_ids": {"1": {"name": "sequence", "min": 1, "max": MAX_CACHE_LEN}}}
    out = tmp_path / "out"
    proc = et_export(checkpoints(name), out, {"export_format": "executorch", "alloc_graph_input": alloc_graph_input,
                                              "dynamic_shapes": sequence},
                     "--for-generation", "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN),
                     "--multi-token-decode", "--batch-size", "1")
    assert proc.returncode == 0, describe(proc)
    prompt = prompts((9,), models.VARIANTS[name].vocab_size)[0]
    n = 16
    dump = tmp_path / "keys.bin"
    run = subprocess.run([str(cpp_loop), str(out / "decode.pte"), "--input-ids", ",".join(map(str, prompt)),
                          "--max-new-tokens", str(n), "--dump-cache", str(dump)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    tokens = json.loads(run.stdout.strip().splitlines()[-1])
    model = models.load_reference_model(checkpoints(name))
    with torch.no_grad():
        seq = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                             max_new_tokens=n, do_sample=False, eos_token_id=None, pad_token_id=0)
        want = seq[0, len(prompt):].tolist()
        assert tokens == want, (tokens, want)
        fed = seq[:, :-1]  # the last token is never fed back
        cache = model(input_ids=fed, use_cache=True).past_key_values
    keys = cache.layers[0].keys.numpy()  # [1, kv_heads, T, head_dim]
    got = np.fromfile(dump, np.float32).reshape(1, keys.shape[1], MAX_CACHE_LEN, keys.shape[3])
    t = keys.shape[2]
    assert np.abs(got[:, :, :t] - keys).max() <= 1e-4 and not got[:, :, t:].any()


# each method input's and output's (rank, dtype) of a program
ET_LAYOUT = """
from executorch.runtime import Runtime
def layout(pte):
    meta = Runtime.get().load_program(pte).load_method("forward").metadata
    return [[[len(meta.input_tensor_meta(i).sizes()), int(meta.input_tensor_meta(i).dtype())]
             for i in range(meta.num_inputs())],
            [[len(meta.output_tensor_meta(i).sizes()), int(meta.output_tensor_meta(i).dtype())]
             for i in range(meta.num_outputs())]]
"""
# the seed's own ExecuTorch program of a static-cache multi-token decode (its ExecutorchExporter over its
# decompose_for_generation, "alloc_graph_output": false, as its docs' C++ loop binds outputs), and its layout
SEED_ET = ET_LAYOUT + """
import torch, transformers
from transformers.exporters import ExecutorchConfig, ExecutorchExporter
from transformers.exporters.utils import decompose_for_generation
ckpt, ids, m, out = args
model = transformers.AutoModelForCausalLM.from_pretrained(ckpt, attn_implementation="sdpa").eval()
ids = torch.tensor([ids])
comps = decompose_for_generation(model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)},
                                 generation_config=transformers.GenerationConfig(cache_implementation="static",
                                                                                 max_cache_len=m),
                                 multi_token_decode=True)
sub, kwargs = comps["decode"]
ExecutorchExporter().export(sub, kwargs, config=ExecutorchConfig(dynamic=True, alloc_graph_output=False)
                            ).save_pretrained(out)
result = layout(out + "/model.pte")
"""


def test_cpp_loop_seed_profile(cpp_loop, checkpoints, tmp_path):
    """io "seed" (the Python system's profile) in ExecuTorch: the static-cache multi-token decode has the seed's own
    program's method layout — inputs input_ids, the 4-D bool mask, position_ids, then each layer's keys, values and
    write counter; outputs the cache's new content (input mutations), the logits, the cache as returned — of the same
    ranks and dtypes, in the same order, as its ExecutorchExporter writes for the same model; and the C++ loop in the
    seed docs' way (examples/executorch_cpp: the returned cache bound to the caller's buffers, set_output_data_ptr)
    gives transformers' greedy tokens on hfx's program and on the seed's own (the loop is the seed's contract).
    Exported with "alloc_graph_output": false, as that loop needs (a planned output cannot be bound)."""
    import subprocess

    name = "llama_default"
    prompt = prompts((9,), models.VARIANTS[name].vocab_size)[0]
    out = tmp_path / "out"
    proc = et_export(checkpoints(name), out, {**GEN_BOUNDS, "alloc_graph_output": False,
                                              "dynamic_shapes": {"input_ids": {"0": {"name": "batch", "max": 1},
                                                                               "1": GEN_BOUNDS["dynamic_shapes"][
                                                                                   "input_ids"]["1"]}}},
                     "--for-generation", "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN),
                     "--multi-token-decode", "--io", "seed")
    assert proc.returncode == 0, describe(proc)
    seed_dir = tmp_path / "seed"
    seed_layout = worker().python(SEED_ET, [str(checkpoints(name)), prompt, MAX_CACHE_LEN, str(seed_dir)])
    ours = worker().python(ET_LAYOUT + "result = layout(args[0])", [str(out / "decode.pte")])
    layers = models.load_reference_model(checkpoints(name)).config.num_hidden_layers
    assert len(ours[0]) == 3 + 3 * layers and len(ours[1]) == 2 * 3 * layers + 1, ours
    assert ours == seed_layout, f"hfx {ours}, the seed's {seed_layout}"
    n = 16
    model = models.load_reference_model(checkpoints(name))
    with torch.no_grad():
        want = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                              max_new_tokens=n, do_sample=False, eos_token_id=None, pad_token_id=0)[0, len(prompt):]
    for pte in (out / "decode.pte", seed_dir / "model.pte"):
        run = subprocess.run([str(cpp_loop), str(pte), "--input-ids", ",".join(map(str, prompt)),
                              "--max-new-tokens", str(n)], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        assert json.loads(run.stdout.strip().splitlines()[-1]) == want.tolist(), pte


# the seed's ExportedModel over an export folder, and a greedy loop over its runners (the prefill with the prompt and an
# empty cache object, each decode with the token, its 4-D mask for a static cache, and the cache the last call returned)
SEED_RUNNERS = """
import torch, transformers
from transformers.exporters import ExportedModel
ckpt, out, static, m, prompt, n = args
model = transformers.AutoModelForCausalLM.from_pretrained(ckpt, use_cache=True).eval()
runners = ExportedModel.from_pretrained(out, trust_remote_code=True).runners
prompt = torch.tensor([prompt])
s = prompt.shape[1]
empty = (transformers.StaticCache(config=model.config, max_cache_len=m) if static
         else transformers.DynamicCache(config=model.config))
step = runners["prefill"](input_ids=prompt, position_ids=torch.arange(s)[None], cache=empty)
tokens = []
for k in range(s, s + n):
    tokens.append(int(torch.as_tensor(step.logits)[0, -1].argmax()))
    mask = {"attention_mask": (torch.arange(m) <= k)[None, None, None, :]} if static else {}
    step = runners["decode"](input_ids=torch.tensor([[tokens[-1]]]), position_ids=torch.tensor([[k]]),
                             cache=step.cache, **mask)
result = tokens
"""


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_seed_runners_generate_from_hfx_programs(cache, checkpoints, tmp_path):
    """transformers.exporters' own ExportedModel loads hfx's io "seed" ExecuTorch folder (prefill and multi-token
    decode) in the executorch virtualenv, and a greedy loop over its runners — called with transformers' DynamicCache
    or StaticCache objects, as it calls its own programs — gives transformers' generate tokens."""
    name = "llama_default"
    prompt = prompts((7,), models.VARIANTS[name].vocab_size)[0]
    out = tmp_path / "out"
    proc = et_export(checkpoints(name), out, GEN_BOUNDS, "--for-generation", "--multi-token-decode", "--io", "seed",
                     *(["--cache", "static"] if cache == "static" else []), "--max-cache-len", str(MAX_CACHE_LEN))
    assert proc.returncode == 0, describe(proc)
    n = 12
    got = worker().python(SEED_RUNNERS, [str(checkpoints(name)), str(out), cache == "static", MAX_CACHE_LEN, prompt, n])
    model = models.load_reference_model(checkpoints(name))
    with torch.no_grad():
        want = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                              max_new_tokens=n, do_sample=False, eos_token_id=None, pad_token_id=0,
                              **({"cache_implementation": "static"} if cache == "static" else {}))[0, len(prompt):]
    assert len(set(want.tolist())) > 2 and got == want.tolist(), (got, want.tolist())


def test_inspect_reads_a_pte(et_exports, tmp_path):
    """hfx inspect on an ExecuTorch export reads the program, bounds-checked: each method with the
    counts flatc's decoding of the same file gives; a truncated or foreign file is refused with
    exit 2 and the reason, never misread."""
    out, proc = et_exports("llama_default", "xnnpack")
    assert proc.returncode == 0, describe(proc)
    plan, = flatc_json(out / "model.pte", tmp_path)["execution_plan"]
    calls = plan["chains"][0]["instructions"]
    n_delegate = sum(i["instr_args_type"] == "DelegateCall" for i in calls)
    want = (f"forward                  {len(plan['inputs'])} inputs, {len(plan['outputs'])} outputs, "
            f"{len(plan['values'])} values, {len(calls)} instructions ({n_delegate} delegate calls), "
            f"{len(plan['operators'])} operators, {len(plan['delegates'])} delegates, planned arena "
            f"{sum(plan['non_const_buffer_sizes'])} bytes")
    for path in (out, out / "model.pte"):
        res = run_hfx(["inspect", path])
        assert res.returncode == 0 and "executorch program" in res.stdout and want in res.stdout, describe(res)
    data = (out / "model.pte").read_bytes()
    for name, body, why in (("cut.pte", data[:4000], "program size is outside the file"),
                            ("other.pte", b"\0" * 64, "no \"ET12\" identifier")):
        (tmp_path / name).write_bytes(body)
        res = run_hfx(["inspect", tmp_path / name])
        assert res.returncode == 2 and why in res.stderr, describe(res)
