"""Helpers of test_generation.py: generation exports cached per session, transformers' greedy
generate() as the reference, running examples/generate_onnx.py, and comparing generations.

See docs/GENERATION.md for the contract under test.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import models
from conftest import PARITY_ATOL, REPO, assert_logits_close, describe, run_hfx

GENERATE_SCRIPT = REPO / "examples" / "generate_onnx.py"

# The architectures of the foundation: Llama, Mistral with a sliding window (4) shorter than the
# prompts, Qwen2 (q/k/v bias) with and without a sliding layer, Qwen3 (q/k norms, head_dim 32).
GEN_VARIANTS = ("llama_default", "mistral_swa", "qwen2", "qwen2_swa", "qwen3")

MAX_CACHE_LEN = 64
FIXED_SEQ = 12  # prefill sequence length of the static-shape exports
FIXED_QUERY = 4  # query length of the static-shape multi-token decode
NEW_TOKENS = 32


@dataclasses.dataclass(frozen=True)
class Mode:
    """One way to export for generation."""

    name: str
    flags: tuple
    static_cache: bool
    multi_token: bool
    fixed_batch: int | None = None  # static shapes: the only batch the export accepts

    @property
    def components(self) -> tuple:
        return ("decode",) if self.multi_token else ("prefill", "decode")


def _mode(name, *flags, static_cache=False, multi_token=False, fixed_batch=None):
    return Mode(name, ("--for-generation",) + flags, static_cache, multi_token, fixed_batch)


_STATIC = ("--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN))
MODES = {m.name: m for m in (
    _mode("dyncache", "--cache", "dynamic", "--dynamic"),
    _mode("dyncache-mtd", "--multi-token-decode", "--dynamic", multi_token=True),
    _mode("static", *_STATIC, "--dynamic", static_cache=True),
    _mode("static-mtd", *_STATIC, "--multi-token-decode", "--dynamic", static_cache=True, multi_token=True),
    # static shapes: batch and prefill length fixed (prompts left-padded to FIXED_SEQ), M fixed
    _mode("static-fixed-b1", *_STATIC, "--batch-size", "1", "--sequence-length", str(FIXED_SEQ),
          static_cache=True, fixed_batch=1),
    _mode("static-fixed-b3", *_STATIC, "--batch-size", "3", "--sequence-length", str(FIXED_SEQ),
          static_cache=True, fixed_batch=3),
    # a multi-token decode of static shapes (the seed's frozen one): every call FIXED_QUERY tokens, the loop feeding
    # the prompt in pieces of it and each new token left-padded to it
    _mode("static-mtd-fixed-b3", *_STATIC, "--multi-token-decode", "--batch-size", "3", "--sequence-length",
          str(FIXED_QUERY), static_cache=True, multi_token=True, fixed_batch=3),
)}


# ---- exports ----------------------------------------------------------------------------------


class GenExports:
    """`hfx export MODEL OUT --format FMT FLAGS...` (onnx unless told) per (model dir, flags), once per session; a
    failed export fails every test that asks for it, with hfx's message."""

    def __init__(self, root: Path, checkpoints, fmt: str = "onnx"):
        self.root, self.checkpoints, self.fmt = root, checkpoints, fmt
        self._done: dict = {}
        self._regen: dict = {}

    def __call__(self, name_or_dir, *flags: str) -> Path:
        model_dir = Path(name_or_dir) if isinstance(name_or_dir, Path) else self.checkpoints(name_or_dir)
        key = (str(model_dir), flags)
        if key not in self._done:
            out = self.root / f"{model_dir.name}-{len(self._done)}"
            proc = run_hfx(["export", model_dir, out, "--format", self.fmt, "--quiet", *flags])
            if proc.returncode != 0:
                self._done[key] = "export failed:\n" + describe(proc)
            elif not (out / "export.json").is_file():
                self._done[key] = "export exited 0 but wrote no export.json\n" + describe(proc)
            else:
                self._done[key] = out
        result = self._done[key]
        if isinstance(result, str):
            pytest.fail(result, pytrace=False)
        return result

    def mode(self, variant: str, mode: Mode) -> Path:
        return self(variant, *mode.flags)

    def with_generation_config(self, out_dir: Path, gen: dict) -> Path:
        """A copy of the export directory whose generation_config.json is `gen` (the decode loop
        reads EOS / pad from there)."""
        key = (str(out_dir), json.dumps(gen, sort_keys=True))
        if key not in self._regen:
            dst = self.root / f"{out_dir.name}-gen{len(self._regen)}"
            shutil.copytree(out_dir, dst)
            (dst / "generation_config.json").write_text(json.dumps(gen) + "\n")
            self._regen[key] = dst
        return self._regen[key]


# ---- prompts and the reference ---------------------------------------------------------------


def prompts(lengths, vocab_size: int, seed: int = 0) -> list:
    rng = np.random.default_rng([seed, *lengths])
    return [rng.integers(3, vocab_size, size=n).tolist() for n in lengths]


def left_pad(rows, pad_id: int, length: int | None = None):
    """(ids, mask) int64 [B, length], real tokens on the right (as the decode loop pads)."""
    length = length or max(map(len, rows))
    ids = np.full((len(rows), length), pad_id, np.int64)
    mask = np.zeros((len(rows), length), np.int64)
    for r, row in enumerate(rows):
        ids[r, length - len(row):] = row
        mask[r, length - len(row):] = 1
    return ids, mask


def positions(mask: np.ndarray) -> np.ndarray:
    """generate()'s position ids: cumsum(mask) - 1, 0 on padding."""
    return np.clip(np.cumsum(mask, axis=-1) - 1, 0, None).astype(np.int64)


def eos_pad(gen: dict):
    """(eos ids, pad id) as generate() resolves them: pad defaults to the first EOS id."""
    eos = gen.get("eos_token_id")
    eos = [] if eos is None else (list(eos) if isinstance(eos, list) else [eos])
    pad = gen.get("pad_token_id")
    return eos, (pad if pad is not None else (eos[0] if eos else models.PAD_TOKEN))


class References:
    """transformers' greedy generate() (eager, float32), cached per session."""

    def __init__(self, checkpoints):
        self.checkpoints = checkpoints
        self._models: dict = {}
        self._gens: dict = {}

    def model(self, name: str):
        if name not in self._models:
            self._models[name] = models.load_reference_model(self.checkpoints(name))
        return self._models[name]

    def generate(self, name: str, rows, gen: dict, max_new_tokens: int = NEW_TOKENS, pad_to=None,
                 **generate_kwargs):
        """(tokens [B, n], logits [n, B, vocab]) of model.generate on `rows` left-padded to
        pad_to (default: the longest row)."""
        key = (name, json.dumps(rows), json.dumps(gen, sort_keys=True), max_new_tokens, pad_to,
               json.dumps(generate_kwargs, sort_keys=True))
        if key not in self._gens:
            eos, pad = eos_pad(gen)
            ids, mask = left_pad(rows, pad, pad_to)
            # eos_token_id=None must be passed explicitly: a GenerationConfig(eos_token_id=None)
            # is merged with the checkpoint's generation_config.json and gets its EOS back.
            with torch.no_grad():
                out = self.model(name).generate(
                    torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                    max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=eos or None,
                    pad_token_id=pad, output_logits=True, return_dict_in_generate=True,
                    **generate_kwargs)
            tokens = out.sequences[:, ids.shape[1]:].numpy()
            logits = torch.stack(out.logits).to(torch.float32).numpy()
            assert logits.shape[:2] == (tokens.shape[1], len(rows)), (logits.shape, tokens.shape)
            self._gens[key] = (tokens, logits)
        return self._gens[key]

    def forward(self, name: str, ids, mask) -> np.ndarray:
        """Logits [B, seq, vocab] of one no-cache forward (generate's position ids)."""
        with torch.no_grad():
            out = self.model(name)(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                                   position_ids=torch.from_numpy(positions(mask)), use_cache=False)
        return out.logits.to(torch.float32).numpy()


# ---- running the decode loop ------------------------------------------------------------------


@dataclasses.dataclass
class LoopResult:
    proc: subprocess.CompletedProcess
    tokens: list | None = None     # one list per prompt
    logits: np.ndarray | None = None  # [steps, B, vocab]


def run_loop(out_dir: Path, rows, max_new_tokens: int = NEW_TOKENS, logits_file: Path | None = None,
             timeout: float = 120, script: Path = GENERATE_SCRIPT, audio=None) -> LoopResult:
    """`python examples/generate_onnx.py OUT_DIR --input-ids ... --max-new-tokens N` (this venv's
    python; `script`: another loop with the same command line; `audio`: WAV files given as --audio instead of
    the rows). Parses stdout when it exits 0."""
    source = (["--audio", *map(str, audio)] if audio is not None
              else ["--input-ids", ";".join(",".join(str(t) for t in row) for row in rows)])
    cmd = [sys.executable, str(script), str(out_dir), *source, "--max-new-tokens", str(max_new_tokens)]
    if logits_file is not None:
        cmd += ["--print-logits", str(logits_file)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"`{' '.join(cmd)}` did not finish in {timeout} s\nstderr:\n{e.stderr}", pytrace=False)
    result = LoopResult(proc)
    if proc.returncode == 0:
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        result.tokens = [json.loads(line) for line in lines]
        if logits_file is not None:
            with np.load(logits_file) as npz:
                result.logits = npz["logits"]
    return result


def compare_generation(got_tokens, got_logits, want_tokens, want_logits, label: str,
                       atol: float = PARITY_ATOL, runtime: str = "onnx") -> None:
    """Token for token, and the per-step logits up to and including the first step whose token
    differs (after it the inputs differ, so later logits say nothing more). `runtime` names the
    side under test in the messages (ovutil passes "openvino")."""
    tag = "" if runtime == "onnx" else f"[{runtime}] "
    got_tokens = [list(map(int, row)) for row in got_tokens]
    want_tokens = [list(map(int, row)) for row in want_tokens]
    assert len(got_tokens) == len(want_tokens), f"{tag}{label}: {len(got_tokens)} rows printed, want {len(want_tokens)}"
    n_want = len(want_tokens[0])
    first = None  # (step, row, got, want) of the first difference
    for step in range(max([n_want, *map(len, got_tokens)])):
        for r in range(len(want_tokens)):
            g = got_tokens[r][step] if step < len(got_tokens[r]) else None
            w = want_tokens[r][step] if step < n_want else None
            if g != w:
                first = (step, r, g, w)
                break
        if first:
            break
    steps = n_want if first is None else min(first[0] + 1, n_want)
    if got_logits is not None and steps:
        assert got_logits.shape[1:] == want_logits.shape[1:], (
            f"{tag}{label}: logits per step {got_logits.shape[1:]}, transformers {want_logits.shape[1:]}")
        steps = min(steps, got_logits.shape[0])
        # [steps, B, V] -> [B, steps, V]: assert_logits_close reports (batch, position=step)
        assert_logits_close(got_logits[:steps].transpose(1, 0, 2), want_logits[:steps].transpose(1, 0, 2),
                            f"{tag}{label} per-step logits (steps 0..{steps - 1})", atol)
    if first is not None:
        step, r, g, w = first
        detail = ""
        if got_logits is not None and step < min(len(got_logits), len(want_logits)):
            top = np.sort(want_logits[step, r])[-2:]
            detail = (f"; transformers' top-2 margin at that step {top[1] - top[0]:.3g}, "
                      f"max logit diff there {np.abs(got_logits[step, r] - want_logits[step, r]).max():.3g}")
        pytest.fail(f"{tag}{label}: first differing token at step {step}, row {r}: {runtime} {g} vs transformers {w} "
                    f"({runtime} lengths {[len(t) for t in got_tokens]}, transformers {n_want}){detail}\n"
                    f"{runtime + ':':<14}{got_tokens}\ntransformers: {want_tokens}", pytrace=False)


# ---- direct ONNX Runtime use -------------------------------------------------------------------


def manifest(out_dir: Path) -> dict:
    return json.loads((out_dir / "export.json").read_text())


def component_path(out_dir: Path, name: str) -> Path:
    return out_dir / manifest(out_dir)["components"][name]["file"]


def cache_geometry(session) -> dict:
    """{cache input name: (kv_heads, head_dim, numpy dtype)} from the graph's inputs."""
    dtypes = {"tensor(float)": np.float32, "tensor(float16)": np.float16}
    out = {}
    for i in session.get_inputs():
        if "past_key_values." in i.name:
            out[i.name] = (i.shape[1], i.shape[3], dtypes[i.type])
    return out


def genai_greedy(model, prompt, new_tokens):
    """onnxruntime-genai's greedy tokens after `prompt` from an og.Model (at most new_tokens; genai
    ends the sequence before the EOS it stops at)."""
    import onnxruntime_genai as og
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + new_tokens, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(np.array([prompt], dtype=np.int32))
    while not gen.is_done():
        gen.generate_next_token()
    return [int(t) for t in gen.get_sequence(0)][len(prompt):]
