"""An export is all-or-nothing (io/outdir.c): concurrent exports into one directory, signals, planted
symlinks, files in the way, re-exports over an earlier export, stale staging from killed runs.

The exports here are compared byte for byte with the same export run alone, and the directory's
content with the manifest's "files" list: what a reader of the output directory sees is always
one whole export (or the one before), never a mix."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import describe, hfx_bin, run_hfx

# Big enough that writing its weights takes a good fraction of a second (fp16 in, fp32 out:
# about 270 MB), so that a second export or a signal arrives while the first is writing.
BIG = dict(vocab=24000, hidden=640, layers=6, heads=10, kv_heads=2, intermediate=1792)


def _write_big_checkpoint(path: Path) -> Path:
    from safetensors.numpy import save_file

    c = BIG
    path.mkdir(parents=True)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": c["vocab"],
        "hidden_size": c["hidden"], "num_hidden_layers": c["layers"], "num_attention_heads": c["heads"],
        "num_key_value_heads": c["kv_heads"], "intermediate_size": c["intermediate"], "rms_norm_eps": 1e-5,
        "max_position_embeddings": 256, "tie_word_embeddings": False, "torch_dtype": "float16",
    }
    (path / "config.json").write_text(json.dumps(config, indent=2))
    rng = np.random.default_rng(0)
    h, d = c["hidden"], c["hidden"] // c["heads"]

    def w(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float16)

    tensors = {"model.embed_tokens.weight": w(c["vocab"], h), "lm_head.weight": w(c["vocab"], h),
               "model.norm.weight": np.ones(h, np.float16)}
    for i in range(c["layers"]):
        p = f"model.layers.{i}."
        tensors.update({
            p + "self_attn.q_proj.weight": w(h, h), p + "self_attn.k_proj.weight": w(c["kv_heads"] * d, h),
            p + "self_attn.v_proj.weight": w(c["kv_heads"] * d, h), p + "self_attn.o_proj.weight": w(h, h),
            p + "mlp.gate_proj.weight": w(c["intermediate"], h), p + "mlp.up_proj.weight": w(c["intermediate"], h),
            p + "mlp.down_proj.weight": w(h, c["intermediate"]),
            p + "input_layernorm.weight": np.ones(h, np.float16),
            p + "post_attention_layernorm.weight": np.ones(h, np.float16),
        })
    save_file(tensors, str(path / "model.safetensors"))
    return path


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    return _write_big_checkpoint(tmp_path_factory.mktemp("big") / "ckpt")


def _digest(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()}


def _assert_one_whole_export(out: Path) -> dict:
    """The directory holds exactly the files its manifest lists (plus what the test put there)."""
    manifest = json.loads((out / "export.json").read_text())
    files = set(manifest["files"])
    for comp in manifest["components"].values():
        assert comp["file"] in files, manifest
    present = {p.name for p in out.iterdir()}
    assert files <= present, f"missing {sorted(files - present)}"
    return manifest


def _staging_beside(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if ".hfx-stage-" in p.name) + \
        (sorted(p.name for p in out.iterdir() if p.name.startswith(".hfx-")) if out.is_dir() else [])


# ---- concurrency ----------------------------------------------------------------------------------


VARIANTS = [["--format", "onnx", "--dynamic"], ["--format", "onnx", "--dynamic", "--dtype", "fp16"],
            ["--format", "openvino", "--dynamic"], ["--format", "onnx", "--dynamic", "--for-generation"]]


def test_concurrent_exports_into_one_directory_end_in_one_whole_export(big, tmp_path):
    """Four different exports started together into one directory: each waits for the one
    before (the directory is locked), all succeed, and the directory ends as exactly one of them,
    byte for byte what that export writes alone."""
    alone = {}
    for i, args in enumerate(VARIANTS):
        proc = run_hfx(["export", big, tmp_path / f"alone{i}", "--quiet", *args])
        assert proc.returncode == 0, describe(proc)
        alone[i] = _digest(tmp_path / f"alone{i}")
    out = tmp_path / "shared"
    procs = [subprocess.Popen([str(hfx_bin()), "export", str(big), str(out), "--quiet", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for args in VARIANTS]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    assert all(rc == 0 for rc, _ in results), results
    _assert_one_whole_export(out)
    final = _digest(out)
    assert any(final == d for d in alone.values()), "the directory matches none of the exports run alone"
    assert not _staging_beside(out), _staging_beside(out)


# ---- signals ----------------------------------------------------------------------------------------


def _export_until_staging(checkpoint: Path, out: Path) -> subprocess.Popen:
    """Start an ONNX export into `out` and return once its staging directory exists beside it
    (the weights are being written then), or once it has ended."""
    p = subprocess.Popen([str(hfx_bin()), "export", str(checkpoint), str(out), "--format", "onnx", "--dynamic"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not [x for x in out.parent.iterdir() if ".hfx-stage-" in x.name] and p.poll() is None:
        assert time.monotonic() < deadline, "the export never started staging"
        time.sleep(0.002)
    return p


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("previous", [False, True], ids=["new-dir", "over-previous"])
def test_signal_leaves_the_directory_as_it_was(big, tmp_path, sig, previous):
    """SIGINT/SIGTERM while the weights are written: the export removes what it staged and the
    process ends by that signal; the directory is as before (absent, or the previous export)."""
    out = tmp_path / "out"
    before = None
    if previous:
        proc = run_hfx(["export", big, out, "--format", "openvino", "--quiet"])
        assert proc.returncode == 0, describe(proc)
        before = _digest(out)
    p = _export_until_staging(big, out)
    p.send_signal(sig)
    rc = p.wait(timeout=120)
    stderr = p.stderr.read()
    if rc == 0:
        pytest.fail(f"the export finished before the signal arrived; make BIG bigger\n{stderr}")
    assert rc == -sig, f"exit {rc}, wanted death by signal {sig}\n{stderr}"
    assert "stopped by signal" in stderr, stderr
    assert not _staging_beside(out), _staging_beside(out)
    if previous:
        assert _digest(out) == before, "the previous export changed"
    else:
        assert not out.exists(), sorted(p.name for p in out.iterdir())


def test_staging_left_by_a_killed_export_is_removed_by_the_next(big, tmp_path, checkpoints):
    """SIGKILL cannot be caught: the staging it leaves goes with the next export into the same
    directory (and the temporaries of earlier hfx versions with it)."""
    out = tmp_path / "out"
    out.mkdir()
    stale = tmp_path / ".out.hfx-stage-00000000deadbeef"
    stale.mkdir()
    (stale / "model.onnx.data").write_bytes(b"x" * 100)
    (out / ".hfx-stage-0123").mkdir()
    (out / ".hfx-tmp-model.onnx").write_bytes(b"old temporary")
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    assert not stale.exists() and not _staging_beside(out), _staging_beside(out)
    _assert_one_whole_export(out)


# ---- hostile output folders -----------------------------------------------------------------------


def test_planted_symlink_redirects_nothing(checkpoints, tmp_path):
    """Symlinks planted under hfx's old temporary names and beside the directory point nowhere
    the export writes: the victim is untouched."""
    victim = tmp_path / "victim"
    victim.write_text("V\n")
    out = tmp_path / "out"
    out.mkdir()
    for name in ("config.json", "model.onnx", "model.onnx.data", "model.onnx_data", "export.json", "export_config.json"):
        (out / f".hfx-tmp-{name}").symlink_to(victim)
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    assert victim.read_text() == "V\n"
    _assert_one_whole_export(out)


def test_a_directory_in_the_way_fails_before_anything_changes(checkpoints, tmp_path):
    """A directory named like a file the export writes: exit 2 naming it, and the directory is
    exactly as it was (no file renamed into place)."""
    out = tmp_path / "out"
    (out / "export.json").mkdir(parents=True)
    (out / "keep.txt").write_text("keep\n")
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert "export.json" in proc.stderr and "not a file" in proc.stderr, describe(proc)
    assert sorted(p.name for p in out.iterdir()) == ["export.json", "keep.txt"]
    assert not _staging_beside(out)


def test_missing_parents_are_created(checkpoints, tmp_path):
    """OUT_DIR's missing parents are made (a failed export removes them again: see
    test_bad_input.py's refused-write test)."""
    out = tmp_path / "a" / "b" / "out"
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    _assert_one_whole_export(out)


# ---- re-exports -----------------------------------------------------------------------------------


def test_reexport_replaces_the_previous_export_and_keeps_user_files(checkpoints, tmp_path):
    """A plain OpenVINO export over an ONNX generation export: prefill.onnx, decode.onnx and
    model.onnx_data go (they were the previous export's, its manifest says so); the user's files,
    folders and links stay; `hfx inspect` then shows only the new graph."""
    out = tmp_path / "out"
    ck = checkpoints("llama_default")
    proc = run_hfx(["export", ck, out, "--format", "onnx", "--dynamic", "--for-generation", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    (out / "notes.txt").write_text("mine\n")
    (out / "mine").mkdir()
    (out / "mine" / "data.bin").write_bytes(b"\x01\x02")
    (out / "link").symlink_to("notes.txt")
    proc = run_hfx(["export", ck, out, "--format", "openvino", "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    manifest = _assert_one_whole_export(out)
    present = {p.name for p in out.iterdir()}
    assert present == set(manifest["files"]) | {"notes.txt", "mine", "link"}, sorted(present)
    assert (out / "notes.txt").read_text() == "mine\n" and (out / "mine" / "data.bin").read_bytes() == b"\x01\x02"
    assert os.readlink(out / "link") == "notes.txt"
    shown = run_hfx(["inspect", out])
    assert shown.returncode == 0, describe(shown)
    assert "model.xml" in shown.stdout and ".onnx" not in shown.stdout, shown.stdout


def test_failed_reexport_keeps_the_previous_export_whole(checkpoints, tmp_path):
    out = tmp_path / "out"
    ck = checkpoints("llama_default")
    proc = run_hfx(["export", ck, out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    before = _digest(out)
    proc = run_hfx(["export", ck, out, "--format", "onnx", "--for-generation", "--cache", "static",
                    "--max-cache-len", "4"])
    assert proc.returncode == 2, describe(proc)
    assert _digest(out) == before
    assert not _staging_beside(out)


# ---- a checkpoint that shrinks under the export ------------------------------------------------------


def test_checkpoint_truncated_during_export_is_an_error_not_a_signal(big, tmp_path, checkpoints):
    """The weights file is cut to a third while its weights are written: the export ends with
    exit 1 and a message naming the file (a size check before each chunk; the CLI's SIGBUS
    handler says the same if the cut lands between a check and the read), not a crash; staging
    it leaves is gone after the next export into the directory."""
    import shutil

    ck = tmp_path / "ckpt"
    shutil.copytree(big, ck)
    out = tmp_path / "out"
    p = _export_until_staging(ck, out)
    weights = ck / "model.safetensors"
    os.truncate(weights, weights.stat().st_size // 3)
    rc = p.wait(timeout=120)
    stderr = p.stderr.read()
    if rc == 0:
        pytest.fail(f"the export finished before the truncation; make BIG bigger\n{stderr}")
    assert rc == 1, f"exit {rc} (a negative code is death by signal)\n{stderr}"
    assert "shrank" in stderr and "model.safetensors" in stderr, stderr
    assert not out.exists() or not (out / "export.json").exists()
    proc = run_hfx(["export", checkpoints("llama_default"), out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    assert not _staging_beside(out), _staging_beside(out)


# ---- an unprivileged exporter ---------------------------------------------------------------------
# hfx runs as uid/gid 65534 (nobody) against folders root made: what the user may not replace is
# refused before anything is staged, and what it may replace keeps its owner.

NOBODY = 65534


@pytest.fixture
def unprivileged(checkpoints, tmp_path):
    """(run, place, checkpoint): `run(args)` runs a copy of hfx as nobody; `place` is a folder
    nobody may write in (mode 777), beside a copy of the checkpoint nobody can read."""
    import shutil
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("needs root: the test switches to uid 65534 to be another user")
    root = Path(tempfile.mkdtemp(prefix="hfx-nobody-", dir="/tmp"))
    try:
        root.chmod(0o755)
        binary = root / "hfx"
        shutil.copy2(hfx_bin(), binary)
        ck = root / "ckpt"
        shutil.copytree(checkpoints("llama_default"), ck)
        for p in [ck, *ck.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        place = root / "place"
        place.mkdir()
        place.chmod(0o777)

        def run(args):
            return subprocess.run([str(binary)] + [str(a) for a in args], capture_output=True, text=True,
                                  timeout=300, stdin=subprocess.DEVNULL, user=NOBODY, group=NOBODY,
                                  extra_groups=[], cwd=root)

        yield run, place, ck
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _tree(d: Path) -> dict:
    return {str(p.relative_to(d)): (p.stat().st_mode, p.stat().st_uid, p.read_bytes() if p.is_file() else None)
            for p in sorted(d.rglob("*"))}


def test_a_directory_the_user_cannot_write_is_refused_and_nothing_is_left(unprivileged):
    """OUT_DIR is root's, mode 555, in a folder nobody may write: replacing it would be possible
    (the parent is writable) but is not the user's to do. Exit 2 naming the directory; the
    directory is as it was and no staging is left beside it or in it."""
    run, place, ck = unprivileged
    out = place / "out"
    out.mkdir()
    (out / "root.txt").write_text("root's\n")
    out.chmod(0o555)
    before = (out.stat().st_ino, _tree(out))
    proc = run(["export", ck, out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert str(out) in proc.stderr and "cannot write" in proc.stderr, proc.stderr
    assert (out.stat().st_ino, _tree(out)) == before
    assert not _staging_beside(out), _staging_beside(out)


def test_another_users_writable_directory_keeps_its_owner(unprivileged):
    """OUT_DIR is root's but writable by all (777): the export goes in, and the directory stays
    root's (the swap would have made it nobody's): the files are moved in one by one."""
    run, place, ck = unprivileged
    out = place / "out"
    out.mkdir()
    out.chmod(0o777)
    ino = out.stat().st_ino
    proc = run(["export", ck, out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    _assert_one_whole_export(out)
    assert out.stat().st_uid == 0 and out.stat().st_ino == ino and (out.stat().st_mode & 0o777) == 0o777
    assert (out / "export.json").stat().st_uid == NOBODY
    assert not _staging_beside(out), _staging_beside(out)


def test_another_users_file_in_a_sticky_directory_is_refused_before_anything_moves(unprivileged):
    """A sticky OUT_DIR (1777, root's) holds root's model.onnx, the name the export writes: nobody
    cannot replace it, so the export fails with exit 2 naming it, before any file moves in."""
    run, place, ck = unprivileged
    out = place / "out"
    out.mkdir()
    out.chmod(0o1777)
    (out / "model.onnx").write_bytes(b"root's model")
    before = _tree(out)
    proc = run(["export", ck, out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert str(out / "model.onnx") in proc.stderr and "another user" in proc.stderr, proc.stderr
    assert _tree(out) == before
    assert not _staging_beside(out), _staging_beside(out)


def test_a_kept_read_only_folder_survives_reexports(unprivileged):
    """The user's own read-only folder (555) in their OUT_DIR is carried across two re-exports
    with its mode and content, and no staging (which would hold an unremovable copy) is left."""
    run, place, ck = unprivileged
    out = place / "out"
    proc = run(["export", ck, out, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    kept = out / "kept"
    subprocess.run(["mkdir", str(kept)], check=True, user=NOBODY, group=NOBODY, extra_groups=[])
    subprocess.run(["sh", "-c", f"echo mine > {kept}/a.txt && chmod 555 {kept}"], check=True,
                   user=NOBODY, group=NOBODY, extra_groups=[])
    for fmt in ["openvino", "onnx"]:
        proc = run(["export", ck, out, "--format", fmt, "--quiet"])
        assert proc.returncode == 0, describe(proc)
        _assert_one_whole_export(out)
        assert (kept / "a.txt").read_text() == "mine\n" and (kept.stat().st_mode & 0o777) == 0o555
        assert kept.stat().st_uid == NOBODY
        assert not _staging_beside(out), _staging_beside(out)
