"""Hub ids resolve through the local Hugging Face cache (src/hf/hub.c), never the network: a
cache tree laid out as huggingface_hub lays it out (blobs, snapshots/<commit> of symlinks,
refs/<branch>), which huggingface_hub itself is asked to read back first."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from conftest import describe, hfx_bin, run_hfx

COMMITS = {"main": "a" * 40, "v2": "b" * 40}


def _cache(root: Path, repo: str, checkpoint: Path) -> Path:
    """root/models--org--name with the checkpoint's files at both commits (v2's config differs)."""
    folder = root / ("models--" + repo.replace("/", "--"))
    for branch, commit in COMMITS.items():
        snap = folder / "snapshots" / commit
        snap.mkdir(parents=True)
        for f in sorted(checkpoint.iterdir()):
            data = f.read_bytes()
            if branch == "v2" and f.name == "generation_config.json":
                data = data.replace(b"{", b'{\n  "_note": "v2",', 1)
            blob = folder / "blobs" / hashlib.sha256(data).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            (snap / f.name).symlink_to(os.path.relpath(blob, snap))
        (folder / "refs").mkdir(exist_ok=True)
        (folder / "refs" / branch).write_text(commit)
    return folder


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")}
    env.update(extra)
    return env


def _run(args, env):
    import subprocess
    return subprocess.run([str(hfx_bin())] + [str(a) for a in args], capture_output=True, text=True, timeout=120,
                          env=env, stdin=subprocess.DEVNULL)


@pytest.fixture
def cached(checkpoints, tmp_path):
    from huggingface_hub import try_to_load_from_cache

    hub = tmp_path / "home" / "hub"
    _cache(hub, "tiny-org/tiny-llama", checkpoints("llama_default"))
    # the layout is the real one: huggingface_hub finds the files in it
    found = try_to_load_from_cache("tiny-org/tiny-llama", "config.json", cache_dir=str(hub))
    assert isinstance(found, str) and COMMITS["main"] in found, found
    return hub


@pytest.mark.parametrize("where", ["HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"])
def test_hub_id_exports_from_the_cache(checkpoints, cached, tmp_path, where):
    home = cached.parent
    env = _env()
    if where == "HF_HUB_CACHE":
        env["HF_HUB_CACHE"] = str(cached)
    elif where == "HF_HOME":
        env["HF_HOME"] = str(home)
    elif where == "XDG_CACHE_HOME":
        (tmp_path / "xdg").mkdir()
        shutil.move(str(home), str(tmp_path / "xdg" / "huggingface"))
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    else:
        (tmp_path / "h" / ".cache").mkdir(parents=True)
        shutil.move(str(home), str(tmp_path / "h" / ".cache" / "huggingface"))
        env["HOME"] = str(tmp_path / "h")
    out = tmp_path / "out"
    proc = _run(["export", "tiny-org/tiny-llama", out, "--format", "onnx", "--quiet"], env)
    assert proc.returncode == 0, describe(proc)
    ref = tmp_path / "ref"
    proc = run_hfx(["export", checkpoints("llama_default"), ref, "--format", "onnx", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    assert (out / "model.onnx").read_bytes() == (ref / "model.onnx").read_bytes()
    assert (out / "model.onnx.data").read_bytes() == (ref / "model.onnx.data").read_bytes()


@pytest.mark.parametrize("revision", ["v2", COMMITS["v2"]], ids=["branch", "commit"])
def test_revision(cached, tmp_path, revision):
    out = tmp_path / "out"
    proc = _run(["export", "tiny-org/tiny-llama", out, "--format", "onnx", "--quiet", "--revision", revision],
                _env(HF_HUB_CACHE=str(cached)))
    assert proc.returncode == 0, describe(proc)
    assert '"_note": "v2"' in (out / "generation_config.json").read_text()


def test_inspect_hub_id(cached):
    proc = _run(["inspect", "tiny-org/tiny-llama"], _env(HF_HUB_CACHE=str(cached)))
    assert proc.returncode == 0 and "LlamaForCausalLM" in proc.stdout, describe(proc)


@pytest.mark.parametrize("model, revision", [("tiny-org/absent", None), ("tiny-org/tiny-llama", "no-such-branch")],
                         ids=["repo", "revision"])
def test_not_cached_names_the_paths_tried(cached, tmp_path, model, revision):
    args = ["export", model, tmp_path / "out", "--format", "onnx"] + (["--revision", revision] if revision else [])
    proc = _run(args, _env(HF_HUB_CACHE=str(cached)))
    assert proc.returncode == 2, describe(proc)
    assert str(cached) in proc.stderr and "does not download" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()
