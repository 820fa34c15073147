#!/usr/bin/env python3
"""Greedy generation with an `hfx export --format dynamo --for-generation` directory (torch only).

    python examples/generate_torch.py OUT_DIR --input-ids "1,2,3;4,5" --max-new-tokens 16

The same command line, output and loop as examples/generate_onnx.py (examples/decode_loop.py):
each `;`-separated prompt is a row of one left-padded batch, the new token ids are printed as one
JSON list per prompt. Each component (prefill.pt2, decode.pt2, or one multi-token decode.pt2) is
loaded with torch.export.load and run through `.module()`; its inputs are the ones export.json
lists for it (input_names), in that order. A growing cache comes back as outputs (present.{i}.*,
fed back as the next past); a static cache is a set of zero-initialised tensors the program writes
in place (torch.export's input mutation: `.module()` updates the caller's tensors), so nothing is
copied between steps.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401 (quantized_decomposed's ops: a quantized export's dequantize)

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # decode_loop, also when this file is loaded by path (the tests)
    sys.path.insert(0, HERE)
import decode_loop  # noqa: E402
from decode_loop import UsageError, left_pad, parse_prompts, read_generation_config  # noqa: E402,F401

PROG = "generate_torch"


class Component(decode_loop.Component):
    """One torch.export program of the export and its metadata (export.json)."""

    def __init__(self, out_dir: Path, name: str, entry: dict):
        super().__init__(name, entry)
        self.program = torch.export.load(str(out_dir / entry["file"]))
        self.module = self.program.module()
        names = self.meta["input_names"]
        specs = [s for s in self.program.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
        metas = {n.name: n.meta.get("val") for n in self.program.graph.nodes if n.op == "placeholder"}
        self.inputs = {name: metas.get(s.arg.name) for name, s in zip(names, specs)}
        self.outputs = self.meta["output_names"]
        self.read_graph()

    def run(self, feed: dict) -> dict:
        """The program's outputs by name (numpy), on the inputs of `feed` it takes. A static cache's
        output.X is its input.X written in place (the program mutates that input and does not return
        it), so it comes back as that input's array; so does a recurrent state's present.{i}.conv / .ssm
        (its past.{i}.* replaced in place)."""
        args = {n: torch.from_numpy(np.ascontiguousarray(feed[n])) for n in self.inputs}
        out, mutated = self.call(args)
        out = {n: v.numpy() for n, v in out.items()}
        out.update({n: args[source].numpy() for n, source in mutated.items()})
        return out

    def call(self, args: dict):
        """The program on `args` (input name -> tensor, every input): the outputs it returns by name,
        and {output: the input it mutated instead}."""
        with torch.no_grad():
            outs = self.module(*(args[n] for n in self.inputs))
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        mutated = {n: "input." + n[len("output."):] for n in self.outputs
                   if n.startswith("output.") and "input." + n[len("output."):] in args}
        mutated.update({n: "past." + n[len("present."):] for n in self.outputs
                        if n.startswith("present.") and decode_loop.is_state("past." + n[len("present."):])
                        and "past." + n[len("present."):] in args})
        return dict(zip([n for n in self.outputs if n not in mutated], outs)), mutated

    def graph_dim(self, name: str, axis: int):
        dim = self.inputs[name].shape[axis]
        return dim if isinstance(dim, int) else None

    def cache_dtype(self, name: str):
        return torch.empty(0, dtype=self.inputs[name].dtype).numpy().dtype


class Export(decode_loop.Export):
    component = Component


class DynamicCache(decode_loop.PastCache):
    """Each step runs the program on the past and keeps its present.{i}.* as the next past."""

    def run(self, comp: Component, ids, new_mask, positions):
        out = comp.run(self.step_feed(comp, ids, new_mask, positions))
        self.take_present(out.__getitem__)
        return out["logits"][:, -1, :]


class StaticCache(decode_loop.StaticSlots):
    """One zero-initialised [B, kv_heads, M, head_dim] tensor per cache input, passed to every call:
    the program writes this step's keys and values into slots `cache_position` of it."""

    def __init__(self, decode: Component, batch: int, max_cache_len: int):
        super().__init__(batch, max_cache_len)
        # a recurrent layer's states too: the program replaces them in place (mutated inputs)
        self.buffers = {name: torch.zeros(decode.cache_shape(name, batch, max_cache_len),
                                          dtype=decode.inputs[name].dtype) for name in decode.cache_inputs}

    def run(self, comp: Component, ids, new_mask, positions):
        slots = self.take(new_mask)
        feed = {n: np.asarray(v, np.int64) for n, v in (("position_ids", positions), ("cache_position", slots),
                                                          ("attention_mask", self.mask))}
        feed.update(decode_loop.token_feed(ids))  # ids, or a VLM's embeddings
        args = {n: self.buffers[n] if n in self.buffers else torch.from_numpy(np.ascontiguousarray(feed[n]))
                for n in comp.inputs}
        out, _ = comp.call(args)
        for name, value in out.items():  # a prompt's recurrent states come back as outputs
            past = "past." + name[len("present."):]
            if name.startswith("present.") and past in self.buffers:
                self.buffers[past].copy_(value)
        return out["logits"].numpy()[:, -1, :]


new_cache = decode_loop.cache_for(DynamicCache, StaticCache)


generate = functools.partial(decode_loop.generate, new_cache=new_cache, prog=PROG)


def main(argv=None) -> int:
    return decode_loop.main(argv, prog=PROG, doc=__doc__, export_command="hfx export --format dynamo --for-generation",
                            load_export=Export, generate=generate)


if __name__ == "__main__":
    sys.exit(main())
