#!/usr/bin/env python3
"""Greedy generation with an `hfx export --format openvino --for-generation` directory (numpy +
openvino only).

    python examples/generate_openvino.py OUT_DIR --input-ids "1,2,3;4,5" --max-new-tokens 16

The command-line contract of examples/generate_onnx.py: each `;`-separated prompt is a row of ONE
left-padded batch; the new token ids are printed as one JSON list per prompt, one line each. It
behaves like transformers' `generate(do_sample=False)`: once a row has emitted an EOS token, its
later tokens are the pad token, and the loop stops when every row is done, after --max-new-tokens
tokens, or at the end of a static cache. --print-logits FILE.npz saves each step's last-position
logits [steps, batch, vocab] and the tokens. Exit code 2: bad input (the message says what).

Everything else comes from the export directory (docs/GENERATION.md is the I/O contract):
  * export.json: the components and their files and metadata (`stateful`, the cache
    implementation and max_cache_len, each layer's cache geometry, a fixed batch / prompt length);
  * the models' input and output names (their own shapes where the metadata is silent);
  * generation_config.json: eos_token_id (an int or a list) and pad_token_id.

Three kinds of export:
  * stateful (the default of `--format openvino --for-generation`): one `decode` component
    (openvino_model.xml, the optimum-intel / OpenVINO GenAI convention) whose KV cache lives in the
    infer request's state (ReadValue/Assign). Inputs input_ids, attention_mask (everything seen so
    far in this sequence), position_ids and beam_idx (arange(batch) for greedy search); the state
    is reset before each sequence.
  * stateless, dynamic cache: past_key_values.{i}.* in, present.{i}.* out, fed back each step.
  * stateless, static cache: input./output.past_key_values.{i}.* of a fixed [B, kv_heads, M, hd];
    OpenVINO has no io-binding, so the step's output cache becomes the next step's input. Two sets
    of buffers alternate (ping-pong) as the request's own input and output tensors: nothing is
    copied between steps.

The models are compiled for the CPU with f32 inference precision and an f32 KV cache: the CPU
plugin's defaults are bf16 compute on CPUs that have it, and a u8-quantised KV cache wherever it
fuses the stateful cache into its own attention node (4-D attention: MHA), each moving the logits
by ~1e-2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import openvino as ov

CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}


class UsageError(Exception):
    """A request this export cannot serve: exit 2 with the message."""


def fixed(dim):
    """A model dimension as an int, or None when it is dynamic (an `--dynamic` export)."""
    return dim.get_length() if dim.is_static else None


class Component:
    """One OpenVINO model of the export, compiled, with its metadata (export.json)."""

    def __init__(self, core: ov.Core, out_dir: Path, name: str, entry: dict):
        self.name, self.role, self.meta = name, entry.get("role", name), entry.get("metadata", {})
        path = out_dir / entry["file"]
        if not path.is_file():
            raise UsageError(f"{out_dir}/export.json names {entry['file']} for {name}, which is not there")
        model = core.read_model(str(path))
        self.compiled = core.compile_model(model, "CPU", CPU_CONFIG)
        self.inputs = {i.get_any_name(): i for i in self.compiled.inputs}
        self.outputs = {o.get_any_name(): o for o in self.compiled.outputs}
        if "input_ids" not in self.inputs or "logits" not in self.outputs:
            raise UsageError(f"{path}: not a causal LM (inputs {list(self.inputs)}, outputs {list(self.outputs)})")
        # batch_size / sequence_length: an int when the export fixed it, null when dynamic
        graph_batch, graph_seq = (fixed(d) for d in self.inputs["input_ids"].get_partial_shape())
        self.batch = self.meta.get("batch_size", graph_batch)
        self.seq = self.meta.get("sequence_length", graph_seq)
        # "stateful": true for the KV cache in ReadValue/Assign variables (an old export without
        # the key: stateful when the model has a beam_idx input and no cache inputs)
        self.cache_inputs = [n for n in self.inputs if "past_key_values." in n]
        self.stateful = bool(self.meta.get("stateful", "beam_idx" in self.inputs and not self.cache_inputs))
        # "cache": {"implementation": "dynamic"|"static", "max_cache_len": M|null,
        #           "layers": [{"heads", "key_dim", "value_dim", "length", "sliding_window"}, ...]}
        self.cache = self.meta.get("cache") or {}
        self.static = self.cache.get("implementation", "static" if "cache_position" in self.inputs
                                     else "dynamic") == "static"
        self.request = self.compiled.create_infer_request()

    def cache_shape(self, name: str, batch: int, length: int):
        """[batch, kv_heads, length, head_dim] of cache input `name`, from the per-layer geometry
        (the model's own input shape where the metadata has none)."""
        layer, kind = name.split("past_key_values.")[1].split(".")
        layers = self.cache.get("layers")
        if layers:
            geo = layers[int(layer)]
            return (batch, geo["heads"], length, geo["key_dim" if kind == "key" else "value_dim"])
        shape = self.inputs[name].get_partial_shape()
        return (batch, fixed(shape[1]), length, fixed(shape[3]))

    def cache_dtype(self, name: str):
        return self.inputs[name].get_element_type().to_dtype()

    def feed(self, values: dict) -> dict:
        """Only the inputs the model has (position_ids may have been folded away), as int64 except
        beam_idx (int32)."""
        out = {}
        for name, value in values.items():
            if name in self.inputs:
                dtype = self.inputs[name].get_element_type().to_dtype()
                out[name] = np.ascontiguousarray(value, dtype=dtype)
        return out


class Export:
    def __init__(self, out_dir: Path, core: ov.Core | None = None):
        if not (out_dir / "export.json").is_file():
            raise UsageError(f"{out_dir} has no export.json: not an hfx export directory")
        manifest = json.loads((out_dir / "export.json").read_text())
        if manifest.get("export_format", "openvino") != "openvino":
            raise UsageError(f"{out_dir} is an {manifest['export_format']} export, not openvino "
                             "(examples/generate_onnx.py runs ONNX exports)")
        # "generation": {"cache_implementation", "max_cache_len", "multi_token_decode", "stateful"}
        self.generation = manifest.get("generation") or {}
        core = core or ov.Core()
        roles = {entry.get("role", name): (name, entry) for name, entry in manifest["components"].items()}
        if "decode" not in roles:
            raise UsageError(f"{out_dir}/export.json has no decode component: export with --for-generation")
        self.decode = Component(core, out_dir, *roles["decode"])
        # None for a stateful or --multi-token-decode export: decode takes the prompt
        self.prefill = Component(core, out_dir, *roles["prefill"]) if "prefill" in roles else None
        self.stateful = self.decode.stateful
        self.static = self.decode.static and not self.stateful
        self.max_cache_len = None
        if self.static:
            # a --dynamic export accepts any M (the buffers are sized here, at load time); a
            # fixed-shape one has it in the model too
            m = (self.decode.cache.get("max_cache_len") or self.generation.get("max_cache_len")
                 or fixed(self.decode.inputs["attention_mask"].get_partial_shape()[1]))
            if not m:
                raise UsageError(f"static cache export in {out_dir} without a max_cache_len in export.json")
            self.max_cache_len = int(m)


# ---- the three kinds of KV cache ---------------------------------------------------------------


def last_logits(logits: np.ndarray) -> np.ndarray:
    """[B, vocab] of the last position: logits are [B, 1, vocab] (last kept) or [B, seq, vocab]."""
    return np.array(logits[:, -1, :], dtype=np.float32)  # a copy: the request reuses its buffer


class StatefulCache:
    """The KV cache lives in the request's variables: reset before the sequence, then each step
    appends to it. attention_mask covers everything seen so far (like the dynamic cache's); beam_idx
    reorders the cache rows before each step (arange(batch): greedy search keeps every row)."""

    def __init__(self, decode: Component, batch: int):
        self.request = decode.request
        self.request.reset_state()  # a new sequence: the variables start empty
        self.mask = np.zeros((batch, 0), np.int64)
        self.beam_idx = np.arange(batch, dtype=np.int32)

    def run(self, comp: Component, ids, new_mask, positions):
        self.mask = np.concatenate([self.mask, new_mask], axis=1)
        feed = comp.feed({"input_ids": ids, "attention_mask": self.mask, "position_ids": positions,
                          "beam_idx": self.beam_idx})
        self.request.infer(feed)
        return last_logits(self.request.get_tensor("logits").data)


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
        feed = comp.feed({"input_ids": ids, "attention_mask": self.mask, "position_ids": positions})
        feed.update({n: self.past[n] for n in comp.cache_inputs})  # none for prefill
        out = comp.request.infer(feed)  # share_outputs=False: numpy copies, safe to keep
        for name in self.past:  # past_key_values.{i}.key -> present.{i}.key
            self.past[name] = out[comp.outputs["present." + name[len("past_key_values."):]]]
        # logits_to_keep 1: [B, 1, vocab]; 0 (--logits all): [B, seq, vocab]. Either way, the last.
        return last_logits(out[comp.outputs["logits"]])


class StaticCache:
    """Two zero-initialised sets of [B, kv_heads, M, head_dim] buffers per cache tensor: each step
    reads input.past_key_values.X from one set and writes output.past_key_values.X into the other
    (set as the request's own output tensors), then they swap. The model copies the cache once per
    step, as it writes its new slots (OpenVINO has no in-place binding); the loop copies nothing.

    attention_mask is one [B, M] row of slot flags (1 = the slot holds a real token, including the
    slots written in this step); the model derives causality and sliding windows from
    cache_position, so no [query, M] mask is ever built here."""

    def __init__(self, decode: Component, batch: int, max_cache_len: int):
        self.M, self.used = max_cache_len, 0
        self.mask = np.zeros((batch, max_cache_len), np.int64)
        names = [n[len("input."):] for n in decode.cache_inputs]  # past_key_values.{i}.key
        self.current = {n: np.zeros(decode.cache_shape("input." + n, batch, max_cache_len),
                                    decode.cache_dtype("input." + n)) for n in names}
        self.other = {n: np.zeros_like(a) for n, a in self.current.items()}

    def run(self, comp: Component, ids, new_mask, positions):
        seq = ids.shape[1]
        if self.used + seq > self.M:  # the model would refuse it too (ScatterUpdate bounds)
            raise UsageError(f"static cache full: {self.used} + {seq} tokens > max_cache_len {self.M}")
        slots = np.arange(self.used, self.used + seq, dtype=np.int64)
        self.mask[:, slots] = new_mask
        self.used += seq
        request = comp.request
        for name, value in comp.feed({"input_ids": ids, "position_ids": positions, "cache_position": slots,
                                      "attention_mask": self.mask}).items():
            request.set_tensor(name, ov.Tensor(value))  # copies the small int64 inputs
        for name in self.current:
            # ov.Tensor(array, shared_memory=True) wraps the numpy buffer without copying
            request.set_tensor("input." + name, ov.Tensor(self.current[name], shared_memory=True))
            request.set_tensor("output." + name, ov.Tensor(self.other[name], shared_memory=True))
        request.infer()
        for name in self.current:
            written = request.get_tensor("output." + name)
            if written.data.ctypes.data != self.other[name].ctypes.data:
                # the plugin chose its own output memory (it may, for a dynamic output): take it
                self.other[name] = np.array(written.data)
        self.current, self.other = self.other, self.current
        return last_logits(request.get_tensor("logits").data)


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
    first = export.prefill or export.decode  # stateful / multi-token decode: the prompt runs through decode
    for comp in (first, export.decode):
        if comp.batch is not None and comp.batch != batch:
            raise UsageError(f"{comp.name} was exported for batch {comp.batch}, got {batch} prompts")
    vocab = fixed(export.decode.outputs["logits"].get_partial_shape()[-1])
    bad = [t for p in prompts for t in p if t < 0 or (vocab is not None and t >= vocab)]
    if bad:
        raise UsageError(f"token id {bad[0]} outside the vocabulary [0, {vocab})")
    length = max(map(len, prompts))
    if first.seq is not None and first.seq != length:  # a fixed prompt length: pad up to it
        if length > first.seq:
            raise UsageError(f"prompt of {length} tokens > the exported sequence length {first.seq}")
        length = first.seq
    if export.static and length > export.max_cache_len:
        raise UsageError(f"prompt of {length} tokens > max_cache_len {export.max_cache_len}")

    if export.stateful:
        cache = StatefulCache(export.decode, batch)
    elif export.static:
        cache = StaticCache(export.decode, batch, export.max_cache_len)
    else:
        cache = DynamicCache(export.decode, batch)
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
            print(f"generate_openvino: static cache full (max_cache_len {cache.M}): stopped after "
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
    ap.add_argument("out_dir", type=Path, help="a directory written by `hfx export --format openvino --for-generation`")
    ap.add_argument("--input-ids", required=True, help='prompts: "1,2,3;4,5" (one batch, left-padded)')
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--print-logits", type=Path, metavar="FILE.npz",
                    help="save each step's last-position logits [steps, batch, vocab] and the tokens")
    args = ap.parse_args(argv)
    try:
        if args.max_new_tokens < 1:
            raise UsageError("--max-new-tokens must be at least 1")
        prompts = parse_prompts(args.input_ids)
        export = Export(args.out_dir)
        eos_ids, pad_id = read_generation_config(args.out_dir)
        tokens, logits = generate(export, prompts, args.max_new_tokens, eos_ids, pad_id)
    except UsageError as e:
        print(f"generate_openvino: {e}", file=sys.stderr)
        return 2
    if args.print_logits:
        np.savez(args.print_logits, logits=logits, tokens=tokens)
    for row in tokens:
        print(json.dumps([int(t) for t in row]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
