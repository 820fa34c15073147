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

The loop itself, the command line and the cache bookkeeping are examples/decode_loop.py's (shared
with examples/generate_openvino.py); this file has what runs the graphs: onnxruntime sessions, and
the dynamic cache's feedback and the static cache's io-binding.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # decode_loop, also when this file is loaded by path (the tests)
    sys.path.insert(0, HERE)
import decode_loop  # noqa: E402
# the loop's names, the tests' too: left_pad, parse_prompts, UsageError (and Export, generate below)
from decode_loop import UsageError, left_pad, parse_prompts, read_generation_config  # noqa: E402,F401

NUMPY_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
                "tensor(int32)": np.int32}
PROG = "generate_onnx"  # the messages on stderr start with it


def fixed(dim):
    """A graph dimension as an int, or None when it is symbolic (an `--dynamic` export)."""
    return dim if isinstance(dim, int) else None


class Component(decode_loop.Component):
    """One ONNX graph of the export, its session and its metadata (export.json)."""

    def __init__(self, out_dir: Path, name: str, entry: dict):
        super().__init__(name, entry)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(out_dir / entry["file"]), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name: i for i in self.session.get_inputs()}
        self.outputs = [o.name for o in self.session.get_outputs()]
        self.read_graph()

    def run(self, feed: dict) -> dict:
        """The graph's outputs by name, on the inputs of `feed` it takes."""
        feed = {name: value for name, value in feed.items() if name in self.inputs}
        return dict(zip(self.outputs, self.session.run(None, feed)))

    def graph_dim(self, name: str, axis: int):
        return fixed(self.inputs[name].shape[axis])

    def cache_dtype(self, name: str):
        return NUMPY_DTYPES[self.inputs[name].type]


class Export(decode_loop.Export):
    component = Component


# ---- the two kinds of KV cache ---------------------------------------------------------------


class DynamicCache(decode_loop.PastCache):
    """Each step runs the session on the past and keeps its present.{i}.* as the next past."""

    def run(self, comp: Component, ids, new_mask, positions):
        out = comp.run(self.step_feed(comp, ids, new_mask, positions))  # the inputs it takes (Mamba2: no positions)
        self.take_present(out.__getitem__)
        # logits_to_keep 1: [B, 1, vocab]; 0 (--logits all): [B, seq, vocab]. Either way, the last.
        return out["logits"][:, -1, :]


class StaticCache(decode_loop.StaticSlots):
    """One zero-initialised [B, kv_heads, M, head_dim] OrtValue per cache tensor, bound as BOTH
    input.past_key_values.X and output.past_key_values.X: the graph writes this step's keys and
    values into slots `cache_position` in place (ScatterElements); nothing is copied between steps."""

    def __init__(self, decode: Component, batch: int, max_cache_len: int):
        super().__init__(batch, max_cache_len, decode)
        self.buffers = {}
        for name in decode.cache_inputs:
            if decode_loop.is_state(name):  # replaced each step, not written in place
                continue
            zeros = np.zeros(decode.cache_shape(name, batch, max_cache_len), decode.cache_dtype(name))
            self.buffers[name[len("input."):]] = ort.OrtValue.ortvalue_from_numpy(zeros)  # shares `zeros`

    def run(self, comp: Component, ids, new_mask, positions):
        slots = self.take(new_mask)
        binding = comp.session.io_binding()
        binding.bind_output("logits")  # first bound output: get_outputs()[0]
        for name, value in (("position_ids", positions), ("cache_position", slots), ("attention_mask", self.mask)):
            if name in comp.inputs:  # (Mamba2 takes no positions)
                binding.bind_cpu_input(name, np.ascontiguousarray(value, dtype=np.int64))
        for name, value in decode_loop.token_feed(ids).items():  # ids, or a VLM's embeddings
            binding.bind_cpu_input(name, np.ascontiguousarray(value))
        for name, value in self.state_feed(comp).items():
            binding.bind_cpu_input(name, value)
        states = [decode_loop.present_of(n) for n in self.states]
        for name in states:
            binding.bind_output(name)
        for name, buf in self.buffers.items():
            binding.bind_ortvalue_input("input." + name, buf)
            binding.bind_ortvalue_output("output." + name, buf)
        comp.session.run_with_iobinding(binding)
        outputs = binding.get_outputs()  # in binding order: logits, the states, the cache
        present = dict(zip(states, (o.numpy() for o in outputs[1:1 + len(states)])))
        self.take_states(present.__getitem__)
        return outputs[0].numpy()[:, -1, :]


new_cache = decode_loop.cache_for(DynamicCache, StaticCache)


# generate(export, prompts, max_new_tokens, eos_ids, pad_id) -> (tokens [B, n], logits [n, B, vocab])
generate = functools.partial(decode_loop.generate, new_cache=new_cache, prog=PROG)


def main(argv=None) -> int:
    return decode_loop.main(argv, prog=PROG, doc=__doc__, export_command="hfx export --for-generation",
                            load_export=Export, generate=generate)


if __name__ == "__main__":
    sys.exit(main())
