"""Generation exports (`hfx export --for-generation`, docs/GENERATION.md) against transformers.

The reference is transformers' greedy `generate(do_sample=False)` (eager, float32) on the same
left-padded batch; the ONNX side is examples/generate_onnx.py run as a user would run it. For
every architecture of the foundation and every way to export (dynamic or static cache, prefill +
decode or one multi-token decode, symbolic or fixed shapes), the new tokens must be equal and the
logits of every step within 1e-4. Multi-token decode is also driven directly through ONNX Runtime
(query lengths 1, 3 and 7 against a partly filled cache), and the static cache's end is checked:
the decode loop stops there, and the graph refuses a write past it.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

import models
from conftest import assert_logits_close, describe, ort_session, run_hfx
from genutil import (
    FIXED_QUERY,
    FIXED_SEQ,
    GEN_VARIANTS,
    MAX_CACHE_LEN,
    MODES,
    NEW_TOKENS,
    GenExports,
    References,
    cache_geometry,
    compare_generation,
    component_path,
    eos_pad,
    left_pad,
    manifest,
    positions,
    prompts,
    run_loop,
)

NO_EOS = {"bos_token_id": 1, "eos_token_id": None}
BATCH1 = (7,)
BATCH3 = (10, 5, 1)  # left padding 0, 5 and 9: one row of a single real token


@pytest.fixture(scope="session")
def gen_exports(tmp_path_factory, checkpoints) -> GenExports:
    return GenExports(tmp_path_factory.mktemp("gen_exports"), checkpoints)


@pytest.fixture(scope="session")
def refs(checkpoints) -> References:
    return References(checkpoints)


def _batches(mode):
    return [BATCH1, BATCH3] if mode.fixed_batch is None else [BATCH1 if mode.fixed_batch == 1 else BATCH3]


# The template's other families (models.py): StarCoder2 (sliding window 4 < the prompts on every layer), Gemma 2 (window 4,
# both soft-caps, sliding/full layers) and Gemma 3 (window 4, local/global rope, q/k norms) run
# every mode; Granite, OLMo-2 and Gemma run prefill + decode with a dynamic and a static cache.
# All six run the direct multi-token-decode check.
FAMILIES_FULL = ("starcoder2", "gemma2", "gemma3")
FAMILIES_REDUCED = ("granite", "olmo2", "gemma")
FAMILIES_GEN_VARIANTS = FAMILIES_FULL + FAMILIES_REDUCED
FAMILIES_REDUCED_MODES = ("dyncache", "static")

MATRIX = [
    pytest.param(v, m, lengths, id=f"{v}-{m}-b{len(lengths)}")
    for v in GEN_VARIANTS + FAMILIES_FULL
    for m in MODES
    for lengths in _batches(MODES[m])
] + [
    pytest.param(v, m, lengths, id=f"{v}-{m}-b{len(lengths)}")
    for v in FAMILIES_REDUCED
    for m in FAMILIES_REDUCED_MODES
    for lengths in _batches(MODES[m])
]


# ---- harness self-checks (no hfx needed) ------------------------------------------------------


@pytest.mark.parametrize("name", GEN_VARIANTS + FAMILIES_GEN_VARIANTS)
def test_reference_generate_is_consistent(refs, name):
    """Harness sanity: generate()'s per-step logits are those of one no-cache forward over the
    final sequence, each row's tokens are those of the row generated alone (left padding changes
    nothing), and a static-cache generate() gives the same tokens and logits (within 1e-5)."""
    vocab = models.VARIANTS[name].vocab_size
    rows = prompts(BATCH3, vocab)
    tokens, logits = refs.generate(name, rows, NO_EOS)
    assert tokens.shape == (3, NEW_TOKENS)
    ids, mask = left_pad(rows, 0)
    full_ids = np.concatenate([ids, tokens], axis=1)
    full_mask = np.concatenate([mask, np.ones_like(tokens)], axis=1)
    fwd = refs.forward(name, full_ids, full_mask)[:, ids.shape[1] - 1: -1]  # [B, steps, V]
    assert_logits_close(logits.transpose(1, 0, 2), fwd, f"{name}: generate vs one forward", atol=1e-5)
    for r, row in enumerate(rows):
        alone, alone_logits = refs.generate(name, [row], NO_EOS)
        assert alone[0].tolist() == tokens[r].tolist(), f"{name}: row {r} alone generates other tokens"
        assert np.abs(alone_logits[:, 0] - logits[:, r]).max() < 1e-5
    st_tokens, st_logits = refs.generate(name, rows, NO_EOS, cache_implementation="static")
    assert st_tokens.tolist() == tokens.tolist(), f"{name}: static-cache generate differs"
    assert np.abs(st_logits - logits).max() < 1e-5


def _eos_config(refs, name, lengths):
    """A generation config whose EOS ids are tokens that transformers generates (without EOS) at
    steps 4 and 9 of the first two rows: rows finish early, at different steps."""
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    tokens, _ = refs.generate(name, rows, NO_EOS)
    eos = [int(tokens[0, 4])] + ([int(tokens[1, 9])] if len(rows) > 1 else [])
    return rows, {"bos_token_id": 1, "eos_token_id": eos, "pad_token_id": 0}


@pytest.mark.parametrize("lengths", [BATCH1, BATCH3], ids=["b1", "b3"])
def test_reference_eos_case_is_meaningful(refs, lengths):
    """Harness sanity: with _eos_config's EOS ids, transformers stops a row early and pads it."""
    rows, gen = _eos_config(refs, "llama_default", lengths)
    tokens, logits = refs.generate("llama_default", rows, gen)
    eos, pad = eos_pad(gen)
    finished = [r for r in range(len(rows)) if any(t in eos for t in tokens[r].tolist())]
    assert 0 in finished, tokens
    first = tokens[0].tolist().index(next(t for t in tokens[0].tolist() if t in eos))
    assert first <= 4 and first < tokens.shape[1] - 1 or len(rows) == 1, tokens
    assert all(t == pad for t in tokens[0, first + 1:].tolist()), tokens
    if len(rows) == 1:
        assert tokens.shape[1] == first + 1 < NEW_TOKENS, "generate stops once the only row is done"


def test_loop_helpers():
    """The decode loop's pure parts (no export needed)."""
    import importlib.util

    from genutil import GENERATE_SCRIPT

    spec = importlib.util.spec_from_file_location("generate_onnx", GENERATE_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ids, mask = mod.left_pad([[5, 6, 7], [8]], 9, 4)
    assert ids.tolist() == [[9, 5, 6, 7], [9, 9, 9, 8]] and mask.tolist() == [[0, 1, 1, 1], [0, 0, 0, 1]]
    assert mod.parse_prompts("1,2,3;4,5") == [[1, 2, 3], [4, 5]]
    with pytest.raises(mod.UsageError):
        mod.parse_prompts("1,x")


# ---- greedy generation: the matrix --------------------------------------------------------------


@pytest.mark.parametrize("name,mode_name,lengths", MATRIX)
def test_greedy_generation(gen_exports, refs, tmp_path, name, mode_name, lengths):
    """32 new tokens through examples/generate_onnx.py equal generate()'s, and every step's logits
    are within 1e-4 (no EOS: always 32 tokens)."""
    mode = MODES[mode_name]
    out = gen_exports.with_generation_config(gen_exports.mode(name, mode), NO_EOS)
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    pad_to = FIXED_SEQ if mode.fixed_batch else None
    want_tokens, want_logits = refs.generate(name, rows, NO_EOS, pad_to=pad_to)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    assert all(len(t) == NEW_TOKENS for t in res.tokens), f"without EOS every row gets {NEW_TOKENS}: {res.tokens}"
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"{name} {mode_name} b{len(rows)}")


@pytest.mark.parametrize("mode_name", list(MODES))
def test_eos(gen_exports, refs, tmp_path, mode_name):
    """A real EOS (a list of two ids): a finished row gets pad_token_id from then on, and the loop
    stops once every row is done, exactly as generate()."""
    mode = MODES[mode_name]
    lengths = BATCH1 if mode.fixed_batch == 1 else BATCH3
    rows, gen = _eos_config(refs, "llama_default", lengths)
    out = gen_exports.with_generation_config(gen_exports.mode("llama_default", mode), gen)
    pad_to = FIXED_SEQ if mode.fixed_batch else None
    want_tokens, want_logits = refs.generate("llama_default", rows, gen, pad_to=pad_to)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"llama_default {mode_name} eos {gen}")


@pytest.mark.parametrize("mode_name", ["dyncache", "static-mtd"])
def test_eos_without_pad_token(gen_exports, refs, tmp_path, mode_name):
    """eos_token_id an int and no pad_token_id: finished rows are padded with the EOS id."""
    rows, gen = _eos_config(refs, "llama_default", BATCH3)
    gen = {"eos_token_id": gen["eos_token_id"][1]}
    out = gen_exports.with_generation_config(gen_exports.mode("llama_default", MODES[mode_name]), gen)
    want_tokens, want_logits = refs.generate("llama_default", rows, gen)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"llama_default {mode_name} eos {gen}")


# ---- multi-token decode, driven directly ---------------------------------------------------------

CHUNKS = (6, 1, 3, 7)  # the prompt (empty cache), then 1, 3 and 7 tokens against the filled part


@pytest.mark.parametrize("name", GEN_VARIANTS + FAMILIES_GEN_VARIANTS)
@pytest.mark.parametrize("mode_name", ["dyncache-mtd", "static-mtd"])
def test_multi_token_decode(gen_exports, refs, name, mode_name):
    """decode.onnx of a --multi-token-decode export takes the prompt (empty cache), then 1, 3 and 7
    tokens at once; each chunk's logits equal transformers' forward over the whole sequence at
    those positions (a left-padded batch of 2). The static cache changes only the slots written."""
    mode = MODES[mode_name]
    out = gen_exports.mode(name, mode)
    assert set(manifest(out)["components"]) == {"decode"}
    vocab = models.VARIANTS[name].vocab_size
    prompt_ids, prompt_mask = left_pad(prompts((6, 4), vocab, seed=1), 0)
    rng = np.random.default_rng(7)
    extra = rng.integers(3, vocab, size=(2, sum(CHUNKS[1:])), dtype=np.int64)
    ids = np.concatenate([prompt_ids, extra], axis=1)
    mask = np.concatenate([prompt_mask, np.ones_like(extra)], axis=1)
    pos = positions(mask)
    want = refs.forward(name, ids, mask)

    sess = ort_session(component_path(out, "decode"))
    geo = cache_geometry(sess)
    out_names = [o.name for o in sess.get_outputs()]
    if mode.static_cache:
        cache = {n: np.zeros((2, kv, MAX_CACHE_LEN, hd), dt) for n, (kv, hd, dt) in geo.items()}
        slot_mask = np.zeros((2, MAX_CACHE_LEN), np.int64)
    else:
        cache = {n: np.zeros((2, kv, 0, hd), dt) for n, (kv, hd, dt) in geo.items()}
    start = 0
    for n in CHUNKS:
        end = start + n
        label = f"{name} {mode_name}: {n} tokens after {start}"
        feed = {"input_ids": ids[:, start:end], "position_ids": pos[:, start:end]}
        if mode.static_cache:
            slots = np.arange(start, end, dtype=np.int64)
            slot_mask[:, slots] = mask[:, slots]
            feed.update(cache_position=slots, attention_mask=slot_mask.copy())
        else:
            feed["attention_mask"] = mask[:, :end]
        feed.update(cache)
        res = dict(zip(out_names, sess.run(None, feed)))
        got = res["logits"]
        assert got.shape == (2, n, vocab), f"{label}: logits {got.shape}"
        # Padding query rows (mask 0: all their keys masked) are compared nowhere: transformers' own
        # value there depends on the cache class (eager averages over ALL keys of the cache, so a
        # StaticCache gives another value than a DynamicCache), and nothing ever reads them.
        real = mask[:, start:end].astype(bool)
        assert np.isfinite(got).all(), f"{label}: non-finite logits"
        assert_logits_close(np.where(real[..., None], got, 0), np.where(real[..., None], want[:, start:end], 0), label)
        for cname, before in cache.items():
            if mode.static_cache:
                after = res["output." + cname[len("input."):]]
                assert after.shape == before.shape, f"{label}: {cname} {after.shape} != {before.shape}"
                keep = np.ones(MAX_CACHE_LEN, bool)
                keep[start:end] = False
                assert np.array_equal(after[:, :, keep], before[:, :, keep]), \
                    f"{label}: output.{cname[6:]} changed slots outside cache_position {start}..{end - 1}"
                assert np.abs(after[:, :, start:end]).max() > 0, f"{label}: nothing written at slots {start}..{end - 1}"
            else:
                after = res["present." + cname[len("past_key_values."):]]
                assert after.shape == before.shape[:2] + (end,) + before.shape[3:], f"{label}: {cname} {after.shape}"
                assert np.array_equal(after[:, :, :start], before), f"{label}: present.* does not extend the past"
            cache[cname] = after
        start = end


# ---- the static cache's end ------------------------------------------------------------------------

SMALL_M = 24


@pytest.mark.parametrize("mtd", [False, True], ids=["prefill-decode", "multi-token-decode"])
def test_static_cache_end(gen_exports, refs, tmp_path, mtd):
    """M 24, prompt 10, 32 new tokens asked: the loop stops at the cache end with a message on
    stderr, after M - 10 + 1 = 15 tokens (the last token needs no slot: transformers sizes its own
    static cache max_length - 1), equal to generate()'s. A prompt of M tokens gives one token; a
    prompt longer than M is refused (exit 2)."""
    flags = ["--for-generation", "--cache", "static", "--max-cache-len", str(SMALL_M), "--dynamic"]
    out = gen_exports.with_generation_config(
        gen_exports("llama_default", *flags, *(["--multi-token-decode"] if mtd else [])), NO_EOS)
    vocab = models.VARIANTS["llama_default"].vocab_size
    for plen in (10, SMALL_M):
        rows = prompts((plen,), vocab, seed=3)
        want_tokens, want_logits = refs.generate("llama_default", rows, NO_EOS)
        res = run_loop(out, rows, NEW_TOKENS, tmp_path / f"logits{plen}.npz")
        assert res.proc.returncode == 0, describe(res.proc)
        n = SMALL_M - plen + 1
        assert len(res.tokens[0]) == n, f"prompt {plen}, M {SMALL_M}: {len(res.tokens[0])} tokens, want {n}"
        assert "cache" in res.proc.stderr.lower(), f"no message about the full cache on stderr:\n{describe(res.proc)}"
        compare_generation(res.tokens, res.logits, want_tokens[:, :n], want_logits[:n], f"prompt {plen} M {SMALL_M}")
    res = run_loop(out, prompts((SMALL_M + 1,), vocab), NEW_TOKENS)
    assert res.proc.returncode == 2, describe(res.proc)
    assert "max_cache_len" in res.proc.stderr and str(SMALL_M) in res.proc.stderr, describe(res.proc)
    assert res.proc.stdout.strip() == ""


@pytest.mark.parametrize("mtd", [False, True], ids=["decode", "multi-token-decode"])
def test_static_cache_write_past_end_raises(gen_exports, mtd):
    """ONNX Runtime refuses cache_position at or past M (never a silent out-of-bounds write)."""
    flags = ["--for-generation", "--cache", "static", "--max-cache-len", str(SMALL_M), "--dynamic"]
    out = gen_exports("llama_default", *flags, *(["--multi-token-decode"] if mtd else []))
    sess = ort_session(component_path(out, "decode"))
    geo = cache_geometry(sess)
    def feed(slots):
        n = len(slots)
        f = {"input_ids": np.full((1, n), 5, np.int64), "position_ids": np.array([slots], np.int64),
             "cache_position": np.array(slots, np.int64), "attention_mask": np.ones((1, SMALL_M), np.int64)}
        f.update({k: np.zeros((1, kv, SMALL_M, hd), dt) for k, (kv, hd, dt) in geo.items()})
        return f

    # the same feed with the last slots is fine (so the failures below are the bounds check)
    sess.run(None, feed([SMALL_M - 3, SMALL_M - 2, SMALL_M - 1] if mtd else [SMALL_M - 1]))
    for slots in ([SMALL_M], [SMALL_M + 5]) + (([SMALL_M - 2, SMALL_M - 1, SMALL_M],) if mtd else ()):
        with pytest.raises(Exception) as exc:
            sess.run(None, feed(slots))
        print(f"cache_position {slots}: {str(exc.value)[:300]}")
        assert "bound" in str(exc.value).lower(), f"cache_position {slots}: not a bounds error: {exc.value}"


# ---- export.json and the graphs ------------------------------------------------------------------


def _dims(value_info) -> list:
    out = []
    for d in value_info.type.tensor_type.shape.dim:
        out.append(d.dim_param if d.HasField("dim_param") else d.dim_value if d.HasField("dim_value") else None)
    return out


@pytest.mark.parametrize("name,mode_name", [(v, m) for v in GEN_VARIANTS for m in MODES if v == "llama_default" or m == "static"]
                         + [("qwen2_swa", "dyncache")]
                         + [(v, "static") for v in FAMILIES_GEN_VARIANTS]
                         + [(v, "dyncache") for v in ("gemma2", "gemma3")])
def test_export_structure(gen_exports, name, mode_name):
    """export.json: components, roles, files, metadata (also in each graph's metadata_props) with
    the cache geometry of every layer; the graphs' inputs/outputs as docs/GENERATION.md says; both
    graphs pass the full ONNX checker and read their weights from one shared model.onnx_data (a single graph from its
    own <file>.data)."""
    mode = MODES[mode_name]
    out = gen_exports.mode(name, mode)
    man = manifest(out)
    assert man["schema_version"] == 1 and man["export_format"] == "onnx", man
    gen = man["generation"]
    assert gen["cache_implementation"] == ("static" if mode.static_cache else "dynamic"), gen
    assert gen["max_cache_len"] == (MAX_CACHE_LEN if mode.static_cache else None), gen
    assert gen["multi_token_decode"] is mode.multi_token, gen
    assert set(man["components"]) == set(mode.components), man["components"].keys()

    variant = models.VARIANTS[name]
    cfg = variant.config
    n_layers, kv = cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    mc = models.build_model(variant).config
    # Mistral has no layer_types: a sliding_window applies to every layer
    layer_types = getattr(mc, "layer_types", None) or \
        ["sliding_attention" if getattr(mc, "sliding_window", None) else "full_attention"] * n_layers
    windows = [mc.sliding_window if t == "sliding_attention" else None for t in layer_types]
    M = MAX_CACHE_LEN if mode.static_cache else None

    locations = set()
    for cname, comp in man["components"].items():
        assert comp["role"] == cname, comp
        path = out / comp["file"]
        assert comp["file"] == f"{cname}.onnx" and path.is_file(), comp
        md = comp["metadata"]
        assert md["role"] == cname and md["architecture"] == variant.architecture, md
        cache = md["cache"]
        assert cache["implementation"] == gen["cache_implementation"] and cache["max_cache_len"] == M, cache
        assert len(cache["layers"]) == n_layers, cache
        for i, layer in enumerate(cache["layers"]):
            # length: the graph's cache length, symbolic (null) in an --dynamic export
            length = M if mode.fixed_batch else layer.get("length")
            assert length in (M, None), f"{cname} layer {i}: {layer}"
            assert layer == {"heads": kv, "key_dim": head_dim, "value_dim": head_dim, "length": length,
                             "sliding_window": windows[i]}, f"{cname} layer {i}: {layer}"

        onnx.checker.check_model(str(path), full_check=True)
        proto = onnx.load(str(path), load_external_data=False)
        props = {p.key: p.value for p in proto.metadata_props}
        assert json.loads(props["transformers_export_metadata"]) == md, "metadata_props differs from export.json"
        ins = {i.name: _dims(i) for i in proto.graph.input}
        outs = {o.name: _dims(o) for o in proto.graph.output}
        assert list(ins) == md["input_names"] and list(outs) == md["output_names"]
        for init in proto.graph.initializer:
            if init.data_location == onnx.TensorProto.EXTERNAL:
                locations.add({e.key: e.value for e in init.external_data}["location"])

        batch = mode.fixed_batch or "batch_size"
        if mode.static_cache:
            seq = (FIXED_SEQ if mode.fixed_batch else "sequence_length") if cname == "prefill" else \
                  (1 if not mode.multi_token else FIXED_QUERY if mode.fixed_batch else "sequence_length")
            cache_names = [f"input.past_key_values.{i}.{kind}" for i in range(n_layers) for kind in ("key", "value")]
            assert set(ins) == {"input_ids", "position_ids", "cache_position", "attention_mask", *cache_names}, ins
            assert set(outs) == {"logits", *(n.replace("input.", "output.") for n in cache_names)}, outs
            assert ins["cache_position"][0] in (seq, "sequence_length") and len(ins["cache_position"]) == 1
            assert len(ins["attention_mask"]) == 2 and ins["attention_mask"][0] == batch, ins["attention_mask"]
            if mode.fixed_batch:
                assert ins["attention_mask"][1] == MAX_CACHE_LEN and ins["input_ids"] == [batch, seq], ins
            for n in cache_names:
                shape = ins[n]
                assert shape[0] == batch and shape[1] == kv and shape[3] == head_dim, (n, shape)
                if mode.fixed_batch:
                    assert shape[2] == MAX_CACHE_LEN, (n, shape)
                assert outs[n.replace("input.", "output.")] == shape, f"{n}: output shape differs from input"
        else:
            past = [f"past_key_values.{i}.{k}" for i in range(n_layers) for k in ("key", "value")]
            present = [p.replace("past_key_values.", "present.") for p in past]
            want_ins = {"input_ids", "attention_mask", "position_ids"} | (set(past) if cname == "decode" else set())
            assert set(ins) == want_ins, ins
            assert set(outs) == {"logits", *present}, outs
            seq = 1 if cname == "decode" and not mode.multi_token else "sequence_length"
            assert ins["input_ids"] == ["batch_size", seq], ins["input_ids"]
            if cname == "decode":
                for p in past:
                    assert ins[p] == ["batch_size", kv, "past_sequence_length", head_dim], (p, ins[p])
        logits_seq = (1 if (cname == "prefill" or not mode.multi_token) else FIXED_QUERY if mode.fixed_batch
                      else "sequence_length")
        assert outs["logits"][0] == batch and outs["logits"][1] == logits_seq and \
            outs["logits"][2] == variant.vocab_size, outs["logits"]
    # several graphs share one data file; one graph alone has its own, named as the seed names it
    data_file = "model.onnx_data" if len(man["components"]) > 1 else f"{next(iter(man['components'].values()))['file']}.data"
    assert locations == {data_file}, locations
    data_files = sorted(p.name for p in out.iterdir() if p.suffix not in (".json", ".onnx"))
    assert data_files == [data_file], data_files
    if len(man["components"]) == 2:
        # shared weights are stored once: the same (offset, length) in both graphs
        refs_ = []
        for cname in man["components"]:
            proto = onnx.load(str(out / f"{cname}.onnx"), load_external_data=False)
            refs_.append({i.name: tuple(sorted((e.key, e.value) for e in i.external_data))
                          for i in proto.graph.initializer if i.data_location == onnx.TensorProto.EXTERNAL})
        common = set(refs_[0]) & set(refs_[1])
        assert common and all(refs_[0][k] == refs_[1][k] for k in common), "prefill and decode store weights twice"


def test_logits_all(gen_exports, refs, tmp_path):
    """--logits all: prefill returns every position's logits (padded ones included), equal to
    transformers' forward; the decode loop still generates like generate()."""
    out = gen_exports("llama_default", "--for-generation", "--dynamic", "--logits", "all")
    assert manifest(out)["components"]["prefill"]["metadata"]["logits_to_keep"] == 0
    rows = prompts(BATCH3, models.VARIANTS["llama_default"].vocab_size)
    ids, mask = left_pad(rows, 0)
    sess = ort_session(component_path(out, "prefill"))
    (logits,) = sess.run(["logits"], {"input_ids": ids, "attention_mask": mask, "position_ids": positions(mask)})
    assert_logits_close(logits, refs.forward("llama_default", ids, mask), "prefill --logits all")
    out = gen_exports.with_generation_config(out, NO_EOS)
    want_tokens, want_logits = refs.generate("llama_default", rows, NO_EOS)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, "--logits all")


# ---- CLI ------------------------------------------------------------------------------------------


def test_cli_static_cache_needs_length(checkpoints, tmp_path):
    proc = run_hfx(["export", checkpoints("llama_default"), tmp_path / "o", "--format", "onnx",
                    "--for-generation", "--dynamic", "--cache", "static", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert "max-cache-len" in proc.stderr or "max_cache_len" in proc.stderr, describe(proc)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_cli_multi_token_decode_needs_dynamic(checkpoints, tmp_path):
    """A growing cache's multi-token decode of static shapes is refused (its lengths vary), naming --dynamic and the
    static cache that takes a fixed query length."""
    proc = run_hfx(["export", checkpoints("llama_default"), tmp_path / "o", "--format", "onnx",
                    "--for-generation", "--multi-token-decode", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert "--dynamic" in proc.stderr and "--cache static" in proc.stderr, describe(proc)
    assert not (tmp_path / "o").exists()


def test_cli_generation_config_static_cache(checkpoints, gen_exports, refs, tmp_path):
    """generation_config.json with cache_implementation "static" and max_cache_len 48: a static
    export without --cache / --max-cache-len, which generates like transformers."""
    src = checkpoints("llama_default")
    ck = tmp_path / "ck"
    ck.mkdir()
    for f in src.iterdir():
        (ck / f.name).symlink_to(f)
    (ck / "generation_config.json").unlink()
    gen = {"bos_token_id": 1, "eos_token_id": None, "cache_implementation": "static", "max_cache_len": 48}
    (ck / "generation_config.json").write_text(json.dumps(gen))
    out = gen_exports(ck, "--for-generation", "--dynamic")
    man = manifest(out)
    assert man["generation"]["cache_implementation"] == "static" and man["generation"]["max_cache_len"] == 48, man
    sess = ort_session(component_path(out, "decode"))
    assert "cache_position" in {i.name for i in sess.get_inputs()}
    rows = prompts(BATCH3, models.VARIANTS["llama_default"].vocab_size)
    want_tokens, want_logits = refs.generate("llama_default", rows, NO_EOS)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz")
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, "generation_config static")


def test_loop_refuses_wrong_batch(gen_exports):
    """A static-shape export serves its batch only: the loop says so (exit 2)."""
    out = gen_exports.mode("llama_default", MODES["static-fixed-b3"])
    res = run_loop(out, prompts(BATCH1, models.VARIANTS["llama_default"].vocab_size), 4)
    assert res.proc.returncode == 2 and "batch" in res.proc.stderr, describe(res.proc)
    res = run_loop(out, prompts((FIXED_SEQ + 1, 2, 3), models.VARIANTS["llama_default"].vocab_size), 4)
    assert res.proc.returncode == 2 and str(FIXED_SEQ) in res.proc.stderr, describe(res.proc)
