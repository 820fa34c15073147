"""Bad input: hfx must exit 2 with one short message on stderr that names the offending file
(and the tensor / field / offset at fault), and leave nothing in OUT_DIR (which may be created,
but must hold no files afterwards) nor beside it.

Every broken checkpoint starts as a copy of a valid tiny checkpoint (models.py) and is broken
by hand (struct-level edits of the safetensors bytes, JSON edits of config / index). The
control tests export the same untouched copies successfully, so each failure is caused by the
edit. test_reference_loader_rejects checks that the Python safetensors library also rejects
the structurally broken files, i.e. that they are really broken.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

import models
from conftest import describe, has_number, run_hfx

ST = "model.safetensors"
INDEX = "model.safetensors.index.json"
MAX_MESSAGE_LINES = 3


@dataclasses.dataclass
class Expect:
    files: tuple                 # the message names at least one of these (file names)
    all_of: tuple = ()           # ... and every one of these (str, or int printed in any form)
    any_of: tuple = ()           # ... and, when not empty, at least one of these
    args: tuple = ()             # extra CLI arguments
    out: Path | None = None      # the OUT_DIR to pass (default: <tmp>/out, not existing)


@dataclasses.dataclass
class Bad:
    id: str
    base: str                                    # variant copied into <tmp>/ckpt
    mutate: Callable[[Path, Path], Expect]       # (checkpoint dir, tmp dir) -> Expect
    broken_safetensors: str | None = None        # file the reference loader must reject


def _contains(text: str, item) -> bool:
    return has_number(text, item) if isinstance(item, int) else item in text


# ---- safetensors editing --------------------------------------------------------------------------


def _by_offset(header: dict) -> list:
    return sorted(((k, v) for k, v in header.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"][0])


def _rewrite(path: Path, header, data: bytes, header_len=None) -> None:
    path.write_bytes(models.encode_safetensors(header, data, header_len))


def _truncated(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    raw = path.read_bytes()
    header, data = models.read_safetensors(path)
    n = len(raw) - 8 - len(data)
    cut = len(raw) // 2
    path.write_bytes(raw[:cut])
    data_now = cut - 8 - n
    past = [(k, v) for k, v in _by_offset(header) if v["data_offsets"][1] > data_now]
    first_b, first_e = past[0][1]["data_offsets"]
    numbers = [cut, len(raw), data_now, len(data), first_b, first_e, 8 + n + first_b, 8 + n + first_e]
    return Expect(files=(ST,), any_of=tuple(k for k, _ in past) + tuple(numbers))


def _header_len_past_eof(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    raw = path.read_bytes()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw[8:])
    return Expect(files=(ST,), any_of=(len(raw),))


def _header_len_huge(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    raw = path.read_bytes()
    path.write_bytes((2 ** 40).to_bytes(8, "little") + raw[8:])
    return Expect(files=(ST,), any_of=(2 ** 40, len(raw), 100 * 1024 * 1024))


def _shorter_than_8(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    path.write_bytes(path.read_bytes()[:5])
    return Expect(files=(ST,), any_of=(5, 8))


def _header_not_json(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    raw = bytearray(path.read_bytes())
    pos = raw.index(b'"shape"')
    raw[pos + len(b'"shape"')] = ord(";")  # "shape";[...]  (same length, data untouched)
    path.write_bytes(bytes(raw))
    return Expect(files=(ST,))


def _offsets_out_of_range(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    header, data = models.read_safetensors(path)
    name, info = _by_offset(header)[-1]
    b, e = info["data_offsets"]
    header[name] = dict(info, data_offsets=[b + 64, e + 64])
    _rewrite(path, header, data)
    return Expect(files=(ST,), all_of=(name,))


def _offsets_reversed(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    header, data = models.read_safetensors(path)
    name, info = _by_offset(header)[3]
    b, e = info["data_offsets"]
    header[name] = dict(info, data_offsets=[e, b])
    _rewrite(path, header, data)
    return Expect(files=(ST,), all_of=(name,))


def _overlap(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    header, data = models.read_safetensors(path)
    ordered = _by_offset(header)
    (a, _), (b_name, b_info) = ordered[4], ordered[5]
    b, e = b_info["data_offsets"]
    header[b_name] = dict(b_info, data_offsets=[b - 4, e - 4])  # 4 bytes inside `a`
    _rewrite(path, header, data)
    return Expect(files=(ST,), any_of=(a, b_name))


def _shape_bytes_mismatch(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    header, data = models.read_safetensors(path)
    name = "model.layers.0.self_attn.q_proj.weight"
    header[name] = dict(header[name], shape=[64, 65])
    _rewrite(path, header, data)
    return Expect(files=(ST,), all_of=(name,))


def _dtype_bytes_mismatch(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    header, data = models.read_safetensors(path)
    name = "model.layers.1.mlp.up_proj.weight"
    assert header[name]["dtype"] == "F32"
    header[name] = dict(header[name], dtype="F16")
    _rewrite(path, header, data)
    return Expect(files=(ST,), all_of=(name,))


def _duplicate_key(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    header, data = models.read_safetensors(path)
    name = "model.layers.0.mlp.gate_proj.weight"
    text = json.dumps(header, separators=(",", ":"))
    entry = json.dumps(name) + ":" + json.dumps(header[name], separators=(",", ":"))
    assert text.count(entry) == 1
    _rewrite(path, text.replace(entry, entry + "," + entry), data)
    return Expect(files=(ST,), all_of=(name,))


def _tensor_missing(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    name = "model.layers.1.mlp.down_proj.weight"
    _rewrite(path, *models.drop_tensor(*models.read_safetensors(path), name))
    return Expect(files=(ST, ck.name), all_of=(name,))


def _lm_head_missing(ck: Path, tmp: Path) -> Expect:
    path = ck / ST
    _rewrite(path, *models.drop_tensor(*models.read_safetensors(path), "lm_head.weight"))
    return Expect(files=(ST, ck.name), all_of=("lm_head.weight",))


def _tensor_shape_vs_config(ck: Path, tmp: Path) -> Expect:
    """A well-formed file whose q_proj is [32, 64] where the config implies [64, 64]."""
    path = ck / ST
    header, data = models.read_safetensors(path)
    name = "model.layers.0.self_attn.q_proj.weight"
    out, chunks, off = {}, [], 0
    for k, v in _by_offset(header):
        b, e = v["data_offsets"]
        blob = data[b:e]
        if k == name:
            blob = blob[: len(blob) // 2]
            v = dict(v, shape=[32, 64])
        out[k] = dict(v, data_offsets=[off, off + len(blob)])
        chunks.append(blob)
        off += len(blob)
    _rewrite(path, out, b"".join(chunks))
    return Expect(files=(ST, "config.json"), all_of=(name,))


# ---- shards and index -----------------------------------------------------------------------------


def _index(ck: Path) -> dict:
    return json.loads((ck / INDEX).read_text())


def _write_index(ck: Path, index: dict) -> None:
    (ck / INDEX).write_text(json.dumps(index, indent=2))


def _shard_missing_tensor(ck: Path, tmp: Path) -> Expect:
    index = _index(ck)
    shard = sorted(set(index["weight_map"].values()))[1]
    name = sorted(k for k, v in index["weight_map"].items() if v == shard)[0]
    _rewrite(ck / shard, *models.drop_tensor(*models.read_safetensors(ck / shard), name))
    return Expect(files=(shard, INDEX), all_of=(name,))


def _index_missing_tensor(ck: Path, tmp: Path) -> Expect:
    index = _index(ck)
    shard = sorted(set(index["weight_map"].values()))[2]
    name = sorted(k for k, v in index["weight_map"].items() if v == shard)[0]
    del index["weight_map"][name]
    _write_index(ck, index)
    return Expect(files=(shard, INDEX), all_of=(name,))


def _index_names_absent_shard(ck: Path, tmp: Path) -> Expect:
    index = _index(ck)
    name = sorted(index["weight_map"])[0]
    index["weight_map"][name] = "model-00009-of-00005.safetensors"
    _write_index(ck, index)
    return Expect(files=("model-00009-of-00005.safetensors",))


def _index_shard_outside_dir(ck: Path, tmp: Path) -> Expect:
    """A shard named "../x": every tensor is where the index says, but outside the checkpoint."""
    index = _index(ck)
    shard = sorted(set(index["weight_map"].values()))[-1]
    shutil.move(str(ck / shard), str(ck.parent / shard))
    for k, v in index["weight_map"].items():
        if v == shard:
            index["weight_map"][k] = "../" + shard
    _write_index(ck, index)
    return Expect(files=(INDEX, shard))


def _index_malformed(ck: Path, tmp: Path) -> Expect:
    text = (ck / INDEX).read_text()
    (ck / INDEX).write_text(text[: len(text) // 2])
    return Expect(files=(INDEX,))


# ---- config.json ----------------------------------------------------------------------------------


def _edit_config(ck: Path, fn) -> None:
    cfg = json.loads((ck / "config.json").read_text())
    fn(cfg)
    (ck / "config.json").write_text(json.dumps(cfg, indent=2))


def _config_malformed(ck: Path, tmp: Path) -> Expect:
    text = (ck / "config.json").read_text()
    (ck / "config.json").write_text(text[: len(text) * 2 // 3])
    return Expect(files=("config.json",))


def _config_missing(ck: Path, tmp: Path) -> Expect:
    (ck / "config.json").unlink()
    return Expect(files=("config.json",))


def _arch_unsupported(ck: Path, tmp: Path) -> Expect:
    """The message lists the supported architectures of the requested one's kind, by their prefixes: every causal LM
    the README's table names appears as its own list item."""
    _edit_config(ck, lambda c: c.update(architectures=["FooForCausalLM"]))
    kind = "ForCausalLM"
    items = tuple(a[:-len(kind)] for a in models.SUPPORTED_ARCHITECTURES if a.endswith(kind))
    assert len(items) == len(models.SUPPORTED_ARCHITECTURES)
    return Expect(files=("config.json",), all_of=("FooForCausalLM", f"*{kind}: ")
                  + tuple(f" {p}," for p in items[1:]) + (f": {items[0]},",))


def _rope_unsupported(ck: Path, tmp: Path) -> Expect:
    _edit_config(ck, lambda c: c["rope_parameters"].update(rope_type="su-but-bogus"))
    return Expect(files=("config.json",), all_of=("su-but-bogus",))


def _rope_unsupported_old_format(ck: Path, tmp: Path) -> Expect:
    _edit_config(ck, lambda c: c["rope_scaling"].update(type="su-but-bogus"))
    return Expect(files=("config.json",), all_of=("su-but-bogus",))


def _act_unsupported(ck: Path, tmp: Path) -> Expect:
    _edit_config(ck, lambda c: c.update(hidden_act="bogus_act"))
    return Expect(files=("config.json",), all_of=("hidden_act", "bogus_act"))


def _field_missing(ck: Path, tmp: Path) -> Expect:
    _edit_config(ck, lambda c: c.pop("hidden_size"))
    return Expect(files=("config.json",), all_of=("hidden_size",))


def _field_wrong_type(ck: Path, tmp: Path) -> Expect:
    _edit_config(ck, lambda c: c.update(num_hidden_layers="two"))
    return Expect(files=("config.json",), all_of=("num_hidden_layers",))


def _heads_not_divisible(ck: Path, tmp: Path) -> Expect:
    _edit_config(ck, lambda c: c.update(num_key_value_heads=3))
    return Expect(files=("config.json", ST), any_of=("num_key_value_heads", "model.layers.0.self_attn.k_proj.weight"))


# ---- the --config file and the output directory ---------------------------------------------------


def _export_config_unknown_key(ck: Path, tmp: Path) -> Expect:
    path = tmp / "bad_export_config.json"
    path.write_text(json.dumps({"export_format": "onnx", "dynamic": True, "bogus_key": 1}))
    return Expect(files=(path.name,), all_of=("bogus_key",), args=("--config", str(path)))


def _export_config_malformed(ck: Path, tmp: Path) -> Expect:
    path = tmp / "bad_export_config.json"
    path.write_text('{"export_format": "onnx", "dynamic": tru')
    return Expect(files=(path.name,), args=("--config", str(path)))


def _export_config_bad_value(ck: Path, tmp: Path) -> Expect:
    path = tmp / "bad_export_config.json"
    path.write_text(json.dumps({"export_format": "onnx", "opset_version": -1}))
    return Expect(files=(path.name,), all_of=("opset_version",), args=("--config", str(path)))


def _out_not_writable(ck: Path, tmp: Path) -> Expect:
    # Tests run as root, which ignores permission bits: a path under a regular file fails for all.
    blocker = tmp / "a_regular_file"
    blocker.write_text("not a directory\n")
    return Expect(files=(blocker.name,), out=blocker / "sub")


# ---- hostile files (issue 12): FIFOs, NUL bytes, loops, other formats, absurd sizes ---------------


def _fifo_in_place_of(name: str):
    def mutate(ck: Path, tmp: Path) -> Expect:
        (ck / name).unlink()
        os.mkfifo(ck / name)  # opened plainly, it would block forever waiting for a writer
        return Expect(files=(name,), all_of=("not a regular file",))
    return mutate


def _export_config_fifo(ck: Path, tmp: Path) -> Expect:
    path = tmp / "fifo_config.json"
    os.mkfifo(path)
    return Expect(files=(path.name,), args=("--config", str(path)))


def _export_config_nul(ck: Path, tmp: Path) -> Expect:
    path = tmp / "nul_config.json"
    path.write_bytes(b'{"export_format": "onnx"}\x00{"bogus": ')  # parsed up to the NUL before the fix
    return Expect(files=(path.name,), all_of=("NUL", 25), args=("--config", str(path)))


def _export_config_other_format_keys(ck: Path, tmp: Path) -> Expect:
    path = tmp / "ov_config.json"
    path.write_text(json.dumps({"export_format": "openvino", "stateful": False}))
    return Expect(files=(path.name,), all_of=("stateful", "onnx"), args=("--config", str(path), "--format", "onnx"))


def _config_symlink_loop(ck: Path, tmp: Path) -> Expect:
    (ck / "config.json").unlink()
    (ck / "config.json").symlink_to("config.json")
    return Expect(files=("config.json",), all_of=("symbolic links",))


def _gguf_folder(ck: Path, tmp: Path) -> Expect:
    """A folder holding only a GGUF file is read as that file (docs/GGUF.md): a broken one is refused naming it."""
    for p in ck.iterdir():
        p.unlink()
    (ck / "model-Q4_K_M.gguf").write_bytes(b"GGUF" + bytes(60))
    return Expect(files=("model-Q4_K_M.gguf",), all_of=("GGUF version 0",))


def _generation_max_cache_len_huge(ck: Path, tmp: Path) -> Expect:
    gen = json.loads((ck / "generation_config.json").read_text())
    gen.update(cache_implementation="static", max_cache_len=2**62)
    (ck / "generation_config.json").write_text(json.dumps(gen))
    return Expect(files=("generation_config",), all_of=("max_cache_len",), args=("--for-generation",))


def _too_many_tokens(ck: Path, tmp: Path) -> Expect:
    # 2^30 × 2^30 tokens: element counts past int64 (signed overflow in shape inference before)
    return Expect(files=("batch size",), all_of=("2^31",),
                  args=("--batch-size", "1073741824", "--sequence-length", "1073741824"))


BAD = [
    Bad("truncated-safetensors", "llama_default", _truncated, ST),
    Bad("header-length-past-eof", "llama_default", _header_len_past_eof, ST),
    Bad("header-length-2^40", "llama_default", _header_len_huge, ST),
    Bad("file-shorter-than-8-bytes", "llama_default", _shorter_than_8, ST),
    Bad("header-not-json", "llama_default", _header_not_json, ST),
    Bad("data-offsets-out-of-range", "llama_default", _offsets_out_of_range, ST),
    Bad("data-offsets-reversed", "llama_default", _offsets_reversed, ST),
    Bad("overlapping-tensors", "llama_default", _overlap, ST),
    Bad("shape-vs-byte-length", "llama_default", _shape_bytes_mismatch, ST),
    Bad("dtype-vs-byte-length", "llama_default", _dtype_bytes_mismatch, ST),
    Bad("duplicate-tensor-key", "llama_default", _duplicate_key),
    Bad("missing-required-tensor", "llama_default", _tensor_missing),
    Bad("missing-lm-head-untied", "llama_default", _lm_head_missing),
    Bad("tensor-shape-disagrees-with-config", "llama_default", _tensor_shape_vs_config),
    Bad("shard-lacks-indexed-tensor", "llama_sharded", _shard_missing_tensor),
    Bad("tensor-missing-from-index", "llama_sharded", _index_missing_tensor),
    Bad("index-names-absent-shard", "llama_sharded", _index_names_absent_shard),
    Bad("index-shard-outside-dir", "llama_sharded", _index_shard_outside_dir),
    Bad("index-malformed", "llama_sharded", _index_malformed),
    Bad("config-malformed", "llama_default", _config_malformed),
    Bad("config-missing", "llama_default", _config_missing),
    Bad("architecture-unsupported", "llama_default", _arch_unsupported),
    Bad("rope-type-unsupported", "llama_default", _rope_unsupported),
    Bad("rope-type-unsupported-old-format", "llama_oldcfg_linear", _rope_unsupported_old_format),
    Bad("hidden-act-unsupported", "llama_default", _act_unsupported),
    Bad("config-field-missing", "llama_default", _field_missing),
    Bad("config-field-wrong-type", "llama_default", _field_wrong_type),
    Bad("kv-heads-do-not-divide-heads", "llama_default", _heads_not_divisible),
    Bad("export-config-unknown-key", "llama_default", _export_config_unknown_key),
    Bad("export-config-malformed", "llama_default", _export_config_malformed),
    Bad("export-config-bad-value", "llama_default", _export_config_bad_value),
    Bad("output-dir-not-writable", "llama_default", _out_not_writable),
    Bad("safetensors-is-a-fifo", "llama_default", _fifo_in_place_of(ST)),
    Bad("config-is-a-fifo", "llama_default", _fifo_in_place_of("config.json")),
    Bad("export-config-is-a-fifo", "llama_default", _export_config_fifo),
    Bad("export-config-nul-byte", "llama_default", _export_config_nul),
    Bad("export-config-keys-of-another-format", "llama_default", _export_config_other_format_keys),
    Bad("config-symlink-loop", "llama_default", _config_symlink_loop),
    Bad("gguf-folder", "llama_default", _gguf_folder),
    Bad("generation-max-cache-len-2^62", "llama_default", _generation_max_cache_len_huge),
    Bad("batch-times-sequence-too-large", "llama_default", _too_many_tokens),
]


def _prepare(checkpoints, tmp_path: Path, bad: Bad) -> tuple[Path, Expect]:
    ck = tmp_path / "ckpt"
    shutil.copytree(checkpoints(bad.base), ck)
    return ck, bad.mutate(ck, tmp_path)


def _files_under(path: Path) -> list:
    if not path.exists():
        return []
    if not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if not p.is_dir())


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_bad_input(checkpoints, tmp_path, bad):
    ck, expect = _prepare(checkpoints, tmp_path, bad)
    out = expect.out or tmp_path / "out"
    before = {p.name for p in tmp_path.iterdir()}
    proc = run_hfx(["export", ck, out, "--format", "onnx", "--dynamic", *expect.args])
    assert proc.returncode == 2, f"expected exit code 2 for {bad.id}\n" + describe(proc)
    err = proc.stderr
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, f"{bad.id}: nothing on stderr\n" + describe(proc)
    assert len(lines) <= MAX_MESSAGE_LINES, f"{bad.id}: expected one message, got {len(lines)} lines:\n{err}"
    assert any(f in err for f in expect.files), f"{bad.id}: stderr names none of {list(expect.files)}:\n{err}"
    missing = [d for d in expect.all_of if not _contains(err, d)]
    assert not missing, f"{bad.id}: stderr lacks {missing}:\n{err}"
    if expect.any_of:
        assert any(_contains(err, d) for d in expect.any_of), (
            f"{bad.id}: stderr names none of {list(expect.any_of)[:12]}:\n{err}")
    left = _files_under(out)
    assert not left, f"{bad.id}: files left in the output directory: {[str(p) for p in left]}"
    new = {p.name for p in tmp_path.iterdir()} - before - {out.name}
    assert not new, f"{bad.id}: files left beside the output directory: {sorted(new)}"


def test_failed_export_keeps_existing_out_dir(checkpoints, tmp_path):
    """A failing export into an existing directory leaves exactly what was there."""
    ck, _ = _prepare(checkpoints, tmp_path, next(b for b in BAD if b.id == "missing-required-tensor"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("keep me\n")
    proc = run_hfx(["export", ck, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 2, describe(proc)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"], sorted(p.name for p in out.iterdir())
    assert (out / "keep.txt").read_text() == "keep me\n"


@pytest.mark.parametrize("base", ["llama_default", "llama_sharded", "llama_oldcfg_linear"])
def test_control_untouched_copy_exports(checkpoints, tmp_path, base):
    """The unbroken copies the cases start from export fine (exit 0)."""
    ck = tmp_path / "ckpt"
    shutil.copytree(checkpoints(base), ck)
    proc = run_hfx(["export", ck, tmp_path / "out", "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)


STRUCTURAL = [b for b in BAD if b.broken_safetensors]


@pytest.mark.parametrize("bad", STRUCTURAL, ids=[b.id for b in STRUCTURAL])
def test_reference_loader_rejects(checkpoints, tmp_path, bad):
    """Harness sanity: the Python safetensors library refuses each structurally broken file."""
    from safetensors.numpy import load_file

    ck, _ = _prepare(checkpoints, tmp_path, bad)
    with pytest.raises(Exception):
        load_file(str(ck / bad.broken_safetensors))


@pytest.mark.parametrize("fmt, data_file", [("onnx", "model.onnx.data"), ("openvino", "model.bin")])
def test_refused_write_is_reported_and_leaves_nothing(checkpoints, tmp_path, fmt, data_file):
    """A write the operating system refuses (a file-size limit here, as a full disk would) fails
    the export with exit 1 and a message naming the weights file, which a second thread writes,
    and leaves no files behind."""
    import resource
    import signal
    import subprocess

    from conftest import hfx_bin

    args = [str(hfx_bin()), "export", str(checkpoints("llama_default")), "", "--format", fmt]
    # the limit: above every other file the export writes, below the weights file
    args[3] = str(tmp_path / "unlimited")
    assert subprocess.run(args, capture_output=True, timeout=120).returncode == 0
    sizes = {p.name: p.stat().st_size for p in (tmp_path / "unlimited").iterdir()}
    limit = max(v for k, v in sizes.items() if k != data_file) + 1
    assert sizes[data_file] > limit, sizes

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "new" / "out"  # its parent is missing too: the export makes, then removes, both
    args[3] = str(out)
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size)
    assert proc.returncode == 1, describe(proc)
    # the reason the system gave (EFBIG), not a stale one from a later call
    assert data_file in proc.stderr and "write failed: File too large" in proc.stderr, describe(proc)
    assert not (tmp_path / "new").exists(), [str(p) for p in _files_under(tmp_path / "new")]
    assert not [p.name for p in tmp_path.iterdir() if ".hfx-" in p.name]


# ---- encoder-decoder checkpoints (src/arch/seq2seq.c) ------------------------------------------

def _s2s_drop_tensor(name):
    def mutate(ck: Path):
        from safetensors.torch import load_file, save_file

        weights = load_file(ck / ST)
        del weights[name]
        save_file(weights, ck / ST, metadata={"format": "pt"})
        return ("ckpt", name, "missing")
    return mutate


def _s2s_config(update, *says):
    def mutate(ck: Path):
        _edit_config(ck, lambda c: c.update(update))
        return ("config.json", *says)
    return mutate


S2S_BAD = [
    ("bart", "heads-do-not-divide", _s2s_config({"encoder_attention_heads": 5}, "d_model", "5")),
    ("bart", "activation", _s2s_config({"activation_function": "bogus_act"}, "activation_function", "bogus_act")),
    ("bart", "layers-missing", _s2s_config({"decoder_layers": None}, "decoder_layers")),
    ("marian_separate", "shared-vocab-mismatch", _s2s_config({"share_encoder_decoder_embeddings": True},
                                                           "decoder_vocab_size")),
    ("t5", "too-few-buckets", _s2s_config({"relative_attention_num_buckets": 2}, "relative_attention_num_buckets")),
    ("t5", "max-distance-too-short", _s2s_config({"relative_attention_max_distance": 2}, "relative_attention_max_distance")),
    ("t5", "feed-forward", _s2s_config({"feed_forward_proj": "gated-bogus"}, "feed_forward_proj", "gated-bogus")),
    ("whisper", "mels-missing", _s2s_config({"num_mel_bins": None}, "num_mel_bins")),
    ("whisper", "conv-weight-missing", _s2s_drop_tensor("model.encoder.conv1.weight")),
    ("t5_v11", "relative-bias-missing", _s2s_drop_tensor("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight")),
    ("m2m100", "cross-attention-missing", _s2s_drop_tensor("model.decoder.layers.1.encoder_attn.k_proj.weight")),
]


@pytest.mark.parametrize("base,what,mutate", S2S_BAD, ids=[f"{b}-{w}" for b, w, _ in S2S_BAD])
def test_bad_encoder_decoder(tmp_path, base, what, mutate):
    """A broken encoder-decoder checkpoint: exit 2, one message naming the file and the field or
    tensor, nothing written — for a plain export and for generation."""
    import shutil

    import seq2seq_models

    ck = seq2seq_models.save_checkpoint(base, tmp_path / "made")
    shutil.copytree(ck, tmp_path / "ckpt")
    says = mutate(tmp_path / "ckpt")
    for extra in ((), ("--for-generation",)):
        out = tmp_path / "out"
        proc = run_hfx(["export", tmp_path / "ckpt", out, "--format", "onnx", "--dynamic", *extra])
        assert proc.returncode == 2, f"{base} {what} {extra}\n" + describe(proc)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert 1 <= len(lines) <= MAX_MESSAGE_LINES, proc.stderr
        missing = [s for s in says if not _contains(proc.stderr, s)]
        assert not missing, f"{base} {what}: stderr lacks {missing}:\n{proc.stderr}"
        assert not out.exists(), f"{base} {what}: {out} left behind"
