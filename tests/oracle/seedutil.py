"""The Python system's generation I/O profile ("io": "seed") in the tests: its cache modes, hfx's
export in that profile, and the Python system's own export of the same checkpoint to compare
with (test_seed_io.py for ONNX, test_dynamo_seed.py for torch.export)."""

from __future__ import annotations

import json
import warnings

import torch

from conftest import describe, run_hfx

MAX_CACHE_LEN = 64
# mode → (hfx's flags, the seed's cache_implementation, its multi_token_decode)
MODES = {
    "dynamic": ([], None, False),
    "static": (["--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN)], "static", False),
    "dynamic-multi": (["--multi-token-decode"], None, True),
    "static-multi": (["--multi-token-decode", "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN)], "static", True),
}


def hfx_seed_export(checkpoint, out, fmt, mode):
    """`hfx export --for-generation` of `fmt` in the seed's profile, in cache mode `mode`."""
    cfg = out.parent / f"{out.name}-cfg.json"
    cfg.write_text(json.dumps({"export_format": fmt, "dynamic": True, "io": "seed"}))
    proc = run_hfx(["export", checkpoint, out, "--config", cfg, "--for-generation", "--quiet", *MODES[mode][0]])
    assert proc.returncode == 0, describe(proc)
    return out


def seed_exporter(tmp_path_factory, checkpoint_of, fmt):
    """export(name, mode): transformers.exporters' own export_for_generation of a checkpoint in
    `fmt` ("onnx" or "dynamo"), per cache mode, each made once."""
    from transformers import AutoModelForCausalLM, GenerationConfig
    from transformers.exporters import DynamoExporter, OnnxExporter
    from transformers.exporters.configs import DynamoConfig, OnnxConfig

    exporter, config = {"onnx": (OnnxExporter, OnnxConfig), "dynamo": (DynamoExporter, DynamoConfig)}[fmt]
    done = {}

    def export(name, mode):
        if (name, mode) not in done:
            out = tmp_path_factory.mktemp(f"seed_{fmt}") / f"{name}-{mode}"
            model = AutoModelForCausalLM.from_pretrained(str(checkpoint_of(name))).eval()
            ids = torch.tensor([[1, 5, 9, 3]])
            cache, multi = MODES[mode][1], MODES[mode][2]
            gen = GenerationConfig(cache_implementation=cache, max_cache_len=MAX_CACHE_LEN) if cache else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exported = exporter().export_for_generation(
                    model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, config(dynamic=True),
                    generation_config=gen, multi_token_decode=multi)
                exported.save_pretrained(str(out))
            done[(name, mode)] = out
        return done[(name, mode)]
    return export
