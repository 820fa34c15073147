#!/usr/bin/env python3
"""hfx benchmarks: export time, peak memory and bytes written against the Python exporters and
the I/O floor, and the runtime speed of the exported graphs — every figure as a ratio to hfx and
to the floor measured in the same run (the machines are noisy; absolute numbers are not compared
across runs).

    make bench                       # all models, writes bench/results/<date>-<machine>.{json,md,png}
    python bench/run.py --models tiny --runs 1 --runtime-models ''
    python bench/run.py --models qwen3-0.6b --work DIR --skip-export   # runtimes only, on kept exports

Peers that pin an older transformers (optimum-onnx, optimum-intel) get virtualenvs of their own
(PEER_VENVS); a peer that cannot be installed or fails is reported with its reason, never dropped.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HFX = Path(os.environ.get("HFX_BIN", REPO / "build" / "hfx"))
CACHE = Path(os.environ.get("HFX_BENCH_CACHE", Path.home() / ".cache" / "hfx" / "bench"))
PY = sys.executable
SETTLE_S = 5  # quiet time before each timed export: the disk is still busy with the last one
TOOLS: list = []  # --tools: the rows to run (all when empty)
HFX_RUNS = 5  # hfx runs take a second or two: more of them steady the median

# Shapes with random weights (bf16 on disk), generated once, and a tiny model for overhead:
# Qwen3-0.6B (≈1.2 GB, tied head) and Llama-3.2-1B's shape with an untied 128,256-row head
# (≈3.0 GB, power-of-two dims). Each: (transformers' family, its config).
MODELS = {
    "tiny": None,  # examples/tiny-llama
    "qwen3-0.6b": ("Qwen3", dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                                 num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                 max_position_embeddings=40960, tie_word_embeddings=True, rope_theta=1000000.0)),
    "llama-1b": ("Llama", dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                               num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                               max_position_embeddings=131072, tie_word_embeddings=False, rope_theta=500000.0,
                               rms_norm_eps=1e-5)),
    # Llama-3.2-3B's shape (≈6.4 GB, tied head): how cost grows between 0.6B and 8B
    "llama-3b": ("Llama", dict(vocab_size=128256, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                               num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                               max_position_embeddings=131072, tie_word_embeddings=True, rope_theta=500000.0,
                               rms_norm_eps=1e-5)),
}


TOKENIZER = (
    "import sys, json\n"
    "from tokenizers import Tokenizer, models, pre_tokenizers\n"
    "from transformers import PreTrainedTokenizerFast\n"
    "out, vocab = sys.argv[1], int(sys.argv[2])\n"
    "tok = Tokenizer(models.WordLevel({f't{i}': i for i in range(vocab)}, unk_token='t0'))\n"
    "tok.pre_tokenizer = pre_tokenizers.Whitespace()\n"
    "PreTrainedTokenizerFast(tokenizer_object=tok, unk_token='t0', eos_token='t2', bos_token='t1').save_pretrained(out)\n"
)


def with_tokenizer(out: Path) -> Path:
    """A word-level tokenizer over the whole vocabulary: the onnxruntime-genai builder refuses a
    folder without one, and random-weight models have none."""
    if not (out / "tokenizer.json").exists():
        vocab = json.loads((out / "config.json").read_text())["vocab_size"]
        subprocess.run([PY, "-c", TOKENIZER, out, str(vocab)], check=True)
    return out


def legacy_rope_keys(out: Path) -> Path:
    """Also state rope_theta at the top level of config.json, where transformers < 5 reads it
    (5.x writes it only inside rope_parameters): optimum-onnx runs on transformers 4.57, which
    would otherwise build its graph with the default theta and disagree with every other tool.
    Same model for 5.x, which reads rope_parameters first."""
    cfg_path = out / "config.json"
    cfg = json.loads(cfg_path.read_text())
    theta = (cfg.get("rope_parameters") or {}).get("rope_theta")
    if theta is not None and cfg.get("rope_theta") != theta:
        cfg["rope_theta"] = theta
        cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")
    return out


def model_dir(name: str) -> Path:
    out = CACHE / name
    if MODELS[name] is None:
        if not out.exists():
            shutil.copytree(REPO / "examples" / "tiny-llama", out)
        return with_tokenizer(out)
    if (out / "model.safetensors").exists() or (out / "model.safetensors.index.json").exists():
        return legacy_rope_keys(with_tokenizer(out))
    print(f"bench: generating {name} with random weights into {out} (once)", file=sys.stderr)
    family, config = MODELS[name]
    code = (
        "import sys, json, torch\n"
        f"from transformers import {family}Config as Config, {family}ForCausalLM as Model\n"
        "torch.manual_seed(0)\n"
        f"cfg = Config(**json.loads({json.dumps(json.dumps(config))}))\n"
        "torch.set_default_dtype(torch.bfloat16)  # initialized in bf16: no float32 copy of a large model\n"
        "with torch.device('cpu'):\n"
        "    m = Model(cfg)\n"
        f"m.save_pretrained({str(out)!r}, max_shard_size='5GB')\n"
    )
    subprocess.run([PY, "-c", code], check=True)
    return legacy_rope_keys(with_tokenizer(out))


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(cmd: list, out_dir: Path | None) -> dict:
    """Wall time, CPU time (user + system of the whole tree: unlike wall time, barely touched by
    the disk's mood), peak RSS of the largest process in the tree (ru_maxrss of waited children,
    taken in a fresh wrapper so earlier runs do not count) and bytes written."""
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'rc': r.returncode, 'seconds': dt, 'cpu_seconds': u.ru_utime + u.ru_stime,\n"
        "                  'peak_rss': u.ru_maxrss * 1024, 'stderr': r.stderr[-2000:]}))\n"
    )
    if out_dir is not None and out_dir.exists():
        shutil.rmtree(out_dir)
    os.sync()  # the previous run's writeback is not charged to this one,
    time.sleep(SETTLE_S)  # nor its deleted blocks being discarded by the (virtual) disk
    res = subprocess.run([PY, "-c", wrapper, *map(str, cmd)], capture_output=True, text=True, check=True)
    m = json.loads(res.stdout.strip().splitlines()[-1])
    m["bytes"] = dir_bytes(out_dir) if out_dir is not None and out_dir.exists() else 0
    return m


def floor_cmd(src: Path, nbytes: int, dst: Path) -> list:
    """`cat` of the checkpoint into one file on the same disk, repeated until it holds nbytes, then
    truncated to nbytes and fsync'd: the time any exporter needs at least to read every byte and
    write that many (a shell and coreutils, so no interpreter start-up is counted)."""
    script = ('mkdir -p "$3" && size=$(cat "$1"/*.safetensors | wc -c) && n=$(( ($2 + size - 1) / size )) && '
              'for i in $(seq $n); do cat "$1"/*.safetensors; done > "$3/out.bin" && '
              'truncate -s "$2" "$3/out.bin" && sync "$3/out.bin"')
    return ["sh", "-c", script, "floor", src, nbytes, dst]


STATIC_CACHE_LEN = 256  # the static-cache graphs' cache: prompt and decode steps fit

# the Python system: `forward` (export), `generation` (export_for_generation, dynamic cache) or
# `generation-static` (a static cache with multi-token decode, as its docs export one)
SEED = (
    "import sys, torch\n"
    "from transformers import AutoModelForCausalLM, GenerationConfig\n"
    "from transformers.exporters import OnnxExporter, OnnxConfig, OpenVINOExporter, OpenVINOConfig, DynamoExporter\n"
    "from transformers.exporters.configs import DynamoConfig\n"
    "src, dst, fmt, mode = sys.argv[1:5]\n"
    "m = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)\n"
    "ids = torch.ones(2 if mode == 'forward' else 1, 16, dtype=torch.long)\n"
    "inputs = {'input_ids': ids, 'attention_mask': torch.ones_like(ids)}\n"
    "x, cfg = {'onnx': (OnnxExporter, OnnxConfig), 'openvino': (OpenVINOExporter, OpenVINOConfig), 'dynamo': (DynamoExporter, DynamoConfig)}[fmt]\n"
    "x, cfg = x(), cfg(dynamic=True)\n"
    "static = dict(generation_config=GenerationConfig(cache_implementation='static', max_cache_len=int(sys.argv[5])),\n"
    "              multi_token_decode=True) if mode == 'generation-static' else {}\n"
    "art = x.export(m, inputs, cfg) if mode == 'forward' else x.export_for_generation(m, inputs, config=cfg, **static)\n"
    "art.save_pretrained(dst)\n"
)

# Peers that pin an older transformers than the oracle's live in their own virtualenvs. They see
# the oracle's site-packages after their own (a .pth file), so torch and openvino are shared
# rather than downloaded again, while their own transformers shadows the oracle's.
PEER_VENVS = {
    "onnx": ["optimum-onnx==0.1.0"],
    "openvino": ["optimum-intel[openvino]==2.2.0"],
}


def peer_venv(kind: str):
    """The bin/ folder of the peer virtualenv `kind`, created when missing; or (None, why)."""
    venv = CACHE / f"peers-{kind}"
    stamp = venv / ".hfx-peers"
    want = " ".join(PEER_VENVS[kind])
    if stamp.exists() and stamp.read_text() == want:
        return venv / "bin", None
    shutil.rmtree(venv, ignore_errors=True)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    base = getattr(sys, "_base_executable", sys.executable)
    try:
        subprocess.run([base, "-m", "venv", venv], check=True, capture_output=True)
        (venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "zz-oracle.pth").write_text(site + "\n")
        r = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", *PEER_VENVS[kind]],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None, f"pip install {want} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    except (OSError, subprocess.CalledProcessError) as e:
        return None, f"cannot create its virtualenv: {e}"
    stamp.write_text(want)
    return venv / "bin", None


def tools(model: Path, work: Path) -> dict:
    """name → (command, output dir, the hfx row it is compared with) for every exporter measured."""
    gen = ["--for-generation", "--multi-token-decode"]
    t = {
        "hfx onnx fp32": ([HFX, "export", model, work / "hfx-onnx", "--format", "onnx", "--dynamic", "--quiet"], work / "hfx-onnx", None),
        "hfx onnx fp16": ([HFX, "export", model, work / "hfx-onnx16", "--format", "onnx", "--dynamic", "--dtype", "fp16", "--quiet"], work / "hfx-onnx16", None),
        "hfx onnx fp32 stored": ([HFX, "export", model, work / "hfx-onnx-stored", "--format", "onnx", "--dynamic",
                                  "--weight-layout", "stored", "--quiet"], work / "hfx-onnx-stored", None),
        "hfx onnx fp32 generation": ([HFX, "export", model, work / "hfx-onnx-gen", "--format", "onnx", "--dynamic", *gen, "--quiet"], work / "hfx-onnx-gen", None),
        "hfx openvino fp32": ([HFX, "export", model, work / "hfx-ov", "--format", "openvino", "--dynamic", "--quiet"], work / "hfx-ov", None),
        "hfx openvino fp32 generation": ([HFX, "export", model, work / "hfx-ov-gen", "--format", "openvino", "--dynamic", "--for-generation", "--quiet"], work / "hfx-ov-gen", None),
        "transformers.exporters OnnxExporter": ([PY, "-c", SEED, model, work / "seed-onnx", "onnx", "forward"], work / "seed-onnx", "hfx onnx fp32"),
        "transformers.exporters OpenVINOExporter": ([PY, "-c", SEED, model, work / "seed-ov", "openvino", "forward"], work / "seed-ov", "hfx openvino fp32"),
        "hfx dynamo fp32": ([HFX, "export", model, work / "hfx-pt2", "--format", "dynamo", "--dynamic", "--quiet"], work / "hfx-pt2", None),
        "transformers.exporters DynamoExporter": ([PY, "-c", SEED, model, work / "seed-pt2", "dynamo", "forward"], work / "seed-pt2", "hfx dynamo fp32"),
        "onnxruntime-genai builder fp32": ([PY, "-m", "onnxruntime_genai.models.builder", "-i", model, "-o", work / "genai",
                                            "-p", "fp32", "-e", "cpu", "-c", work / "genai-cache"], work / "genai", "hfx onnx fp32 generation"),
        # quantized weights (int4: block 32, symmetric, as the builder's defaults)
        "hfx onnx int4 generation": ([HFX, "export", model, work / "hfx-onnx-int4", "--format", "onnx", "--dynamic", *gen,
                                      "--quantize", "int4", "--quiet"], work / "hfx-onnx-int4", None),
        "hfx onnx int8 generation": ([HFX, "export", model, work / "hfx-onnx-int8", "--format", "onnx", "--dynamic", *gen,
                                      "--quantize", "int8", "--quiet"], work / "hfx-onnx-int8", None),
        "hfx onnx int4 tables generation": ([HFX, "export", model, work / "hfx-onnx-int4t", "--format", "onnx", "--dynamic",
                                             *gen, "--quantize", "int4", "--quantize-embeddings", "int4", "--quiet"],
                                            work / "hfx-onnx-int4t", None),
        "hfx onnx int4 standard generation": ([HFX, "export", model, work / "hfx-onnx-int4s", "--format", "onnx",
                                               "--dynamic", *gen, "--quantize", "int4", "--onnx-ops", "standard",
                                               "--opset", "21", "--quiet"], work / "hfx-onnx-int4s", None),
        "hfx onnx int8-dynamic generation": ([HFX, "export", model, work / "hfx-onnx-int8d", "--format", "onnx",
                                              "--dynamic", *gen, "--quantize", "int8-dynamic", "--quiet"],
                                             work / "hfx-onnx-int8d", None),
        "onnxruntime-genai builder int4": ([PY, "-m", "onnxruntime_genai.models.builder", "-i", model, "-o", work / "genai-int4",
                                            "-p", "int4", "-e", "cpu", "-c", work / "genai-int4-cache"], work / "genai-int4",
                                           "hfx onnx int4 tables generation"),
        "hfx openvino int4 generation": ([HFX, "export", model, work / "hfx-ov-int4", "--format", "openvino", "--dynamic",
                                          "--for-generation", "--quantize", "int4", "--quiet"], work / "hfx-ov-int4", None),
        "hfx openvino int8 generation": ([HFX, "export", model, work / "hfx-ov-int8", "--format", "openvino", "--dynamic",
                                          "--for-generation", "--quantize", "int8", "--quiet"], work / "hfx-ov-int8", None),
    }
    ov_task = ["openvino", "--task", "text-generation-with-past", "--disable-convert-tokenizer", "--weight-format"]
    for kind, name, args, vs, out_name in (
        ("onnx", "optimum-cli export onnx", ["onnx", "--task", "text-generation-with-past"], "hfx onnx fp32 generation",
         "optimum-onnx"),
        ("openvino", "optimum-cli export openvino", [*ov_task, "fp32"], "hfx openvino fp32 generation", "optimum-openvino"),
        ("openvino", "optimum-cli export openvino int4", [*ov_task, "int4"], "hfx openvino int4 generation",
         "optimum-openvino-int4"),
        ("openvino", "optimum-cli export openvino int8", [*ov_task, "int8"], "hfx openvino int8 generation",
         "optimum-openvino-int8"),
    ):
        if not selected(name):
            continue
        bin_dir, why = peer_venv(kind)
        out = work / out_name
        t[name] = (why,) if why else ([bin_dir / "optimum-cli", "export", args[0], "--model", model, *args[1:], out], out, vs)
    # the Python path to int4 ONNX: optimum's export, then onnxruntime's own quantizer on it
    name = "optimum-cli export onnx + MatMulNBitsQuantizer int4"
    if selected(name):
        bin_dir, why = peer_venv("onnx")
        out = work / "optimum-onnx-int4"
        script = '"$1" export onnx --model "$2" --task text-generation-with-past "$3" && "$4" -c "$5" "$3"'
        t[name] = (why,) if why else (["sh", "-c", script, "sh", bin_dir / "optimum-cli", model, out, bin_dir / "python",
                                       ORT_INT4], out, "hfx onnx int4 tables generation")
    return t


# onnxruntime's quantizer on an exported model.onnx: int4, blocks of 32, symmetric, the MatMuls and
# the embedding Gather (what hfx's --quantize int4 --quantize-embeddings int4 writes)
ORT_INT4 = (
    "import os, sys, onnx\n"
    "from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer\n"
    "path = os.path.join(sys.argv[1], 'model.onnx')\n"
    "q = MatMulNBitsQuantizer(onnx.load(path), bits=4, block_size=32, is_symmetric=True, accuracy_level=4,\n"
    "                         op_types_to_quantize=('MatMul', 'Gather'))\n"
    "q.process()\n"
    "for f in os.listdir(sys.argv[1]):\n"
    "    if f.startswith('model.onnx'): os.remove(os.path.join(sys.argv[1], f))\n"
    "onnx.save(q.model.model, path, save_as_external_data=True, location='model.onnx_data')\n"
)


# the export table's outputs that the runtime part times (hfx's generation graphs it exports itself)
RUNTIME_INPUTS = ("genai", "genai-int4", "hfx-onnx-int4", "hfx-onnx-int4t", "hfx-onnx-int4s", "hfx-onnx-int8",
                  "hfx-onnx-int8d", "hfx-ov-int4", "hfx-ov-int8", "optimum-onnx", "optimum-onnx-int4", "optimum-openvino",
                  "optimum-openvino-int4", "optimum-openvino-int8")


def selected(name: str) -> bool:
    return not TOOLS or any(w in name for w in TOOLS)


def bench_export(name: str, runs: int, work: Path) -> list:
    model = model_dir(name)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for tool, spec in tools(model, work).items():
        if not selected(tool):
            continue
        if len(spec) == 1:
            rows.append({"model": name, "tool": tool, "skipped": spec[0]})
            print(f"bench: {name}: {tool} skipped: {spec[0]}", file=sys.stderr)
            continue
        cmd, out, vs = spec
        got, floors = [], []
        for _ in range(max(runs, HFX_RUNS) if tool.startswith("hfx") else runs):
            got.append(measure(cmd, out))
            if tool.startswith("hfx") and got[-1]["rc"] == 0:
                # the floor for the same byte count, right after: the disk's mood drifts
                floors.append(measure(floor_cmd(model, got[-1]["bytes"], work / "floor"), work / "floor")["seconds"])
                shutil.rmtree(work / "floor")
        ok = [g for g in got if g["rc"] == 0]
        if out.name not in RUNTIME_INPUTS:  # a 0.6B model leaves 2-3 GB per export: keep only what the runtime part times
            shutil.rmtree(out, ignore_errors=True)
        if not ok:
            rows.append({"model": name, "tool": tool, "error": got[-1]["stderr"].strip().splitlines()[-1:] or ["failed"]})
            print(f"bench: {name}: {tool} failed: {rows[-1]['error']}", file=sys.stderr)
            continue
        rows.append({"model": name, "tool": tool, "vs": vs, "runs": len(ok), "seconds": statistics.median(g["seconds"] for g in ok),
                     "cpu_seconds": statistics.median(g["cpu_seconds"] for g in ok),
                     "peak_rss": max(g["peak_rss"] for g in ok), "bytes": ok[-1]["bytes"]})
        if floors:
            rows[-1]["floor_seconds"] = statistics.median(floors)
        print(f"bench: {name}: {tool}: {rows[-1]['seconds']:.2f} s, {rows[-1]['peak_rss'] / 2**20:.0f} MiB, "
              f"{rows[-1]['bytes'] / 2**20:.0f} MiB written", file=sys.stderr)
    return rows


# ---- runtime: every graph driven through the same loop ----

PROMPT, STEPS = 128, 64
LONG_PROMPT = 1024  # time to first token of a long prompt

# what a graph's cache output is fed back as
CACHE_FEEDBACK = (("present.", "past_key_values."), ("output.cache.", "input.cache."), ("cache.", "input.cache."))


def ort_sessions(prefill: Path, decode: Path) -> tuple:
    """CPU sessions for a graph's prefill and decode files: one session when they are the same file."""
    import onnxruntime as ort

    new = lambda f: ort.InferenceSession(str(f), ort.SessionOptions(), providers=["CPUExecutionProvider"])
    first = new(prefill)
    return first, first if decode == prefill else new(decode)


class OrtGraph:
    """A prefill and a decode session (possibly the same one) with a dynamic cache: whatever cache
    the last call returned is fed back by name (CACHE_FEEDBACK), and a session with cache inputs
    starts from empty ones."""

    def __init__(self, prefill: Path, decode: Path, config: dict):
        self.kv_heads = config.get("num_key_value_heads") or config["num_attention_heads"]
        self.head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        self.prefill_s, self.decode_s = ort_sessions(prefill, decode)

    def _run(self, sess, ids, start):
        import numpy as np

        total = start + ids.shape[1]
        feeds = {}
        for i in sess.get_inputs():
            if i.name == "input_ids":
                feeds[i.name] = ids
            elif i.name == "attention_mask":
                feeds[i.name] = np.ones((1, total), np.int64)
            elif i.name == "position_ids":
                feeds[i.name] = np.arange(start, total, dtype=np.int64)[None]
            elif i.name in self.cache:
                feeds[i.name] = self.cache[i.name]
            else:  # a cache input before any cache exists: [1, kv heads, 0, head dim]
                feeds[i.name] = np.zeros((1, self.kv_heads, 0, self.head_dim), np.float32)
        outs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        self.cache = {}
        for name, v in outs.items():
            for o, i in CACHE_FEEDBACK:
                if name.startswith(o):
                    self.cache[i + name[len(o):]] = v
                    break
        return outs["logits"][:, -1]

    def prefill(self, ids):
        self.cache = {}
        return self._run(self.prefill_s, ids, 0)

    def decode(self, ids, start):
        return self._run(self.decode_s, ids, start)


class OrtStaticGraph:
    """A static-cache graph: fixed-size cache buffers, each bound as both its `input.<name>` and its
    `output.<name>` (io-binding), so the graph updates them in place. The buffers are built from
    the graph's own input metadata (a symbolic first axis is the batch, 1; any other symbolic
    axis is the cache length), and the attention mask follows the graph's kind: a [1, cache]
    slot mask (hfx) or a [1, 1, query, cache] boolean causal mask (transformers.exporters)."""

    def __init__(self, prefill: Path, decode: Path, max_len: int):
        import numpy as np
        import onnxruntime as ort

        self.prefill_s, self.decode_s = ort_sessions(prefill, decode)
        self.M, self.np, self.ort = max_len, np, ort
        types = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int64)": np.int64, "tensor(int32)": np.int32}
        # (ONNX Runtime reports some fixed dims as digit strings: '8')
        dim = lambda k, d: int(d) if isinstance(d, int) or d.isdigit() else 1 if k == 0 else max_len
        self.buffers = [(i.name[len("input."):], [dim(k, d) for k, d in enumerate(i.shape)], types[i.type])
                        for i in self.prefill_s.get_inputs() if i.name.startswith("input.")]
        if not self.buffers:
            raise ValueError(f"{prefill.name} has no input.<name> cache inputs")

    def _step(self, sess, ids, start):
        np = self.np
        total = start + ids.shape[1]
        feeds = {"input_ids": ids, "position_ids": np.arange(start, total, dtype=np.int64)[None],
                 "cache_position": np.arange(start, total, dtype=np.int64)}
        b = sess.io_binding()
        for i in sess.get_inputs():
            if i.name.startswith("attention_mask.") and i.name != "attention_mask.full_attention":
                raise ValueError(f"{i.name}: only full-attention masks are built here")
            if i.name in ("attention_mask", "attention_mask.full_attention"):  # transformers.exporters names it by layer type
                slots = np.arange(self.M)
                v = ((slots[None, :] <= np.arange(start, total)[:, None])[None, None] if len(i.shape) == 4
                     else (slots < total)[None].astype(np.int64))
                b.bind_cpu_input(i.name, np.ascontiguousarray(v))
            elif i.name in feeds:
                b.bind_cpu_input(i.name, feeds[i.name])
        for name, v in self.cache.items():
            b.bind_ortvalue_input("input." + name, v)
            b.bind_ortvalue_output("output." + name, v)
        b.bind_output("logits")
        sess.run_with_iobinding(b)
        return b.get_outputs()[-1].numpy()[:, -1]  # the logits only: copying the cache out too would be timed

    def prefill(self, ids):
        self.cache = {name: self.ort.OrtValue.ortvalue_from_numpy(self.np.zeros(shape, dtype)) for name, shape, dtype in self.buffers}
        return self._step(self.prefill_s, ids, 0)

    def decode(self, ids, start):
        return self._step(self.decode_s, ids, start)


class OvStatefulGraph:
    """A stateful OpenVINO LLM (input_ids, attention_mask, position_ids, beam_idx → logits), the
    interface hfx and optimum-intel share."""

    def __init__(self, xml: Path):
        import openvino as ov

        # the CPU plugin's defaults (bf16 compute where the CPU has it, a u8 KV cache) would
        # measure a different model: both graphs run in f32
        cfg = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}
        self.req = ov.Core().compile_model(str(xml), "CPU", cfg).create_infer_request()

    def _run(self, ids, start):
        import numpy as np

        total = start + ids.shape[1]
        self.req.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64),
                        "position_ids": np.arange(start, total, dtype=np.int64)[None], "beam_idx": np.zeros(1, np.int32)})
        return self.req.get_tensor("logits").data[:, -1].copy()

    def prefill(self, ids):
        self.req.reset_state()
        return self._run(ids, 0)

    def decode(self, ids, start):
        return self._run(ids, start)


class TorchSeedGraph:
    """A prefill.pt2 / decode.pt2 pair in the Python system's call profile (keywords, the cache a
    transformers DynamicCache, a ModelOutput back), run eagerly through `.module()` on the CPU:
    the cache each call returns is the next call's."""

    def __init__(self, out: Path):
        import copy

        import torch
        import transformers.modeling_outputs  # noqa: F401  (registers the ModelOutput pytrees)
        from transformers import DynamicCache
        from transformers.exporters.exporter_dynamo import register_pytree_node

        register_pytree_node(DynamicCache)
        self.torch = torch
        prefill = torch.export.load(str(out / "prefill.pt2"))
        self.prefill_m, self.decode_m = prefill.module(), torch.export.load(str(out / "decode.pt2")).module()
        self.template = copy.deepcopy(prefill.example_inputs[1]["cache"])
        self.copy = copy.deepcopy

    def _run(self, module, ids, start, cache):
        torch = self.torch
        with torch.no_grad():
            ids = torch.from_numpy(ids)
            res = module(input_ids=ids, position_ids=torch.arange(start, start + ids.shape[1])[None], cache=cache)
        self.cache = res.cache
        return res.logits[:, -1].numpy()

    def prefill(self, ids):
        return self._run(self.prefill_m, ids, 0, self.copy(self.template))

    def decode(self, ids, start):
        return self._run(self.decode_m, ids, start, self.cache)


def time_graph(g, prompt, want_prefill, want_decode) -> dict:
    """Prefill tokens/s (median of 3 after a warm-up), decode tokens/s (the median of STEPS
    single-token steps: this machine's noise comes in bursts), and the max abs logits difference from transformers at the prefill's last position
    and at the first decode step."""
    import numpy as np

    g.prefill(prompt)  # warm-up: first-run allocations
    times = []
    for _ in range(3):
        t = time.perf_counter()
        got_prefill = g.prefill(prompt)
        times.append(time.perf_counter() - t)
    one = np.array([[1]], np.int64)
    steps = []
    for step in range(STEPS):
        t = time.perf_counter()
        got = g.decode(one, PROMPT + step)
        steps.append(time.perf_counter() - t)
        if step == 0:
            got_decode = got
    got = {"prefill_tokens_per_s": PROMPT / statistics.median(times), "decode_tokens_per_s": 1 / statistics.median(steps),
           "max_abs_logits_diff": float(max(np.abs(got_prefill - want_prefill).max(), np.abs(got_decode - want_decode).max()))}
    # time to first token of a LONG_PROMPT-token prompt: one prefill call, the prompt repeated (a
    # graph that cannot take it, a static cache shorter than it, has no figure)
    try:
        t = time.perf_counter()
        g.prefill(np.tile(prompt, (1, LONG_PROMPT // PROMPT)))
        got["ttft_long_seconds"] = time.perf_counter() - t
    except Exception:  # noqa: BLE001 — reported as a missing figure
        pass
    return got


def runtime_graphs(name: str, work: Path) -> dict:
    """(runtime, graph name) → a constructor of that graph, exporting hfx's on first use."""
    model = model_dir(name)
    config = json.loads((model / "config.json").read_text())

    def hfx(out, *flags):
        if not out.exists():
            r = subprocess.run([HFX, "export", model, out, "--dynamic", "--quiet", *flags], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"hfx export {' '.join(flags)}: {r.stderr.strip()}")
        return out

    def seed_generation(mode):
        out = work / f"seed-{mode}"
        if not out.exists():
            r = subprocess.run([PY, "-c", SEED, model, out, "onnx", mode, str(STATIC_CACHE_LEN)], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"transformers.exporters {mode}: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        if mode == "generation-static":  # one multi-token decode graph serves prompt and steps
            return OrtStaticGraph(out / "decode.onnx", out / "decode.onnx", STATIC_CACHE_LEN)
        return OrtGraph(out / "prefill.onnx", out / "decode.onnx", config)

    def seed_dynamo():
        out = work / "seed-pt2-generation"
        if not out.exists():
            r = subprocess.run([PY, "-c", SEED, model, out, "dynamo", "generation"], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"transformers.exporters dynamo generation: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        return TorchSeedGraph(out)

    def hfx_seed_dynamo():
        out = work / "rt-pt2"
        if not out.exists():
            cfg = work / "rt-pt2.json"
            cfg.write_text(json.dumps({"export_format": "dynamo", "dynamic": True, "io": "seed"}))
            hfx(out, "--config", str(cfg), "--for-generation")
        return TorchSeedGraph(out)

    def optimum(kind):
        out = work / f"optimum-{kind}"
        if not out.exists():
            raise FileNotFoundError(f"no {out.name} export (see the export table)")
        return OrtGraph(out / "model.onnx", out / "model.onnx", config) if kind == "onnx" else OvStatefulGraph(out / "openvino_model.xml")

    return {
        ("onnxruntime", "hfx (dynamic cache)"): lambda: OrtGraph(hfx(work / "rt-dyn", "--format", "onnx", "--for-generation") / "prefill.onnx",
                                                                 work / "rt-dyn" / "decode.onnx", config),
        ("onnxruntime", "hfx (static cache)"): lambda: OrtStaticGraph(hfx(work / "rt-static", "--format", "onnx", "--for-generation", "--cache", "static",
                                                                          "--max-cache-len", str(STATIC_CACHE_LEN)) / "prefill.onnx",
                                                                      work / "rt-static" / "decode.onnx", STATIC_CACHE_LEN),
        ("onnxruntime", "hfx (multi-token decode)"): lambda: OrtGraph(hfx(work / "rt-multi", "--format", "onnx", "--for-generation",
                                                                          "--multi-token-decode") / "decode.onnx", work / "rt-multi" / "decode.onnx", config),
        ("onnxruntime", "transformers.exporters (export_for_generation)"): lambda: seed_generation("generation"),
        ("onnxruntime", "transformers.exporters (static cache)"): lambda: seed_generation("generation-static"),
        ("onnxruntime", "onnxruntime-genai builder"): lambda: OrtGraph(work / "genai" / "model.onnx", work / "genai" / "model.onnx", config),
        ("onnxruntime", "hfx int8 (multi-token decode)"): lambda: OrtGraph(work / "hfx-onnx-int8" / "decode.onnx",
                                                                           work / "hfx-onnx-int8" / "decode.onnx", config),
        ("onnxruntime", "hfx int4 (multi-token decode)"): lambda: OrtGraph(work / "hfx-onnx-int4" / "decode.onnx",
                                                                           work / "hfx-onnx-int4" / "decode.onnx", config),
        ("onnxruntime", "hfx int4 tables (multi-token decode)"): lambda: OrtGraph(work / "hfx-onnx-int4t" / "decode.onnx",
                                                                                  work / "hfx-onnx-int4t" / "decode.onnx",
                                                                                  config),
        ("onnxruntime", "hfx int4 standard ops (multi-token decode)"): lambda: OrtGraph(
            work / "hfx-onnx-int4s" / "decode.onnx", work / "hfx-onnx-int4s" / "decode.onnx", config),
        ("onnxruntime", "hfx int8-dynamic (multi-token decode)"): lambda: OrtGraph(
            work / "hfx-onnx-int8d" / "decode.onnx", work / "hfx-onnx-int8d" / "decode.onnx", config),
        ("onnxruntime", "onnxruntime-genai builder int4"): lambda: OrtGraph(work / "genai-int4" / "model.onnx",
                                                                            work / "genai-int4" / "model.onnx", config),
        ("onnxruntime", "optimum-cli export onnx"): lambda: optimum("onnx"),
        ("onnxruntime", "optimum-cli export onnx + MatMulNBitsQuantizer int4"): lambda: OrtGraph(
            work / "optimum-onnx-int4" / "model.onnx", work / "optimum-onnx-int4" / "model.onnx", config),
        ("torch eager", "hfx (io seed, dynamic cache)"): hfx_seed_dynamo,
        ("torch eager", "transformers.exporters (export_for_generation)"): seed_dynamo,
        ("openvino", "hfx (stateful)"): lambda: OvStatefulGraph(hfx(work / "rt-ov", "--format", "openvino", "--for-generation") / "openvino_model.xml"),
        ("openvino", "optimum-cli export openvino"): lambda: optimum("openvino"),
        ("openvino", "hfx int4 (stateful)"): lambda: OvStatefulGraph(work / "hfx-ov-int4" / "openvino_model.xml"),
        ("openvino", "optimum-cli export openvino int4"): lambda: OvStatefulGraph(work / "optimum-openvino-int4" / "openvino_model.xml"),
        ("openvino", "hfx int8 (stateful)"): lambda: OvStatefulGraph(work / "hfx-ov-int8" / "openvino_model.xml"),
        ("openvino", "optimum-cli export openvino int8"): lambda: OvStatefulGraph(work / "optimum-openvino-int8" / "openvino_model.xml"),
    }


def time_one_graph(name: str, work: Path, index: int) -> int:
    """The child side of bench_runtime: time graph number `index` against the reference the parent
    saved, and print the result as one JSON line."""
    import numpy as np

    ref = np.load(work / "runtime-ref.npz")
    try:
        got = time_graph(list(runtime_graphs(name, work).values())[index](), ref["prompt"], ref["want_prefill"], ref["want_decode"])
    except Exception as e:  # a peer's graph that does not run is reported, not fatal
        msg = " ".join(str(e).split())
        got = {"error": f"{type(e).__name__}: {msg[:200]}"}
    print(json.dumps(got))
    return 0


def bench_runtime(name: str, work: Path) -> list:
    """Prefill tokens/s (prompt 128) and decode tokens/s (batch 1, 64 steps) of every generation
    graph in its runtime, with the agreement of its logits with transformers eager."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    model = model_dir(name)
    vocab = json.loads((model / "config.json").read_text())["vocab_size"]
    prompt = np.random.default_rng(0).integers(0, min(1000, vocab), (1, PROMPT)).astype(np.int64)
    ref = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, attn_implementation="eager")
    with torch.no_grad():
        full = ref(input_ids=torch.from_numpy(np.concatenate([prompt, [[1]]], 1))).logits.numpy()
    del ref
    work.mkdir(parents=True, exist_ok=True)
    np.savez(work / "runtime-ref.npz", prompt=prompt, want_prefill=full[:, PROMPT - 1], want_decode=full[:, PROMPT])

    # Each graph is timed in a process of its own: one runtime's thread pools, allocator state and
    # page cache left behind by the graph before must not speed up or slow down the next.
    # Two passes, the second in reverse order, keeping each graph's best: this machine's speed
    # drifts over minutes, and a graph measured only first or only last would carry that drift.
    keys = [k for k in runtime_graphs(name, work) if selected(" ".join(k))]
    rows = {key: {"model": name, "runtime": key[0], "graph": key[1]} for key in keys}
    for order in (keys, keys[::-1]):
        for key in order:
            row = rows[key]
            if "error" in row:
                continue
            index = list(runtime_graphs(name, work)).index(key)
            r = subprocess.run([PY, __file__, "--time-graph", name, work, str(index)], capture_output=True, text=True)
            got = (json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else
                   {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:200]})  # it crashed
            if "error" in got:
                row["error"] = got["error"]
                print(f"bench: runtime {name} {key[0]} {key[1]}: {row['error']}", file=sys.stderr)
                continue
            print(f"bench: runtime {name} {key[0]} {key[1]}: prefill {got['prefill_tokens_per_s']:.0f} tok/s, "
                  f"decode {got['decode_tokens_per_s']:.1f} tok/s, diff {got['max_abs_logits_diff']:.1e}", file=sys.stderr)
            for k, v in got.items():  # the better of the two passes: the most tokens/s, the fewest seconds
                row[k] = min(row.get(k, v), v) if k.endswith("_seconds") else max(row.get(k, v), v)
    return list(rows.values())


def versions() -> str:
    import importlib.metadata as md

    got = []
    for pkg in ("torch", "transformers", "onnxruntime", "onnxruntime-genai", "openvino"):
        try:
            got.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            pass
    for kind, specs in PEER_VENVS.items():
        py = CACHE / f"peers-{kind}" / "bin" / "python"
        if py.exists():
            pkg = specs[0].split("[")[0].split("=")[0]
            r = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version({pkg!r}), m.version('transformers'))"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                v, tf = r.stdout.split()
                got.append(f"{pkg} {v} (with transformers {tf})")
    return ", ".join(got)


def secs(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"  # the tiny model's exports take milliseconds


def report(export_rows: list, runtime_rows: list, out_base: Path) -> None:
    hfx_version = subprocess.run([HFX, "--version"], capture_output=True, text=True).stdout.strip()
    md = [f"# hfx benchmarks — {out_base.name}", "",
          f"Machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB), {platform.platform()}.",
          f"Versions: {hfx_version}, python {platform.python_version()}, {versions()}.", "",
          "## Export", "",
          f"Median wall time of the runs (each after a sync and {SETTLE_S} s of quiet, so the previous run's writeback and "
          "discards are not charged to it); CPU seconds (user + system, all processes: steadier than wall time on a noisy disk); peak RSS of the largest process; ratios to the hfx export of the same kind "
          "(a plain forward graph, or a generation graph with its cache) and to that export's floor.", "",
          "| model | tool | runs | time (s) | × hfx | × floor | CPU (s) | CPU × hfx | peak RSS (MiB) | written (MiB) |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in dict.fromkeys(r["model"] for r in export_rows):
        rows = [r for r in export_rows if r["model"] == name]
        by_tool = {r["tool"]: r for r in rows if "seconds" in r}
        for r in rows:
            if "skipped" in r:
                md.append(f"| {name} | {r['tool']} | | skipped: {r['skipped']} | | | | | | |")
            elif "error" in r:
                md.append(f"| {name} | {r['tool']} | | failed: {' '.join(r['error'])[:120]} | | | | | | |")
            else:
                base = by_tool.get(r.get("vs") or r["tool"])
                x_hfx = f"{r['seconds'] / base['seconds']:.1f}×" if base else "—"
                floor = (base or {}).get("floor_seconds")
                x_floor = f"{r['seconds'] / floor:.2f}×" if floor else "—"
                x_cpu = f"{r['cpu_seconds'] / base['cpu_seconds']:.1f}×" if base else "—"
                md.append(f"| {name} | {r['tool']} | {r['runs']} | {secs(r['seconds'])} | {x_hfx} | {x_floor} | "
                          f"{secs(r['cpu_seconds'])} | {x_cpu} | {r['peak_rss'] / 2**20:.0f} | {r['bytes'] / 2**20:.0f} |")
    md += ["", "Floor: `cat` of the checkpoint into a file on the same disk, repeated to the byte count of that hfx "
           "output, truncated and fsync'd, measured right after each hfx run. hfx starts the disk writing while it converts "
           "(write-behind), which a plain `cat` does not, so it can finish under the floor.", "",
           "## Runtime", "",
           f"CPU, batch 1: prefill tokens/s over a {PROMPT}-token prompt (median of 3 after a warm-up), decode tokens/s from "
           f"the median of {STEPS} single-token steps after it, each graph in a fresh process, the better of two passes over all "
           f"graphs (the second in reverse order), the time to the first token of a {LONG_PROMPT}-token prompt (one prefill "
           "call; — where the graph cannot take it, e.g. a shorter static cache), and the max abs difference of the logits "
           "from transformers eager (fp32) at the prompt's last position and the first decode step. Ratios are to hfx's "
           "dynamic-cache graph in the same runtime (OpenVINO: hfx's stateful graph).", "",
           "| model | runtime | graph | prefill tok/s | × hfx | decode tok/s | × hfx | "
           f"first token after {LONG_PROMPT} (s) | max abs logits diff |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in runtime_rows:
        if "error" in r:
            md.append(f"| {r['model']} | {r['runtime']} | {r['graph']} | failed: {r['error']} | | | | | |")
            continue
        base = next((b for b in runtime_rows if b["model"] == r["model"] and b["runtime"] == r["runtime"]
                     and b["graph"].startswith("hfx") and "error" not in b), None)
        xp = f"{r['prefill_tokens_per_s'] / base['prefill_tokens_per_s']:.2f}×" if base else "—"
        xd = f"{r['decode_tokens_per_s'] / base['decode_tokens_per_s']:.2f}×" if base else "—"
        ttft = f"{r['ttft_long_seconds']:.2f}" if "ttft_long_seconds" in r else "—"
        md.append(f"| {r['model']} | {r['runtime']} | {r['graph']} | {r['prefill_tokens_per_s']:.0f} | {xp} | "
                  f"{r['decode_tokens_per_s']:.1f} | {xd} | {ttft} | {r['max_abs_logits_diff']:.1e} |")
    out_base.with_suffix(".md").write_text("\n".join(md) + "\n")
    out_base.with_suffix(".json").write_text(json.dumps({"export": export_rows, "runtime": runtime_rows}, indent=2, default=str))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        timed = [r for r in export_rows if "seconds" in r]
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(timed) + 1.5))
        ax.barh([f"{r['model']}: {r['tool']}" for r in timed], [r["seconds"] for r in timed],
                color=["tab:blue" if r["tool"].startswith("hfx") else "tab:gray" for r in timed])
        ax.set_xscale("log")
        ax.invert_yaxis()
        ax.set_xlabel("export wall time (s, log scale)")
        fig.tight_layout()
        fig.savefig(out_base.with_suffix(".png"), dpi=110)
    except ImportError:
        print("bench: matplotlib missing: no chart", file=sys.stderr)
    print(f"bench: wrote {out_base}.{{json,md,png}}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="tiny,qwen3-0.6b")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default="", help="only the export rows and runtime graphs whose names contain one of these "
                                                  "comma-separated words (default: all)")
    ap.add_argument("--runtime-models", default="qwen3-0.6b", help="models whose graphs are timed in the runtimes ('' for none)")
    ap.add_argument("--work", type=Path, help="keep the graphs the runtime part times in this folder (default: a temporary one, removed at the end)")
    ap.add_argument("--skip-export", action="store_true", help="time only the runtimes, on the exports already in --work")
    ap.add_argument("--time-graph", nargs=3, metavar=("MODEL", "WORK", "INDEX"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    global TOOLS
    TOOLS = [w for w in args.tools.split(",") if w]
    if args.time_graph:
        return time_one_graph(args.time_graph[0], Path(args.time_graph[1]), int(args.time_graph[2]))
    if args.skip_export and not args.work:
        ap.error("--skip-export needs --work")
    names = args.models.split(",")
    out_dir = REPO / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    out_base = out_dir / f"{datetime.date.today().isoformat()}-{platform.node()}{'-runtime' if args.skip_export else ''}"
    export_rows, runtime_rows = [], []
    with tempfile.TemporaryDirectory(dir=CACHE if CACHE.exists() else None) as tmp:
        work = args.work or Path(tmp)
        for name in names:
            if not args.skip_export:
                export_rows += bench_export(name, args.runs, work / name)
            if name in args.runtime_models.split(","):
                runtime_rows += bench_runtime(name, work / name)
    report(export_rows, runtime_rows, out_base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
