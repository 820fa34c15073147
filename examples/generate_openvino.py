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
    is reset before each sequence. An encoder-decoder model's: `encoder` (openvino_encoder_model.xml)
    and one `decoder` (openvino_decoder_model.xml) taking input_ids, encoder_hidden_states (and
    encoder_attention_mask) at every call and beam_idx; its first call after the reset computes the
    cross-attention keys and values into the state as well.
  * stateless, dynamic cache: past_key_values.{i}.* in, present.{i}.* out, fed back each step.
  * stateless, static cache: input./output.past_key_values.{i}.* of a fixed [B, kv_heads, M, hd];
    OpenVINO has no io-binding, so the step's output cache becomes the next step's input. Two sets
    of buffers alternate (ping-pong) as the request's own input and output tensors: nothing is
    copied between steps.

The models are compiled for the CPU with f32 inference precision and an f32 KV cache: the CPU
plugin's defaults are bf16 compute on CPUs that have it, and a u8-quantised KV cache wherever it
fuses the stateful cache into its own attention node (4-D attention: MHA), each moving the logits
by ~1e-2.

The loop itself, the command line and the cache bookkeeping are examples/decode_loop.py's (shared
with examples/generate_onnx.py); this file has what runs the models: compiled OpenVINO models and
their infer requests, the three caches' feeds, the vocabulary check of the prompt's ids.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import openvino as ov

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # decode_loop, also when this file is loaded by path (the tests)
    sys.path.insert(0, HERE)
import decode_loop  # noqa: E402
# the loop's names, the tests' too: left_pad, parse_prompts, UsageError (and Export, generate below)
from decode_loop import UsageError, left_pad, parse_prompts, read_generation_config  # noqa: E402,F401

# the exported arithmetic as it is: float32 compute and cache, and no dynamic int8 quantization of
# the activations (the CPU plugin's default for compressed weights)
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
PROG = "generate_openvino"  # the messages on stderr start with it


def fixed(dim):
    """A model dimension as an int, or None when it is dynamic (an `--dynamic` export)."""
    return dim.get_length() if dim.is_static else None


class Component(decode_loop.Component):
    """One OpenVINO model of the export, compiled, with its metadata (export.json)."""

    def __init__(self, core: ov.Core, out_dir: Path, name: str, entry: dict):
        super().__init__(name, entry)
        path = out_dir / entry["file"]
        if not path.is_file():
            raise UsageError(f"{out_dir}/export.json names {entry['file']} for {name}, which is not there")
        model = core.read_model(str(path))
        self.compiled = core.compile_model(model, "CPU", CPU_CONFIG)
        self.inputs = {i.get_any_name(): i for i in self.compiled.inputs}
        self.outputs = {o.get_any_name(): o for o in self.compiled.outputs}
        takes = {"input_ids", "inputs_embeds", "input_features", "input_values", "pixel_values", "hidden_states",
                 "input"}
        generates = self.role in ("prefill", "decode")  # the other roles: encoders, a VLM's embed_tokens
        if not (takes & set(self.inputs)) or ("logits" not in self.outputs and generates):
            raise UsageError(f"{path}: not a causal LM (inputs {list(self.inputs)}, outputs {list(self.outputs)})")
        self.read_graph()
        # "stateful": true for the KV cache in ReadValue/Assign variables (an old export without
        # the key: stateful when the model has a beam_idx input and no cache inputs)
        self.stateful = bool(self.meta.get("stateful", "beam_idx" in self.inputs and not self.cache_inputs))
        self.request = self.compiled.create_infer_request()

    def reset(self):
        if self.stateful:
            self.request.reset_state()

    def run(self, values: dict) -> dict:
        """The model's outputs by name (copies), on the inputs of `values` it takes."""
        out = self.request.infer(self.feed(values))
        return {name: np.array(out[port]) for name, port in self.outputs.items()}

    def graph_dim(self, name: str, axis: int):
        return fixed(self.inputs[name].get_partial_shape()[axis])

    def cache_dtype(self, name: str):
        return self.inputs[name].get_element_type().to_dtype()

    def feed(self, values: dict) -> dict:
        """Only the inputs the model has (position_ids may have been folded away), as int64 except
        beam_idx (int32). GenAI's forms of the Qwen-VL lineages' language models (the stateful layout): DeepStack's
        features as the rows of the image tokens visual_pos_masks marks (deepstack_visual_embeds [n, V, hidden], one
        row of zeros where there are none), and Qwen3.5's position_ids [4, B, S] with a row of text positions first
        (the graph reads only M-RoPE's three)."""
        values = dict(values)
        if "deepstack_visual_embeds" in self.inputs and "deepstack_embeds" in values:
            dense, spots = values.pop("deepstack_embeds"), values["visual_pos_masks"]
            rows = dense[:, spots]
            values["deepstack_visual_embeds"] = rows if rows.shape[1] else np.zeros((len(dense), 1, dense.shape[-1]),
                                                                                      dense.dtype)
        if "position_ids" in self.inputs and self.graph_dim("position_ids", 0) == 4 and \
                len(values.get("position_ids", ())) == 3:
            values["position_ids"] = np.concatenate([values["position_ids"][:1], values["position_ids"]])
        out = {}
        for name, value in values.items():
            if name in self.inputs:
                dtype = self.inputs[name].get_element_type().to_dtype()
                out[name] = np.ascontiguousarray(value, dtype=dtype)
        return out


class Export:
    def __init__(self, out_dir: Path, core: ov.Core | None = None):
        manifest = decode_loop.read_manifest(out_dir)
        self.out_dir = Path(out_dir)
        if manifest.get("export_format", "openvino") != "openvino":
            raise UsageError(f"{out_dir} is an {manifest['export_format']} export, not openvino "
                             "(examples/generate_onnx.py runs ONNX exports)")
        # "generation": {"cache_implementation", "max_cache_len", "multi_token_decode", "stateful"}
        self.generation = manifest.get("generation") or {}
        core = core or ov.Core()
        roles = {entry.get("role", name): (name, entry) for name, entry in manifest["components"].items()}
        if "decode" not in roles:
            raise decode_loop.no_decode(out_dir)
        self.decode = Component(core, out_dir, *roles["decode"])
        # None for a stateful or --multi-token-decode export: decode takes the prompt
        self.prefill = Component(core, out_dir, *roles["prefill"]) if "prefill" in roles else None
        # an encoder-decoder model's encoder (decode_loop.generate_seq2seq)
        self.encoder = Component(core, out_dir, *roles["encoder"]) if "encoder" in roles else None
        self.seq2seq = decode_loop.read_seq2seq_config(out_dir) if self.encoder else None
        # a vision-language model's token embedding and image encoder (decode_loop.embed_prompt)
        self.embed = Component(core, out_dir, *roles["embed_tokens"]) if "embed_tokens" in roles else None
        # (and its audio encoder: an audio LM's one encoder, or Gemma 4's beside its image encoder)
        comps = manifest["components"]
        self.audio_encoder = (Component(core, out_dir, "audio_encoder", comps["audio_encoder"])
                              if "audio_encoder" in comps else None)
        self.image_encoder = (Component(core, out_dir, "image_encoder", comps["image_encoder"]) if "image_encoder" in comps
                              else self.audio_encoder or (Component(core, out_dir, *roles["modality_encoder"])
                                                          if "modality_encoder" in roles else None))
        # Qwen2-VL's tower as optimum-intel splits it (generate_vlm.GridParts runs the two)
        self.patch_embedding = Component(core, out_dir, *roles["patch_embedding"]) if "patch_embedding" in roles else None
        self.vision_merger = Component(core, out_dir, *roles["vision_merger"]) if "vision_merger" in roles else None
        self.position_table = Component(core, out_dir, *roles["position_table"]) if "position_table" in roles else None
        # (Gemma 3n's and Gemma 4's per-layer inputs: their tokens' half from the ids, optimum-intel's graph)
        self.per_layer = (Component(core, out_dir, *roles["per_layer_embeddings"]) if "per_layer_embeddings" in roles
                          else None)
        self.stateful = self.decode.stateful
        self.static = self.decode.static and not self.stateful
        self.max_cache_len = self.decode.max_cache_len(out_dir, self.generation) if self.static else None
        self.prompt_piece = decode_loop.prompt_piece(self.decode)


# ---- the three kinds of KV cache ---------------------------------------------------------------


def last_logits(logits: np.ndarray) -> np.ndarray:
    """[B, vocab] of the last position: logits are [B, 1, vocab] (last kept) or [B, seq, vocab]."""
    return np.array(logits[:, -1, :], dtype=np.float32)  # a copy: the request reuses its buffer


class StatefulCache(decode_loop.GrowingMask):
    """The KV cache lives in the request's variables: reset before the sequence, then each step
    appends to it. attention_mask covers everything seen so far (like the dynamic cache's); beam_idx
    reorders the cache rows before each step (arange(batch): greedy search keeps every row)."""

    def __init__(self, decode: Component, batch: int):
        super().__init__(batch)
        self.request = decode.request
        self.request.reset_state()  # a new sequence: the variables start empty
        self.beam_idx = np.arange(batch, dtype=np.int32)

    def run(self, comp: Component, ids, new_mask, positions):
        feed = comp.feed({**decode_loop.token_feed(ids), "attention_mask": self.extend(new_mask),
                          "position_ids": positions, "beam_idx": self.beam_idx, **self.extra})
        self.request.infer(feed)
        return last_logits(self.request.get_tensor("logits").data)


class DynamicCache(decode_loop.PastCache):
    """Each step infers on the past and keeps its present.{i}.* as the next past."""

    def run(self, comp: Component, ids, new_mask, positions):
        out = comp.request.infer(comp.feed(self.step_feed(comp, ids, new_mask, positions)))
        # share_outputs=False: numpy copies, safe to keep
        self.take_present(lambda name: out[comp.outputs[name]])
        # logits_to_keep 1: [B, 1, vocab]; 0 (--logits all): [B, seq, vocab]. Either way, the last.
        return last_logits(out[comp.outputs["logits"]])


class StaticCache(decode_loop.StaticSlots):
    """Two zero-initialised sets of [B, kv_heads, M, head_dim] buffers per cache tensor: each step
    reads input.past_key_values.X from one set and writes output.past_key_values.X into the other
    (set as the request's own output tensors), then they swap. The model copies the cache once per
    step, as it writes its new slots (ScatterUpdate; OpenVINO has no in-place binding); the loop
    copies nothing."""

    def __init__(self, decode: Component, batch: int, max_cache_len: int):
        super().__init__(batch, max_cache_len, decode)
        # past_key_values.{i}.key (a recurrent layer's states are fed and taken as with a growing cache)
        names = [n[len("input."):] for n in decode.cache_inputs if not decode_loop.is_state(n)]
        self.current = {n: np.zeros(decode.cache_shape("input." + n, batch, max_cache_len),
                                    decode.cache_dtype("input." + n)) for n in names}
        self.other = {n: np.zeros_like(a) for n, a in self.current.items()}

    def run(self, comp: Component, ids, new_mask, positions):
        slots = self.take(new_mask)
        request = comp.request
        for name, value in comp.feed({**decode_loop.token_feed(ids), "position_ids": positions,
                                      "cache_position": slots, "attention_mask": self.mask}).items():
            request.set_tensor(name, ov.Tensor(value))  # copies the small int64 inputs
        for name in self.current:
            # ov.Tensor(array, shared_memory=True) wraps the numpy buffer without copying
            request.set_tensor("input." + name, ov.Tensor(self.current[name], shared_memory=True))
            request.set_tensor("output." + name, ov.Tensor(self.other[name], shared_memory=True))
        for name, value in self.state_feed(comp).items():
            request.set_tensor(name, ov.Tensor(value))
        request.infer()
        self.take_states(lambda name: np.array(request.get_tensor(name).data))
        for name in self.current:
            written = request.get_tensor("output." + name)
            if written.data.ctypes.data != self.other[name].ctypes.data:
                # the plugin chose its own output memory (it may, for a dynamic output): take it
                self.other[name] = np.array(written.data)
        self.current, self.other = self.other, self.current
        return last_logits(request.get_tensor("logits").data)


def new_cache(export: Export, batch: int):
    if export.stateful:
        return StatefulCache(export.decode, batch)
    if export.static:
        return StaticCache(export.decode, batch, export.max_cache_len)
    return DynamicCache(export.decode, batch)


def vocab_size(export: Export):
    """The vocabulary the prompt's ids are checked against: the export's config.json vocab_size, else
    the logits' width (a head pruned to fewer rows than the embeddings has a narrower one); None when
    the model leaves it dynamic: then only negative ids are refused."""
    vocab = decode_loop.config_vocab_size(export.out_dir)
    return vocab if vocab is not None else fixed(export.decode.outputs["logits"].get_partial_shape()[-1])


# generate(export, prompts, max_new_tokens, eos_ids, pad_id) -> (tokens [B, n], logits [n, B, vocab])
generate = functools.partial(decode_loop.generate, new_cache=new_cache, prog=PROG, vocab_size=vocab_size)


def main(argv=None) -> int:
    return decode_loop.main(argv, prog=PROG, doc=__doc__,
                            export_command="hfx export --format openvino --for-generation",
                            load_export=Export, generate=generate, prompts_first=True)


if __name__ == "__main__":
    sys.exit(main())
