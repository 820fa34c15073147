#!/usr/bin/env python3
"""hfx benchmarks: export time, peak memory and bytes written against the Python exporters and
the I/O floor, and the runtime speed of the exported graphs — every figure as a ratio to hfx and
to the floor measured in the same run (the machines are noisy; absolute numbers are not compared
across runs).

    make bench                       # all models, writes bench/results/<date>-<machine>.{json,md,png}
    python bench/run.py --models tiny --runs 1

Peers are measured where they install beside the pinned oracle stack; otherwise a line says why.
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

# Qwen3-0.6B's shape with random weights (bf16 on disk, ≈1.2 GB), and a tiny model for overhead.
MODELS = {
    "tiny": None,  # examples/tiny-llama
    "qwen3-0.6b": dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                       tie_word_embeddings=True, rope_theta=1000000.0),
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


def model_dir(name: str) -> Path:
    out = CACHE / name
    if MODELS[name] is None:
        if not out.exists():
            shutil.copytree(REPO / "examples" / "tiny-llama", out)
        return with_tokenizer(out)
    if (out / "model.safetensors").exists() or (out / "model.safetensors.index.json").exists():
        return with_tokenizer(out)
    print(f"bench: generating {name} with random weights into {out} (once)", file=sys.stderr)
    code = (
        "import sys, json, torch\n"
        "from transformers import Qwen3Config, Qwen3ForCausalLM\n"
        "torch.manual_seed(0)\n"
        f"cfg = Qwen3Config(**json.loads({json.dumps(json.dumps(MODELS[name]))}))\n"
        "with torch.device('cpu'):\n"
        "    m = Qwen3ForCausalLM(cfg).to(torch.bfloat16)\n"
        f"m.save_pretrained({str(out)!r}, max_shard_size='5GB')\n"
    )
    subprocess.run([PY, "-c", code], check=True)
    return with_tokenizer(out)


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(cmd: list, out_dir: Path | None) -> dict:
    """Wall time, peak RSS of the largest process in the tree (ru_maxrss of waited children, taken
    in a fresh wrapper so earlier runs do not count) and bytes written."""
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
        "print(json.dumps({'rc': r.returncode, 'seconds': dt, 'peak_rss': rss, 'stderr': r.stderr[-2000:]}))\n"
    )
    if out_dir is not None and out_dir.exists():
        shutil.rmtree(out_dir)
    res = subprocess.run([PY, "-c", wrapper, *map(str, cmd)], capture_output=True, text=True, check=True)
    m = json.loads(res.stdout.strip().splitlines()[-1])
    m["bytes"] = dir_bytes(out_dir) if out_dir is not None and out_dir.exists() else 0
    return m


def floor_cmd(src: Path, nbytes: int, dst: Path) -> list:
    """Read every checkpoint byte and write nbytes, fsync'd as hfx does: the time any exporter
    needs at least (a shell and coreutils, so no interpreter start-up is counted)."""
    script = 'mkdir -p "$3" && cat "$1"/*.safetensors > /dev/null && head -c "$2" /dev/zero > "$3/out.bin" && sync "$3/out.bin"'
    return ["sh", "-c", script, "floor", src, nbytes, dst]


SEED_ONNX = (
    "import sys, torch\n"
    "from transformers import AutoModelForCausalLM\n"
    "from transformers.exporters import OnnxExporter, OnnxConfig\n"
    "src, dst = sys.argv[1], sys.argv[2]\n"
    "m = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)\n"
    "ids = torch.ones(2, 16, dtype=torch.long)\n"
    "art = OnnxExporter().export(m, {'input_ids': ids, 'attention_mask': torch.ones_like(ids)}, OnnxConfig(dynamic=True))\n"
    "art.save_pretrained(dst)\n"
)


def tools(model: Path, work: Path) -> dict:
    """name → (command, output dir) for every exporter measured on this model."""
    t = {
        "hfx onnx fp32": ([HFX, "export", model, work / "hfx-onnx", "--format", "onnx", "--dynamic", "--quiet"], work / "hfx-onnx"),
        "hfx onnx fp16": ([HFX, "export", model, work / "hfx-onnx16", "--format", "onnx", "--dynamic", "--dtype", "fp16", "--quiet"], work / "hfx-onnx16"),
        "hfx openvino": ([HFX, "export", model, work / "hfx-ov", "--format", "openvino", "--dynamic", "--quiet"], work / "hfx-ov"),
        "transformers.exporters OnnxExporter": ([PY, "-c", SEED_ONNX, model, work / "seed-onnx"], work / "seed-onnx"),
        "onnxruntime-genai builder fp32": ([PY, "-m", "onnxruntime_genai.models.builder", "-i", model, "-o", work / "genai",
                                            "-p", "fp32", "-e", "cpu", "-c", work / "genai-cache"], work / "genai"),
    }
    return t


SKIPPED = {
    "optimum-cli export onnx": "optimum-onnx 0.1.0 requires transformers<4.58, which cannot sit beside the pinned transformers 5.24",
    "optimum-cli export openvino": "optimum-intel 2.2.0 requires transformers<5.6, which cannot sit beside the pinned transformers 5.24",
}


def bench_export(name: str, runs: int, work: Path) -> list:
    model = model_dir(name)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for tool, (cmd, out) in tools(model, work).items():
        got = [measure(cmd, out) for _ in range(1 if tool.startswith(("transformers", "onnxruntime-genai")) and name != "tiny" else runs)]
        ok = [g for g in got if g["rc"] == 0]
        if not ok:
            rows.append({"model": name, "tool": tool, "error": got[-1]["stderr"].strip().splitlines()[-1:] or ["failed"]})
            print(f"bench: {name}: {tool} failed: {rows[-1]['error']}", file=sys.stderr)
            continue
        rows.append({"model": name, "tool": tool, "runs": len(ok), "seconds": statistics.median(g["seconds"] for g in ok),
                     "peak_rss": max(g["peak_rss"] for g in ok), "bytes": ok[-1]["bytes"]})
        print(f"bench: {name}: {tool}: {rows[-1]['seconds']:.2f} s, {rows[-1]['peak_rss'] / 2**20:.0f} MiB, "
              f"{rows[-1]['bytes'] / 2**20:.0f} MiB written", file=sys.stderr)
    # the floor for each hfx output size
    for row in [r for r in rows if r["tool"].startswith("hfx") and "seconds" in r]:
        got = [measure(floor_cmd(model, row["bytes"], work / "floor"), work / "floor") for _ in range(runs)]
        row["floor_seconds"] = statistics.median(g["seconds"] for g in got)
    for tool, why in SKIPPED.items():
        rows.append({"model": name, "tool": tool, "skipped": why})
    return rows


def bench_runtime(name: str, work: Path) -> list:
    """ONNX Runtime CPU: prefill tokens/s (prompt 128) and decode tokens/s (batch 1, 64 steps) of
    hfx's generation export (dynamic and static cache), and the agreement of its prefill logits
    with transformers."""
    import numpy as np
    import onnxruntime as ort
    import torch
    from transformers import AutoModelForCausalLM

    model = model_dir(name)
    rows = []
    prompt = np.random.default_rng(0).integers(0, 1000, (1, 128)).astype(np.int64)
    ref = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, attn_implementation="eager")
    with torch.no_grad():
        want = ref(input_ids=torch.from_numpy(prompt)).logits[:, -1].numpy()
    del ref
    for cache, flags in (("dynamic", []), ("static", ["--cache", "static", "--max-cache-len", "256"])):
        out = work / f"gen-{cache}"
        subprocess.run([HFX, "export", model, out, "--format", "onnx", "--for-generation", "--dynamic", "--quiet", *flags], check=True)
        man = json.loads((out / "export.json").read_text())
        opts = ort.SessionOptions()
        sess = {k: ort.InferenceSession(str(out / v["file"]), opts, providers=["CPUExecutionProvider"])
                for k, v in man["components"].items()}
        layers = man["components"]["decode"]["metadata"]["cache"]["layers"]
        mask = np.ones_like(prompt)
        pos = np.arange(128)[None]
        if cache == "dynamic":
            feeds = {"input_ids": prompt, "attention_mask": mask, "position_ids": pos}
            t = time.perf_counter()
            r = dict(zip([o.name for o in sess["prefill"].get_outputs()], sess["prefill"].run(None, feeds)))
            prefill_s = time.perf_counter() - t
            got = r["logits"][:, -1]
            t = time.perf_counter()
            for step in range(64):
                feeds = {"input_ids": np.array([[1]], np.int64), "attention_mask": np.ones((1, 129 + step), np.int64),
                         "position_ids": np.array([[128 + step]])}
                for i in range(len(layers)):
                    for w in ("key", "value"):
                        feeds[f"past_key_values.{i}.{w}"] = r[f"present.{i}.{w}"]
                r = dict(zip([o.name for o in sess["decode"].get_outputs()], sess["decode"].run(None, feeds)))
            decode_s = time.perf_counter() - t
        else:
            M = 256
            bufs = {}
            for i, l in enumerate(layers):
                for w in ("key", "value"):
                    bufs[f"past_key_values.{i}.{w}"] = ort.OrtValue.ortvalue_from_numpy(np.zeros((1, l["heads"], M, l["key_dim"]), np.float32))
            slots = np.zeros((1, M), np.int64)

            def step(comp, ids, positions, cp):
                b = sess[comp].io_binding()
                for k, v in {"input_ids": ids, "attention_mask": slots, "position_ids": positions, "cache_position": cp}.items():
                    b.bind_cpu_input(k, v)
                for k, v in bufs.items():
                    b.bind_ortvalue_input("input." + k, v)
                    b.bind_ortvalue_output("output." + k, v)
                b.bind_output("logits")
                sess[comp].run_with_iobinding(b)
                return b.get_outputs()[-1].numpy() if False else b.copy_outputs_to_cpu()[-1]

            slots[:, :128] = 1
            t = time.perf_counter()
            got = step("prefill", prompt, pos, np.arange(128, dtype=np.int64))[:, -1]
            prefill_s = time.perf_counter() - t
            t = time.perf_counter()
            for s_ in range(64):
                slots[:, 128 + s_] = 1
                step("decode", np.array([[1]], np.int64), np.array([[128 + s_]]), np.array([128 + s_], np.int64))
            decode_s = time.perf_counter() - t
        rows.append({"model": name, "graph": f"hfx onnx ({cache} cache)", "prefill_tokens_per_s": 128 / prefill_s,
                     "decode_tokens_per_s": 64 / decode_s, "max_abs_logits_diff": float(np.abs(got - want).max())})
        print(f"bench: runtime {name} {cache}: prefill {128 / prefill_s:.0f} tok/s, decode {64 / decode_s:.1f} tok/s, "
              f"diff {rows[-1]['max_abs_logits_diff']:.2e}", file=sys.stderr)
    return rows


def report(export_rows: list, runtime_rows: list, out_base: Path) -> None:
    md = [f"# hfx benchmarks — {out_base.name}", "",
          f"Machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} cores), {platform.platform()}; "
          f"hfx {subprocess.run([HFX, '--version'], capture_output=True, text=True).stdout.strip()}, "
          f"python {platform.python_version()}.", "",
          "## Export", "",
          "| model | tool | time (s) | × hfx onnx fp32 | × floor | peak RSS (MiB) | written (MiB) |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in dict.fromkeys(r["model"] for r in export_rows):
        rows = [r for r in export_rows if r["model"] == name]
        base = next((r for r in rows if r["tool"] == "hfx onnx fp32" and "seconds" in r), None)
        floor = base.get("floor_seconds") if base else None
        for r in rows:
            if "skipped" in r:
                md.append(f"| {name} | {r['tool']} | skipped: {r['skipped']} | | | | |")
            elif "error" in r:
                md.append(f"| {name} | {r['tool']} | failed: {' '.join(r['error'])[:120]} | | | | |")
            else:
                x_hfx = r["seconds"] / base["seconds"] if base else float("nan")
                f = r.get("floor_seconds", floor) or float("nan")
                md.append(f"| {name} | {r['tool']} | {r['seconds']:.2f} | {x_hfx:.1f}× | {r['seconds'] / f:.2f}× | "
                          f"{r['peak_rss'] / 2**20:.0f} | {r['bytes'] / 2**20:.0f} |")
    md += ["", "Floor: reading the checkpoint and writing the same number of bytes as that hfx output, "
           "fsync'd, in the same run.", "", "## Runtime (ONNX Runtime, CPU)", "",
           "| model | graph | prefill tok/s (prompt 128) | decode tok/s (batch 1, 64 steps) | max abs logits diff vs transformers |",
           "| --- | --- | ---: | ---: | ---: |"]
    for r in runtime_rows:
        md.append(f"| {r['model']} | {r['graph']} | {r['prefill_tokens_per_s']:.0f} | {r['decode_tokens_per_s']:.1f} | "
                  f"{r['max_abs_logits_diff']:.1e} |")
    out_base.with_suffix(".md").write_text("\n".join(md) + "\n")
    out_base.with_suffix(".json").write_text(json.dumps({"export": export_rows, "runtime": runtime_rows}, indent=2, default=str))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        timed = [r for r in export_rows if "seconds" in r]
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(timed) + 1.5))
        ax.barh([f"{r['model']}: {r['tool']}" for r in timed], [r["seconds"] for r in timed])
        ax.set_xscale("log")
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
    ap.add_argument("--no-runtime", action="store_true")
    args = ap.parse_args()
    names = args.models.split(",")
    out_dir = REPO / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    out_base = out_dir / f"{datetime.date.today().isoformat()}-{platform.node()}"
    export_rows, runtime_rows = [], []
    with tempfile.TemporaryDirectory(dir=CACHE if CACHE.exists() else None) as tmp:
        for name in names:
            export_rows += bench_export(name, args.runs, Path(tmp) / name)
            if not args.no_runtime and name != "tiny":
                runtime_rows += bench_runtime(name, Path(tmp) / name)
    report(export_rows, runtime_rows, out_base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
