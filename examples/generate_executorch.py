#!/usr/bin/env python3
"""Greedy generation with an `hfx export --format executorch --for-generation` directory, in the
ExecuTorch runtime (executorch.runtime; the executorch wheel and torch, no transformers).

    python examples/generate_executorch.py OUT_DIR --input-ids "1,2,3;4,5" --max-new-tokens 16

The same command line, output and loop as examples/generate_onnx.py (examples/decode_loop.py):
each `;`-separated prompt is a row of one left-padded batch, the new token ids are printed as one
JSON list per prompt. Each component (prefill.pte, decode.pte, or one multi-token decode.pte) is
loaded with executorch.runtime and its `forward` method executed with the inputs export.json
lists for it (input_names), in that order. A growing cache comes back as outputs (present.{i}.*,
fed back as the next past). A static cache is one zero-initialised tensor per cache input that the
program writes in place (aten::index_put_ at cache_position); the program also returns it, and the
loop keeps what it returns, which is the caller's own tensor when the export planned no memory for
its inputs (alloc_graph_input false) and the runtime's copy otherwise.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import torch

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # decode_loop, also when this file is loaded by path (the tests)
    sys.path.insert(0, HERE)
import decode_loop  # noqa: E402
from decode_loop import UsageError  # noqa: E402,F401

PROG = "generate_executorch"

DTYPES = {"float32": np.float32, "float16": np.float16}
SCALAR_TYPES = {6: np.float32, 5: np.float16, 3: np.int32}  # ExecuTorch's ScalarType codes: a cache input's own dtype


class Component(decode_loop.Component):
    """One .pte program of the export and its metadata (export.json). Its dims come from the
    metadata: an ExecuTorch program holds the upper bound of a dynamic dim, not the dim."""

    def __init__(self, out_dir: Path, name: str, entry: dict):
        super().__init__(name, entry)
        from executorch.runtime import Runtime

        self.program = Runtime.get().load_program(str(out_dir / entry["file"]))
        self.method = self.program.load_method("forward")
        self.inputs = {n: None for n in self.meta["input_names"]}
        self.outputs = self.meta["output_names"]
        dtype = self.meta.get("dtype", "float32")
        if dtype not in DTYPES:
            raise UsageError(f"{name}: a {dtype} cache is not run by this loop (float32, float16)")
        self.dtype = DTYPES[dtype]
        self.read_graph()

    def graph_dim(self, name: str, axis: int):
        return None  # export.json says every fixed dim (batch_size, sequence_length, max_cache_len)

    def deepstack_layers(self) -> int:
        """(a fixed dim: the program's bound is the dim)"""
        if "deepstack_embeds" not in self.inputs:
            return 0
        return int(self.method.metadata.input_tensor_meta(list(self.inputs).index("deepstack_embeds")).sizes()[0])

    def cache_dtype(self, name: str):
        """The program's own dtype for input `name` (an n-gram layer's ids are int32, an index key may be float32 in
        a float16 model), else the export's."""
        meta = self.method.metadata
        code = int(meta.input_tensor_meta(list(self.inputs).index(name)).dtype())
        return SCALAR_TYPES.get(code, self.dtype)

    def execute(self, args: list) -> dict:
        outs = self.method.execute([tensor(a) for a in args])
        return dict(zip(self.outputs, outs))

    def run(self, feed: dict) -> dict:
        """The method's outputs by name (numpy copies: the runtime reuses its output memory), on the
        inputs of `feed` it takes."""
        return {n: v.numpy().copy() for n, v in self.execute([feed[n] for n in self.inputs]).items()}


def tensor(a) -> torch.Tensor:
    """A contiguous torch tensor of `a`; an empty one (a multi-token decode's first past) with
    the strides of its shape, which ExecuTorch checks and numpy leaves at 0."""
    if isinstance(a, torch.Tensor):
        return a
    a = np.ascontiguousarray(a)
    return torch.from_numpy(a) if a.size else torch.empty(a.shape, dtype=torch.from_numpy(a).dtype)


class Export(decode_loop.Export):
    component = Component


class DynamicCache(decode_loop.PastCache):
    """Each step runs the program on the past and keeps its present.{i}.* as the next past."""

    def run(self, comp: Component, ids, new_mask, positions):
        feed = self.step_feed(comp, ids, new_mask, positions)
        out = comp.execute([feed[n] for n in comp.inputs])
        self.take_present(lambda name: out[name].numpy().copy())  # the runtime reuses its output memory
        return out["logits"].numpy()[:, -1, :].copy()


class StaticCache(decode_loop.StaticSlots):
    """One zero-initialised [B, kv_heads, M, head_dim] tensor per cache input, passed to every call:
    the program writes this step's keys and values into slots `cache_position` of it."""

    def __init__(self, decode: Component, batch: int, max_cache_len: int):
        super().__init__(batch, max_cache_len)
        self.buffers = {name: torch.zeros(decode.cache_shape(name, batch, max_cache_len),
                                          dtype=torch.from_numpy(np.zeros(0, decode.cache_dtype(name))).dtype)
                        for name in decode.cache_inputs}

    def run(self, comp: Component, ids, new_mask, positions):
        slots = self.take(new_mask)
        feed = {n: np.asarray(v, np.int64) for n, v in (("position_ids", positions), ("cache_position", slots),
                                                          ("attention_mask", self.mask))}
        feed.update(decode_loop.token_feed(ids))  # ids, or a VLM's embeddings
        out = comp.execute([self.buffers[n] if n in self.buffers else feed[n] for n in comp.inputs])
        for name, buf in self.buffers.items():  # input.past_key_values.X -> output.past_key_values.X
            new = out[decode_loop.present_of(name) if decode_loop.is_state(name) else "output." + name[len("input."):]]
            if new.data_ptr() != buf.data_ptr():
                buf.copy_(new)
        return out["logits"].numpy()[:, -1, :].copy()


new_cache = decode_loop.cache_for(DynamicCache, StaticCache)


generate = functools.partial(decode_loop.generate, new_cache=new_cache, prog=PROG)


def main(argv=None) -> int:
    return decode_loop.main(argv, prog=PROG, doc=__doc__,
                            export_command="hfx export --format executorch --for-generation",
                            load_export=Export, generate=generate)


if __name__ == "__main__":
    sys.exit(main())
