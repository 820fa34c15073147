#!/usr/bin/env python3
"""Greedy generation with an `hfx export --for-generation` directory (numpy + onnxruntime only).

    python examples/generate_onnx.py OUT_DIR --input-ids "1,2,3;4,5" --max-new-tokens 16

Each `;`-separated prompt is a row of ONE left-padded batch; the new token ids are printed as one
JSON list per prompt, one line each. It behaves like transformers'
`generate(do_sample=False)`: once a row has emitted an EOS token, its later tokens are the pad
token, and the loop stops when every row is done or after --max-new-tokens tokens.

Everything else comes from the export directory (docs/GENERATION.md is the contract):
  * export.json: the components (`prefill` + `decode`, or `decode` alone for a multi-token-decode
    export), their files and metadata: cache implementation and max_cache_len, each layer's cache
    geometry, a fixed batch / prompt length (static shapes), the logits kept;
  * the graphs' input and output names (the graph's own shapes where the metadata is silent);
  * generation_config.json: eos_token_id (an int or a list) and pad_token_id.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

NUMPY_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64}


class UsageError(Exception):
    """A request this export cannot serve: exit 2 with the message."""


def fixed(dim):
    """A graph dimension as an int, or None when it is symbolic (an `--dynamic` export)."""
    return dim if isinstance(dim, int) else None


class Component:
    """One ONNX graph of the export, its session and its metadata (export.json)."""

    def __init__(self, out_dir: Path, name: str, entry: dict):
        self.name, self.role, self.meta = name, entry.get("role", name), entry.get("metadata", {})
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(out_dir / entry["file"]), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name: i for i in self.session.get_inputs()}
        self.outputs = [o.name for o in self.session.get_outputs()]
        # batch_size / sequence_length: an int when the export fixed it, null when symbolic
        graph_batch, graph_seq = (fixed(d) for d in self.inputs["input_ids"].shape)
        self.batch = self.meta.get("batch_size", graph_batch)
        self.seq = self.meta.get("sequence_length", graph_seq)
        # "cache": {"implementation": "dynamic"|"static", "max_cache_len": M|null,
        #           "layers": [{"heads", "key_dim", "value_dim", "length", "sliding_window"}, ...]}
        self.cache = self.meta.get("cache") or {}
        self.static = self.cache.get("implementation", "static" if "cache_position" in self.inputs
                                     else "dynamic") == "static"
        # past_key_values.{i}.key/value (dynamic) or input.past_key_values.{i}.key/value (static)
        self.cache_inputs = [n for n in self.inputs if "past_key_values." in n]

    def cache_shape(self, name: str, batch: int, length: int):
        """[batch, kv_heads, length, head_dim] of cache input `name`, from the per-layer geometry
        (the graph's own input shape where the metadata has none)."""
        layer, kind = name.split("past_key_values.")[1].split(".")
        layers = self.cache.get("layers")
        if layers:
            geo = layers[int(layer)]
            return (batch, geo["heads"], length, geo["key_dim" if kind == "key" else "value_dim"])
        _, heads, _, dim = self.inputs[name].shape
        return (batch, heads, length, dim)

    def cache_dtype(self, name: str):
        return NUMPY_DTYPES[self.inputs[name].type]


class Export:
    def __init__(self, out_dir: Path):
        if not (out_dir / "export.json").is_file():
            raise UsageError(f"{out_dir} has no export.json: not an hfx export directory")
        manifest = json.loads((out_dir / "export.json").read_text())
        # "generation": {"cache_implementation", "max_cache_len", "multi_token_decode"}
        self.generation = manifest.get("generation") or {}
        comps = {name: Component(out_dir, name, entry) for name, entry in manifest["components"].items()}
        by_role = {c.role: c for c in comps.values()}
        self.prefill = by_role.get("prefill")  # None for --multi-token-decode: decode takes the prompt
        self.decode = by_role.get("decode")
        if self.decode is None:
            raise UsageError(f"{out_dir}/export.json has no decode component: export with --for-generation")
        self.static = self.decode.static
        self.max_cache_len = None
        if self.static:
            # an --dynamic export accepts any M (the buffers are sized here, at load time); a
            # fixed-shape one has it in the graph too
            m = (self.decode.cache.get("max_cache_len") or self.generation.get("max_cache_len")
                 or fixed(self.decode.inputs["attention_mask"].shape[1]))
            if not m:
                raise UsageError(f"static cache export in {out_dir} without a max_cache_len in export.json")
            self.max_cache_len = int(m)


# ---- the two kinds of KV cache ---------------------------------------------------------------


class DynamicCache:
    """past_key_values.{i}.* grow by concatenation: each step feeds back the previous present.{i}.*.
    attention_mask covers the cache and the new tokens, so it grows by the new tokens' flags."""

    def __init__(self, decode: Component, batch: int):
        # an empty past [B, kv_heads, 0, head_dim] is how a multi-token decode takes the prompt
        self.past = {n: np.zeros(decode.cache_shape(n, batch, 0), decode.cache_dtype(n))
                     for n in decode.cache_inputs}
        self.mask = np.zeros((batch, 0), np.int64)

    def run(self, comp: Component, ids, new_mask, positions):
        self.mask = np.concatenate([self.mask, new_mask], axis=1)
        feed = {"input_ids": ids, "attention_mask": self.mask, "position_ids": positions}
        feed.update({n: self.past[n] for n in comp.cache_inputs})  # none for prefill
        out = dict(zip(comp.outputs, comp.session.run(None, feed)))
        for name in self.past:  # past_key_values.{i}.key -> present.{i}.key
            self.past[name] = out["present." + name[len("past_key_values."):]]
        # logits_to_keep 1: [B, 1, vocab]; 0 (--logits all): [B, seq, vocab]. Either way, the last.
        return out["logits"][:, -1, :]


class StaticCache:
    """One zero-initialised [B, kv_heads, M, head_dim] OrtValue per cache tensor, bound as BOTH
    input.past_key_values.X and output.past_key_values.X: the graph writes this step's keys and
    values into slots `cache_position` in place; nothing is copied between steps.

    attention_mask is one [B, M] row of slot flags (1 = the slot holds a real token, including the
    slots written in this step); the graph derives causality and sliding windows from
    cache_position, so no [query, M] mask is ever built here."""

    def __init__(self, decode: Component, batch: int, max_cache_len: int):
        self.M, self.used = max_cache_len, 0
        self.mask = np.zeros((batch, max_cache_len), np.int64)
        self.buffers = {}
        for name in decode.cache_inputs:
            zeros = np.zeros(decode.cache_shape(name, batch, max_cache_len), decode.cache_dtype(name))
            self.buffers[name[len("input."):]] = ort.OrtValue.ortvalue_from_numpy(zeros)  # shares `zeros`

    def run(self, comp: Component, ids, new_mask, positions):
        seq = ids.shape[1]
        if self.used + seq > self.M:  # the graph would refuse it too (ScatterElements bounds check)
            raise UsageError(f"static cache full: {self.used} + {seq} tokens > max_cache_len {self.M}")
        slots = np.arange(self.used, self.used + seq, dtype=np.int64)
        self.mask[:, slots] = new_mask
        self.used += seq
        binding = comp.session.io_binding()
        binding.bind_output("logits")  # first bound output: get_outputs()[0]
        for name, value in (("input_ids", ids), ("position_ids", positions),
                            ("cache_position", slots), ("attention_mask", self.mask)):
            binding.bind_cpu_input(name, np.ascontiguousarray(value, dtype=np.int64))
        for name, buf in self.buffers.items():
            binding.bind_ortvalue_input("input." + name, buf)
            binding.bind_ortvalue_output("output." + name, buf)
        comp.session.run_with_iobinding(binding)
        return binding.get_outputs()[0].numpy()[:, -1, :]


# ---- the loop --------------------------------------------------------------------------------


def left_pad(prompts, pad_id, length):
    """[B, length] ids and mask, real tokens at the right: each row's next token comes right after
    the last column, so one decode step serves every row."""
    ids = np.full((len(prompts), length), pad_id, np.int64)
    mask = np.zeros((len(prompts), length), np.int64)
    for row, prompt in enumerate(prompts):
        ids[row, length - len(prompt):] = prompt
        mask[row, length - len(prompt):] = 1
    return ids, mask


def generate(export: Export, prompts, max_new_tokens: int, eos_ids, pad_id, log=sys.stderr):
    """Greedy search. Returns (tokens [B, n], logits [n, B, vocab]); n < max_new_tokens when every
    row has finished or the static cache is full."""
    batch = len(prompts)
    first = export.prefill or export.decode  # multi-token decode: the prompt runs through decode
    for comp in (first, export.decode):
        if comp.batch is not None and comp.batch != batch:
            raise UsageError(f"{comp.name} was exported for batch {comp.batch}, got {batch} prompts")
    length = max(map(len, prompts))
    if first.seq is not None and first.seq != length:  # a fixed prompt length: pad up to it
        if length > first.seq:
            raise UsageError(f"prompt of {length} tokens > the exported sequence length {first.seq}")
        length = first.seq
    if export.static and length > export.max_cache_len:
        raise UsageError(f"prompt of {length} tokens > max_cache_len {export.max_cache_len}")

    cache = StaticCache(export.decode, batch, export.max_cache_len) if export.static \
        else DynamicCache(export.decode, batch)
    ids, mask = left_pad(prompts, pad_id, length)
    # generate()'s position ids: cumsum(mask) - 1, 0 on padding; then +1 per step for every row
    positions = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
    logits = cache.run(first, ids, mask, positions)

    tokens, all_logits = [], []
    done = np.zeros(batch, bool)
    for step in range(max_new_tokens):
        next_ids = logits.argmax(axis=-1)
        if eos_ids:
            next_ids = np.where(done, pad_id, next_ids)  # finished rows only get padding
            done |= np.isin(next_ids, eos_ids)
        tokens.append(next_ids)
        all_logits.append(logits)
        if done.all() or step == max_new_tokens - 1:
            break
        if export.static and cache.used >= cache.M:
            # the last token needs no slot (transformers sizes its static cache max_length - 1 too)
            print(f"generate_onnx: static cache full (max_cache_len {cache.M}): stopped after "
                  f"{len(tokens)} new tokens", file=log)
            break
        positions = positions[:, -1:] + 1
        logits = cache.run(export.decode, next_ids[:, None].astype(np.int64), np.ones((batch, 1), np.int64), positions)
    return np.stack(tokens, axis=1), np.stack(all_logits)


def read_generation_config(out_dir: Path):
    """(eos ids list, pad id): like generate(), pad defaults to the first EOS id."""
    path = out_dir / "generation_config.json"
    cfg = json.loads(path.read_text()) if path.is_file() else {}
    eos = cfg.get("eos_token_id")
    eos_ids = [] if eos is None else [int(e) for e in (eos if isinstance(eos, list) else [eos])]
    pad = cfg.get("pad_token_id")
    pad_id = int(pad) if pad is not None else (eos_ids[0] if eos_ids else 0)
    return eos_ids, pad_id


def parse_prompts(text: str):
    try:
        prompts = [[int(t) for t in p.split(",")] for p in text.split(";")]
    except ValueError:
        raise UsageError(f"--input-ids must be comma-separated integers, prompts separated by ';': {text!r}")
    return prompts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help="a directory written by `hfx export --for-generation`")
    ap.add_argument("--input-ids", required=True, help='prompts: "1,2,3;4,5" (one batch, left-padded)')
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--print-logits", type=Path, metavar="FILE.npz",
                    help="save each step's last-position logits [steps, batch, vocab] and the tokens")
    args = ap.parse_args(argv)
    try:
        if args.max_new_tokens < 1:
            raise UsageError("--max-new-tokens must be at least 1")
        export = Export(args.out_dir)
        eos_ids, pad_id = read_generation_config(args.out_dir)
        tokens, logits = generate(export, parse_prompts(args.input_ids), args.max_new_tokens, eos_ids, pad_id)
    except UsageError as e:
        print(f"generate_onnx: {e}", file=sys.stderr)
        return 2
    if args.print_logits:
        np.savez(args.print_logits, logits=logits, tokens=tokens)
    for row in tokens:
        print(json.dumps([int(t) for t in row]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
