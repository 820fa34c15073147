"""The Python system's generation I/O profile ("io": "seed") in the tests: its cache modes, hfx's
export in that profile, and the Python system's own export of the same checkpoint to compare
with (test_seed_io.py for ONNX, test_dynamo_seed.py for torch.export)."""

from __future__ import annotations

import copy
import json
import warnings
import zipfile

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


def pt2_call(path):
    """What a caller of a .pt2 program sees: its input and output specs (contexts parsed), its user
    inputs in order (name, dtype, rank; constant leaves as their values, None's as None) and the forward's argument
    names."""
    with zipfile.ZipFile(path) as z:
        root = z.namelist()[0].split("/")[0]
        ep = json.loads(z.read(f"{root}/models/model.json"))
    g = ep["graph_module"]
    sig = g["module_call_graph"][0]["signature"]

    def spec(text):
        def node(s):
            ctx = s["context"]
            return s["type"], json.loads(ctx) if isinstance(ctx, str) else ctx, [node(c) for c in s["children_spec"]]
        return node(json.loads(text)[1])
    user = {s["user_input"]["arg"]["as_tensor"]["name"] for s in g["signature"]["input_specs"] if "user_input" in s}
    tensors = g["graph"]["tensor_values"]
    def described(a):
        name = a["as_tensor"]["name"]
        return name, tensors[name]["dtype"], len(tensors[name]["sizes"])
    inputs = [described(a) if "as_tensor" in a else a.get("as_int", a.get("as_bool"))  # (None's as_none: None)
              for a in g["graph"]["inputs"] if "as_tensor" not in a or a["as_tensor"]["name"] in user]
    return {"in_spec": spec(sig["in_spec"]), "out_spec": spec(sig["out_spec"]), "inputs": inputs,
            "arg_names": sig["forward_arg_names"]}


def pt2_prefill_then_decode(out, prompt, new_tokens, static):
    """The two-program layout as a torch caller runs it: prefill(input_ids, position_ids, cache=<its sample's empty
    cache>) returns a ModelOutput whose cache object decode takes, one token per call (a static cache updated in
    place, a growing one returned anew): the greedy tokens."""
    prefill_ep = torch.export.load(str(out / "prefill.pt2"))
    decode_ep = torch.export.load(str(out / "decode.pt2"))
    prefill, decode = prefill_ep.module(), decode_ep.module()
    n = prompt.shape[1]
    _, kwargs = prefill_ep.example_inputs
    positions = "position_ids" in kwargs  # (Mamba's take none)
    call = {"input_ids": prompt, "cache": copy.deepcopy(kwargs["cache"])}
    if positions:
        call["position_ids"] = torch.arange(n)[None]
    if "attention_mask" in kwargs:  # a layer_types model's static prefill: {type: None}
        call["attention_mask"] = kwargs["attention_mask"]
    res = prefill(**call)
    cache = res.cache
    tokens = [int(res.logits[0, -1].argmax())]
    for position in range(n, n + new_tokens - 1):
        step = {"input_ids": torch.tensor([[tokens[-1]]]), "cache": cache}
        if positions:
            step["position_ids"] = torch.tensor([[position]])
        if static:
            step["attention_mask"] = (torch.arange(MAX_CACHE_LEN) <= position)[None, None, None]
        step.update({k: None for k, v in decode_ep.example_inputs[1].items() if v is None})  # (Mamba's mask)
        res = decode(**step)
        if not static:
            cache = res.cache
        tokens.append(int(res.logits[0, -1].argmax()))
    return tokens
