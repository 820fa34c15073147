"""The runtime-independent half of examples/generate_onnx.py and examples/generate_openvino.py
(numpy only): the command line, generation_config.json, left padding, the greedy loop, and the
bookkeeping of the KV cache kinds that is the same whatever runs the graphs.

A script brings its runtime: an Export with `prefill` (or None: the prompt runs through decode),
`decode`, `static` and `max_cache_len`; components derived from Component (name, role, metadata,
fixed batch / prompt length, cache geometry), which supply `graph_dim` and `cache_dtype`; and a
cache object per sequence whose `run(comp, ids, new_mask, positions)` returns the last position's
logits [B, vocab] (a static one also has `used` and `M`). docs/GENERATION.md is the I/O contract.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


class UsageError(Exception):
    """A request this export cannot serve: exit 2 with the message."""


def read_wav(path: Path, rate: int) -> np.ndarray:
    """The samples of a 16-bit mono WAV file as float32 in [-1, 1)."""
    import wave
    try:
        with wave.open(str(path), "rb") as f:
            if f.getnchannels() != 1 or f.getsampwidth() != 2:
                raise UsageError(f"{path}: needs 16-bit mono PCM (has {f.getnchannels()} channels of "
                                 f"{8 * f.getsampwidth()} bits)")
            if f.getframerate() != rate:
                raise UsageError(f"{path}: sampled at {f.getframerate()} Hz; the model's feature extractor takes "
                                 f"{rate} Hz")
            data = f.readframes(f.getnframes())
    except (OSError, wave.Error, EOFError) as e:
        raise UsageError(f"{path}: not a readable WAV file ({e})") from None
    return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0


# ---- export.json -----------------------------------------------------------------------------


def read_manifest(out_dir: Path) -> dict:
    """export.json of an export directory."""
    if not (out_dir / "export.json").is_file():
        raise UsageError(f"{out_dir} has no export.json: not an hfx export directory")
    return json.loads((out_dir / "export.json").read_text())


def no_decode(out_dir: Path) -> UsageError:
    return UsageError(f"{out_dir}/export.json has no decode component: export with --for-generation")


# what a causal LM's graph takes its tokens as: ids, or (a VLM's language model) their embeddings
TOKEN_INPUTS = ("input_ids", "inputs_embeds")


def token_feed(tokens) -> dict:
    """The graph input of a step's tokens: ids [B, S] as input_ids, embeddings [B, S, hidden] (a
    VLM's, see embed_prompt) as inputs_embeds, or a dict of such inputs as it is (a Qwen3-VL's
    embeddings and DeepStack features)."""
    if isinstance(tokens, dict):
        return tokens
    return {"inputs_embeds" if tokens.ndim == 3 else "input_ids": tokens}


def tokens_between(tokens, lo: int, hi: int):
    """The step inputs of tokens lo..hi: a slice of ids or embeddings, or of each input of a dict
    along its sequence axis (deepstack_embeds [n, B, S, hidden]: axis 2)."""
    if isinstance(tokens, dict):
        return {k: v[:, :, lo:hi] if k == "deepstack_embeds" else v[:, lo:hi] for k, v in tokens.items()}
    return tokens[:, lo:hi]


def is_state(name: str) -> bool:
    """past.{i}.<kind>: a recurrent layer's state, replaced by present.{i}.<kind> after each step —
    a convolution's last inputs (conv: LFM2, Mamba2) or a state-space mixer's state (ssm: Mamba2)."""
    parts = name.split(".")
    return len(parts) == 3 and parts[0] == "past" and parts[1].isdigit() and parts[2].isidentifier()


def present_of(name: str) -> str:
    """The output that replaces cache input `name` after a step: past_key_values.X → present.X,
    past.{i}.<kind> → present.{i}.<kind>."""
    return "present." + (name[len("past_key_values."):] if name.startswith("past_key_values.") else name[len("past."):])


def cache_geometry(geo: dict, kind: str, batch: int, length: int) -> tuple:
    """[batch, heads, length, width] of a layer's cache tensor `kind` from its metadata: its keys, its values, or
    (DeepSeek V3.2's sparse attention) its indexer's keys, one head of index_dim."""
    if kind == "index_key":
        return (batch, 1, length, geo["index_dim"])
    return (batch, geo["heads"], length, geo["key_dim" if kind == "key" else "value_dim"])


class Component:
    """What the loop reads of one component: its export.json entry, the runtime's graph where the
    metadata is silent. A subclass loads the graph, sets `inputs` (name -> the runtime's input),
    calls read_graph() and implements graph_dim() and cache_dtype()."""

    def __init__(self, name: str, entry: dict):
        self.name, self.role, self.meta = name, entry.get("role", name), entry.get("metadata", {})
        # "cache": {"implementation": "dynamic"|"static", "max_cache_len": M|null,
        #           "layers": [{"heads", "key_dim", "value_dim", "length", "sliding_window"}, ...]}
        # (a recurrent layer: {"conv": [channels, kernel − 1], "ssm": [heads, head_dim, state]})
        self.cache = self.meta.get("cache") or {}

    def graph_dim(self, name: str, axis: int):
        """Dimension `axis` of input `name` as an int, or None when it is symbolic (`--dynamic`)."""
        raise NotImplementedError

    def cache_dtype(self, name: str):
        raise NotImplementedError

    def deepstack_layers(self) -> int:
        """How many layers take DeepStack features (deepstack_embeds [n, B, S, hidden], or GenAI's form in OpenVINO's
        stateful layout, deepstack_visual_embeds [n, image tokens, hidden]: a fixed dim), 0 where the graph takes
        none."""
        for name in ("deepstack_embeds", "deepstack_visual_embeds"):
            if name in self.inputs:
                return self.graph_dim(name, 0)
        return 0

    def reset(self):
        """Start a new sequence: a graph that keeps its cache inside (OpenVINO's stateful) empties it."""

    def read_graph(self):
        # batch_size / sequence_length: an int when the export fixed it, null when symbolic
        # the tokens (a VLM's language model: their embeddings), Whisper's features, an image's pixels
        first = next((n for n in TOKEN_INPUTS + ("input_features", "input_values", "pixel_values") if n in self.inputs),
                     None)
        self.batch = (self.meta["batch_size"] if "batch_size" in self.meta
                      else self.graph_dim(first, 0) if first else None)
        self.seq = (self.meta["sequence_length"] if "sequence_length" in self.meta
                    else self.graph_dim(first, 1) if first in TOKEN_INPUTS else None)
        self.static = self.cache.get("implementation", "static" if "cache_position" in self.inputs
                                     else "dynamic") == "static"
        # past_key_values.{i}.key/value (dynamic) or input.past_key_values.{i}.key/value (static);
        # a recurrent layer's states past.{i}.conv / past.{i}.ssm (LFM2, Mamba2), whatever the cache
        self.cache_inputs = [n for n in self.inputs if "past_key_values." in n or is_state(n)]

    def cache_shape(self, name: str, batch: int, length: int):
        """[batch, kv_heads, length, head_dim] of cache input `name`, from the per-layer geometry
        (the graph's own input shape where the metadata has none); a recurrent state's
        [batch, *its dims] from the metadata, whatever the length."""
        if is_state(name):
            _, layer, kind = name.split(".")
            layers = self.cache.get("layers")
            if not layers or kind not in layers[int(layer)]:
                raise UsageError(f"{self.name}: the metadata does not describe state {name}")
            return (batch, *layers[int(layer)][kind])
        parts = name.split("past_key_values.")[1].split(".")  # {i}.key, or an encoder-decoder's {i}.decoder.key
        layer, kind = parts[0], parts[-1]
        layers = self.cache.get("layers")
        if layers:
            return cache_geometry(layers[int(layer)], kind, batch, length)
        return (batch, self.graph_dim(name, 1), length, self.graph_dim(name, 3))

    def max_cache_len(self, out_dir: Path, generation: dict) -> int:
        """M of a static cache: an --dynamic export accepts any M (the buffers are sized at load
        time); a fixed-shape one has it in the graph too."""
        m = (self.cache.get("max_cache_len") or generation.get("max_cache_len")
             or self.graph_dim("attention_mask", 1))
        if not m:
            raise UsageError(f"static cache export in {out_dir} without a max_cache_len in export.json")
        return int(m)


class Export:
    """An export directory's components by role (prefill is None when decode takes the prompt: a
    multi-token decode), its "generation" settings, and its cache kind. A runtime's subclass sets
    `component`: its Component class, built as component(out_dir, name, entry)."""

    component = None

    def __init__(self, out_dir: Path):
        manifest = read_manifest(out_dir)
        # "generation": {"cache_implementation", "max_cache_len", "multi_token_decode"}
        self.generation = manifest.get("generation") or {}
        comps = {name: self.component(out_dir, name, entry) for name, entry in manifest["components"].items()}
        by_role = {c.role: c for c in comps.values()}
        self.encoder = by_role.get("encoder")  # an encoder-decoder model's (generate_seq2seq)
        self.prefill = by_role.get("prefill")
        self.decode = by_role.get("decode")
        # a vision-language model's: its token embedding and image encoder (generate(..., images=))
        self.embed = by_role.get("embed_tokens")
        # (and its audio encoder: an audio LM's one encoder, or Gemma 4's beside its image encoder)
        self.image_encoder = comps.get("image_encoder") or by_role.get("modality_encoder")
        self.audio_encoder = comps.get("audio_encoder")
        self.seq2seq = read_seq2seq_config(out_dir) if self.encoder else None
        if self.decode is None:
            raise no_decode(out_dir)
        self.static = self.decode.static
        self.max_cache_len = self.decode.max_cache_len(out_dir, self.generation) if self.static else None
        self.prompt_piece = prompt_piece(self.decode)


def cache_for(dynamic, static):
    """new_cache(export, batch) for a runtime with these two cache classes: the static one
    (decode, batch, max_cache_len) for a static-cache export, else the growing one (decode, batch)."""

    def new_cache(export, batch: int):
        if export.static:
            return static(export.decode, batch, export.max_cache_len)
        return dynamic(export.decode, batch)
    return new_cache


# ---- the bookkeeping of the KV cache kinds ---------------------------------------------------


class GrowingMask:
    """attention_mask covers everything seen so far in this sequence: each step's new tokens' flags
    are appended to it (the dynamic and the stateful cache). `extra`: more inputs of the step that
    generate() sets (a Gemma 3 VLM's token_type_ids, which grow the same way)."""

    def __init__(self, batch: int):
        self.mask = np.zeros((batch, 0), np.int64)
        self.extra = {}

    def extend(self, new_mask):
        self.mask = np.concatenate([self.mask, new_mask], axis=1)
        return self.mask


class PastCache(GrowingMask):
    """past_key_values.{i}.* grow by concatenation: each step feeds back the previous present.{i}.*.
    attention_mask covers the cache and the new tokens, so it grows by the new tokens' flags."""

    def __init__(self, decode: Component, batch: int):
        super().__init__(batch)
        # an empty past [B, kv_heads, 0, head_dim] is how a multi-token decode takes the prompt
        self.past = {n: np.zeros(decode.cache_shape(n, batch, 0), decode.cache_dtype(n))
                     for n in decode.cache_inputs}

    def step_feed(self, comp: Component, ids, new_mask, positions) -> dict:
        feed = {**token_feed(ids), "attention_mask": self.extend(new_mask), "position_ids": positions,
                **self.extra}
        feed.update({n: self.past[n] for n in comp.cache_inputs})  # none for prefill
        return feed

    def take_present(self, present):
        """present(name): the step's output `name`."""
        for name in self.past:  # past_key_values.{i}.key -> present.{i}.key
            self.past[name] = present(present_of(name))


class StaticSlots:
    """A static cache's slots: M of them per row, `used` filled. attention_mask is one [B, M] row of
    slot flags (1 = the slot holds a real token, including the slots written in this step); the
    graph derives causality and sliding windows from cache_position, so no [query, M] mask is ever
    built here."""

    def __init__(self, batch: int, max_cache_len: int, decode: Component = None):
        self.M, self.used = max_cache_len, 0
        # a fixed-length step (left-padded to its length: one new token, last) writes its padding into the slots after
        # the token's, which the next step's token takes: its cache fills one slot a step
        self.pad_after = False
        self.mask = np.zeros((batch, max_cache_len), np.int64)
        # a recurrent layer's states (past.{i}.conv / .ssm: LFM2, Mamba2) are not slots: fed, then
        # replaced by the step's present.{i}.*, as with a growing cache
        self.states = {n: np.zeros(decode.cache_shape(n, batch, 0), decode.cache_dtype(n))
                       for n in decode.cache_inputs if is_state(n)} if decode else {}

    def state_feed(self, comp: Component) -> dict:
        """The states the component reads (none in a prefill: a prompt starts from zeros)."""
        return {n: self.states[n] for n in comp.cache_inputs if is_state(n)}

    def take_states(self, present):
        """present(name): the step's output `name`."""
        for name in self.states:
            self.states[name] = present(present_of(name))

    def take(self, new_mask):
        """cache_position of a step's new tokens, their flags marked in the mask."""
        seq = new_mask.shape[1]
        if self.used + seq > self.M:  # the graph would refuse it too (its scatter's bounds check)
            raise UsageError(f"static cache full: {self.used} + {seq} tokens > max_cache_len {self.M}")
        slots = np.arange(self.used, self.used + seq, dtype=np.int64)
        if self.pad_after and seq > 1:  # the padding after the token's slot (causality hides it), flagged empty
            slots = np.roll(slots, -1)
            self.mask[:, slots] = 0
            self.mask[:, self.used] = new_mask[:, -1]
            self.used += 1
            return slots
        self.mask[:, slots] = new_mask
        self.used += seq
        return slots


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


def merged_embeds(export, ids, image_features=None, image_token_id=None, more_media=()):
    """embed_tokens' embeddings [B, S, hidden] of ids, with image_features [N, T, hidden] written, in order, over the
    positions of image_token_id (row by row; transformers' masked_scatter), and each (features [n, hidden], token) of
    more_media over that token's positions."""
    embeds = np.array(export.embed.run({"input_ids": ids})["inputs_embeds"])
    media = list(more_media)
    if image_features is not None:
        media.insert(0, (image_features.reshape(-1, image_features.shape[-1]), image_token_id))
    for features, token in media:
        at = ids == token
        if int(at.sum()) != len(features):
            raise UsageError(f"the prompts hold {int(at.sum())} tokens {token} for {len(features)} features")
        embeds[at] = features
    return embeds


def embed_prompt(export, ids, image_features=None, image_token_id=None, deepstack=None, more_media=()):
    """A VLM's tokens as its language model takes them: merged_embeds' embeddings (the image features over the image
    tokens, more_media's over theirs). Token ids as they are for a model without embed_tokens.
    A language model that takes DeepStack features (deepstack_embeds [n, B, S, hidden]: Qwen3-VL's)
    gets them as a dict with the embeddings: `deepstack` [n, N·T, hidden] (the image encoder's) written
    over the same positions, zeros elsewhere (and everywhere in a step without images). One whose per-layer inputs
    read the token ids (Gemma 4's) gets them in the dict too, or (OpenVINO's stateful layout) the tokens' half of those
    inputs, per_layer_inputs, from the export's per-layer graph."""
    if getattr(export, "embed", None) is None:
        return ids
    embeds = merged_embeds(export, ids, image_features, image_token_id, more_media)
    spots = ids == image_token_id if image_features is not None else None
    layers = export.decode.deepstack_layers()
    ids_too = "input_ids" in export.decode.inputs  # a language model with per-layer inputs (Gemma 4's) reads them
    per_layer = getattr(export, "per_layer", None)
    if not layers and not ids_too and per_layer is None:
        return embeds
    feed = {"inputs_embeds": embeds, **({"input_ids": ids} if ids_too else {})}
    if per_layer is not None:
        feed["per_layer_inputs"] = np.array(per_layer.run({"input_ids": ids})["per_layer_inputs"])
    if layers:
        stacked = np.zeros((layers, *embeds.shape), embeds.dtype)
        if spots is not None and deepstack is not None:
            stacked[:, spots] = deepstack[:layers]
        feed["deepstack_embeds"] = stacked
        if "visual_pos_masks" in export.decode.inputs:  # (GenAI's form: the runtime's feed takes these rows)
            feed["visual_pos_masks"] = spots if spots is not None else np.zeros(ids.shape, bool)
    return feed


def config_vocab_size(out_dir):
    """vocab_size of the export's config.json (a composite model's text_config's), or None."""
    path = Path(out_dir) / "config.json"
    if not path.is_file():
        return None
    cfg = json.loads(path.read_text())
    vocab = cfg.get("vocab_size", (cfg.get("text_config") or {}).get("vocab_size"))
    return vocab if isinstance(vocab, int) else None


def generate(export, prompts, max_new_tokens: int, eos_ids, pad_id, *, new_cache, prog: str,
             vocab_size=None, log=None, image_features=None, image_token_id=None, mrope=None, deepstack=None,
             prefix_lm=False, block_token_id=None, more_media=()):
    """Greedy search. Returns (tokens [B, n], logits [n, B, vocab]); n < max_new_tokens when every
    row has finished or the static cache is full.

    new_cache(export, batch): a fresh cache for this sequence. vocab_size(export): the vocabulary
    (None when the graph leaves it open), when the prompt's ids are checked against it. prog: the
    name a message on `log` (stderr) starts with. A vision-language model's prompts carry
    image_token_id where image_features [N, T, hidden] (its image encoder's) go (embed_prompt).
    mrope(ids, mask): a Qwen2-VL's M-RoPE positions of the padded prompt, (positions [3, B, S],
    deltas [B]) as transformers' get_rope_index makes them; each new token's are then the tokens
    seen before it plus its row's delta, on all three axes. deepstack [n, N·T, hidden]: a Qwen3-VL image
    encoder's DeepStack features, which go with the embeddings (embed_prompt). prefix_lm: PaliGemma's
    generation — token_type_ids 0 on the prompt (its tokens see each other both ways) and 1 on each generated
    token, positions counted from 1 (its prepare_inputs_for_generation). block_token_id: the token whose runs
    token_type_ids marks 1, where it is not image_token_id (Gemma 4's images, when the features are its audio's).
    more_media: (features, token) pairs of another encoder (embed_prompt)."""
    if vocab_size is not None and not isinstance(prompts, (np.ndarray, dict)):  # (log-mel features, a waveform)
        vocab = vocab_size(export)
        bad = [t for p in prompts for t in p if t < 0 or (vocab is not None and t >= vocab)]
        if bad:
            raise UsageError(f"token id {bad[0]} outside the vocabulary [0, {vocab})")
    if getattr(export, "encoder", None) is not None:
        return generate_seq2seq(export, prompts, max_new_tokens, eos_ids, pad_id, prog=prog, log=log,
                                image_features=image_features, image_token_id=image_token_id)
    log = sys.stderr if log is None else log
    batch = len(prompts)
    first = export.prefill or export.decode  # stateful / multi-token decode: the prompt runs through decode
    for comp in (first, export.decode):
        if comp.batch is not None and comp.batch != batch:
            raise UsageError(f"{comp.name} was exported for batch {comp.batch}, got {batch} prompts")
    length = max(map(len, prompts))
    # a multi-token decode of a fixed query length (a static export: the seed's frozen one) takes every call at that
    # length: the prompt in pieces of it, left-padded to whole pieces, each new token left-padded to it (its padding
    # written into the next slots, flagged empty: StaticSlots.pad_after)
    fixed = export.prefill is None and export.static and first.seq is not None and first.seq > 1
    if fixed and (mrope is not None or "token_type_ids" in export.decode.inputs):
        raise UsageError("a multi-token decode of a fixed length takes no M-RoPE positions or token_type_ids here: "
                         "export with --dynamic")
    if fixed:
        length = -(-length // first.seq) * first.seq
    elif first.seq is not None and first.seq != length:  # a fixed prompt length: pad up to it
        if length > first.seq:
            raise UsageError(f"prompt of {length} tokens > the exported sequence length {first.seq}")
        length = first.seq
    if export.static and length > export.max_cache_len:
        raise UsageError(f"prompt of {length} tokens > max_cache_len {export.max_cache_len}")

    cache = new_cache(export, batch)
    ids, mask = left_pad(prompts, pad_id, length)
    # a Gemma 3 VLM's language model also takes which tokens are an image's (each image's see each
    # other both ways), over everything seen so far, as attention_mask
    block = image_token_id if block_token_id is None else block_token_id
    types = (ids == block).astype(np.int64) if "token_type_ids" in export.decode.inputs else None
    if types is not None and prefix_lm:  # the prompt is the prefix, what is generated the suffix
        types = np.zeros_like(types)
    if types is not None:
        if export.static:
            raise UsageError("token_type_ids with a static cache: export this model with a dynamic cache")
        cache.extra = {"token_type_ids": types}
    # generate()'s position ids: cumsum(mask) - 1, 0 on padding; then +1 per step for every row
    positions = np.clip(np.cumsum(mask, axis=1) - 1, 0, None) + (1 if prefix_lm else 0)
    if mrope is not None:
        positions, deltas = mrope(ids, mask)
    embeds = embed_prompt(export, ids, image_features, image_token_id, deepstack, more_media)
    # a state-space model's one-graph export takes a long prompt in pieces (prompt_piece)
    piece = (first.seq if fixed else getattr(export, "prompt_piece", None) if export.prefill is None and first.seq is None
             else None)
    for lo in range(0, length, piece or length):
        hi = lo + (piece or length)
        logits = cache.run(first, tokens_between(embeds, lo, hi), mask[:, lo:hi], positions[..., lo:hi])
    if fixed:  # from here on each call is one new token, padded after its slot
        cache.pad_after = True

    # transformers re-encodes the whole sequence, once, when it reaches this many tokens (Phi-3's
    # longrope: keys cached with the short factors are recomputed with the long ones)
    recompute_at = export.decode.meta.get("recompute_cache_at_length")
    all_ids, all_mask, all_positions = ids, mask, positions
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
        if export.static and cache.used + (first.seq if fixed else 1) > cache.M:
            # the last token needs no slot (transformers sizes its static cache max_length - 1 too)
            print(f"{prog}: static cache full (max_cache_len {cache.M}): stopped after "
                  f"{len(tokens)} new tokens", file=log)
            break
        if mrope is not None:  # the tokens seen so far (this one's index among them) plus the row's delta
            seen = all_mask.sum(axis=1) + deltas
            positions = np.broadcast_to(seen[None, :, None], (3, batch, 1)).astype(np.int64)
        else:
            positions = positions[:, -1:] + 1
        all_ids = np.concatenate([all_ids, next_ids[:, None].astype(np.int64)], axis=1)
        all_mask = np.concatenate([all_mask, np.ones((batch, 1), np.int64)], axis=1)
        all_positions = np.concatenate([all_positions, positions], axis=-1)
        if recompute_at and all_ids.shape[1] == recompute_at and length < recompute_at:
            if first.seq is not None:
                raise UsageError(f"this model re-encodes its sequence at {recompute_at} tokens, which a "
                                 f"fixed-shape export cannot: export with --dynamic")
            cache = new_cache(export, batch)
            logits = cache.run(first, embed_prompt(export, all_ids, image_features, image_token_id, deepstack, more_media),
                               all_mask, all_positions)
            continue
        new_ids, new_mask, new_positions = next_ids[:, None].astype(np.int64), np.ones((batch, 1), np.int64), positions
        if fixed:  # the token last, after padding (position 0, as the prompt's) written past its slot
            new_ids, new_mask = left_pad([[int(t)] for t in next_ids], pad_id, first.seq)
            new_positions = np.concatenate([np.zeros((batch, first.seq - 1), np.int64), positions], axis=1)
        step = embed_prompt(export, new_ids)
        if types is not None:  # a generated token is text (PaliGemma's: the suffix)
            types = np.concatenate([types, np.full((batch, 1), 1 if prefix_lm else 0, np.int64)], axis=1)
            cache.extra = {"token_type_ids": types}
        logits = cache.run(export.decode, step, new_mask, new_positions)
    return np.stack(tokens, axis=1), np.stack(all_logits)


# ---- encoder-decoder models -------------------------------------------------------------------


def prompt_piece(decode):
    """How many prompt tokens one call of a state-space model's graph should take, as the exporter
    wrote it in the decode component's metadata ("prompt_piece": the scan's chunk — Mamba2's
    chunk_size, 64 for a gated delta-net, 16 for Mamba). A call's scan costs the square (a delta-net:
    the cube) of its tokens (docs/GENERATION.md), so a graph that carries its states from call to
    call (a multi-token decode, OpenVINO's stateful) takes a long prompt in pieces of that many
    tokens, with the same result as one call. None for any other model."""
    piece = decode.meta.get("prompt_piece")
    return piece if isinstance(piece, int) and piece > 0 else None


def read_seq2seq_config(out_dir: Path) -> dict:
    """What an encoder-decoder's greedy search reads besides EOS and pad, from the generation config
    generate() uses: generation_config.json when the export has one, else config.json (transformers
    builds the generation config from it then). decoder_start_token_id (else bos_token_id) starts
    every row; forced_bos_token_id is the first new token (mBART, M2M100: the target language),
    forced_eos_token_id the last one the length allows; min_length keeps EOS out until the decoder's
    sequence is that long; no_repeat_ngram_size bans a token that would repeat an n-gram of it."""
    path = out_dir / "generation_config.json"
    if not path.is_file():
        path = out_dir / "config.json"
    cfg = json.loads(path.read_text()) if path.is_file() else {}

    def get(key, default=None):
        return default if cfg.get(key) is None else cfg[key]
    start = get("decoder_start_token_id", get("bos_token_id"))
    if start is None:
        raise UsageError(f"{path}: neither decoder_start_token_id nor bos_token_id: the decoder has no first token")
    forced_eos = get("forced_eos_token_id", [])
    out = {"start": int(start), "forced_bos": get("forced_bos_token_id"),
           "forced_eos": [int(e) for e in (forced_eos if isinstance(forced_eos, list) else [forced_eos])],
           "min_length": int(get("min_length", 0)), "no_repeat_ngram_size": int(get("no_repeat_ngram_size", 0)),
           "suppress": [int(t) for t in get("suppress_tokens", [])],
           "begin_suppress": [int(t) for t in get("begin_suppress_tokens", [])]}
    if get("return_timestamps"):
        raise UsageError(f"{path}: return_timestamps is true: timestamp decoding is not in this loop")
    config = json.loads((out_dir / "config.json").read_text()) if (out_dir / "config.json").is_file() else {}
    if config.get("model_type") == "whisper":
        out["whisper"] = whisper_prompt(cfg, config, path)
    return out


def whisper_prompt(gen: dict, config: dict, path: Path) -> dict:
    """Whisper's decoder prompt as generate() builds it (_retrieve_init_tokens): the start token,
    the language (generation config `language`, else forced_decoder_ids' entry, else detected:
    lang_id None), the task, and <|notimestamps|>. Returns the prompt with None where the language
    is still to be detected, and the ids detection chooses among."""
    init = [gen.get("decoder_start_token_id")]
    task, language = gen.get("task"), gen.get("language")
    lang_to_id, task_to_id = gen.get("lang_to_id") or {}, gen.get("task_to_id") or {}
    if task is None and language is None:
        forced = gen.get("forced_decoder_ids") or config.get("forced_decoder_ids")
        if forced and forced[0][0] == 1:
            i = 1
            while forced and forced[0][0] == i:
                init.append(forced[0][1])
                forced, i = forced[1:], i + 1
            if forced:
                raise UsageError(f"{path}: forced_decoder_ids {forced} do not follow Whisper's prompt pattern")
    undefined = len(init) <= 1 or init[1] is None
    lang_id = None
    if language is not None:
        token = language if language in lang_to_id else f"<|{language}|>"
        if token not in lang_to_id:
            raise UsageError(f"{path}: language {language!r} is not in lang_to_id (use its code, e.g. \"en\")")
        lang_id = lang_to_id[token]
    detect = language is None and bool(lang_to_id) and undefined
    if lang_id is not None or detect:
        if len(init) > 1:
            init[1] = lang_id
        else:
            init.append(lang_id)
    if task is not None:
        if task not in task_to_id:
            raise UsageError(f"{path}: task {task!r} is not in task_to_id")
        ids = set(task_to_id.values())
        at = [i for i, t in enumerate(init) if t in ids]
        if at:
            init[at[0]] = task_to_id[task]
        else:
            init.append(task_to_id[task])
    elif language is not None and task_to_id and not any(t in task_to_id.values() for t in init):
        init.append(task_to_id["transcribe"])
    no_ts = gen.get("no_timestamps_token_id")
    if no_ts is not None and init[-1] != no_ts:
        init.append(no_ts)
    if not detect:
        init = [t for t in init if t is not None]
    return {"init": init, "languages": sorted(lang_to_id.values()) if detect else None}


def right_pad(prompts, pad_id, length):
    """[B, length] ids and mask with the real tokens first: an encoder's input, padded as its
    tokenizer pads it (BART's, Marian's and M2M100's positions count from the first column)."""
    ids = np.full((len(prompts), length), pad_id, np.int64)
    mask = np.zeros((len(prompts), length), np.int64)
    for row, prompt in enumerate(prompts):
        ids[row, :len(prompt)] = prompt
        mask[row, :len(prompt)] = 1
    return ids, mask


def banned_ngram_tokens(seq, n: int):
    """The tokens that would complete an n-gram `seq` already holds (transformers'
    NoRepeatNGramLogitsProcessor)."""
    if n <= 0 or len(seq) < n:
        return []
    prefix = tuple(seq[len(seq) - n + 1:])
    return [seq[i + n - 1] for i in range(len(seq) - n + 1) if tuple(seq[i:i + n - 1]) == prefix]


def generate_seq2seq(export, prompts, max_new_tokens: int, eos_ids, pad_id, *, prog: str, log=None,
                     image_features=None, image_token_id=None):
    """Greedy search of an encoder-decoder export (`encoder`, `prefill`, `decode`; or a multi-token
    decode's `encoder` and one `decoder` for prompt and steps — OpenVINO's stateful keeping both
    caches inside, elsewhere the encoder returning the cross-attention cache): the encoder once
    over the right-padded prompts (Whisper's: `prompts` is the log-mel features [B, mels, frames]; Moonshine's
    {"input_values", "attention_mask"} [B, samples], audio_prompts' — its encoder returns the frames' mask),
    the prefill on decoder_start_token_id (Whisper: its prompt of start, language, task and
    no-timestamps tokens, the language detected first where the config leaves it open) — its
    self-attention cache started, the cross-attention keys and values computed — then one decode
    step per token. An encoder over inputs_embeds (Florence-2's) takes merged_embeds' (embed_tokens' embeddings, the
    image encoder's image_features over the image_token_id positions). Each component's `run(feed)` returns its outputs
    by name. Returns (tokens [B, n], logits [n, B, vocab])."""
    del log
    cfg = export.seq2seq
    audio, waveform = "input_features" in export.encoder.inputs, "input_values" in export.encoder.inputs
    if audio != isinstance(prompts, np.ndarray) or waveform != isinstance(prompts, dict):
        raise UsageError("this export's encoder takes " + ("log-mel features: --input-features FILE.npy or --audio"
                                                           if audio else "a waveform: --audio" if waveform
                                                           else "token ids: --input-ids"))
    batch = len(prompts["input_values"]) if waveform else len(prompts)
    for comp in filter(None, (export.encoder, export.prefill, export.decode)):
        if comp.batch is not None and comp.batch != batch:
            raise UsageError(f"{comp.name} was exported for batch {comp.batch}, got {batch} prompts")
    if audio:
        mask = None
        enc = export.encoder.run({"input_features": np.ascontiguousarray(prompts, np.float32)})
    elif waveform:  # Moonshine: the samples and their mask; the encoder gives its frames' mask
        enc = export.encoder.run({"input_values": np.ascontiguousarray(prompts["input_values"], np.float32),
                                  "attention_mask": np.ascontiguousarray(prompts["attention_mask"], np.int64)})
        mask = enc["encoder_attention_mask"]
    else:
        length = max(map(len, prompts))
        enc_len = export.encoder.seq
        if enc_len is not None:  # a fixed source length: pad up to it
            if length > enc_len:
                raise UsageError(f"prompt of {length} tokens > the exported sequence length {enc_len}")
            length = enc_len
        ids, mask = right_pad(prompts, pad_id, length)
        if "inputs_embeds" in export.encoder.inputs:
            enc = export.encoder.run({"inputs_embeds": merged_embeds(export, ids, image_features, image_token_id),
                                      "attention_mask": mask})
        else:
            enc = export.encoder.run({"input_ids": ids, "attention_mask": mask})
    hidden = enc["last_hidden_state"]
    # a stateless multi-token decode's encoder returns the cross-attention cache (present.{i}.encoder.*)
    cross = {"past_key_values." + k[len("present."):]: v for k, v in enc.items() if k.startswith("present.")}
    start = np.full((batch, 1), cfg["start"], np.int64)
    whisper = cfg.get("whisper")
    if whisper:
        init = np.array([[t if t is not None else -1 for t in whisper["init"]]] * batch, np.int64)
        if whisper["languages"]:  # generate()'s detect_language: the start token's best language id
            first = export.prefill or export.decode
            first.reset()
            out = first.run({"input_ids": init[:, :1], "encoder_hidden_states": hidden,
                             "beam_idx": np.arange(batch, dtype=np.int32), **_first_cache(export, batch, cross)})
            langs = np.array(whisper["languages"])
            init[:, 1] = langs[out["logits"][:, -1, langs].argmax(-1)]
        start = init
    return _greedy_decoder(export, cfg, start, hidden, mask, max_new_tokens, eos_ids, pad_id, cross)


def _first_cache(export, batch: int, cross: dict) -> dict:
    """The cache inputs of the decoder's first call: a static-cache prefill's zero input.past_key_values.*
    buffers; a stateless multi-token decode's empty self-attention past and the encoder's
    cross-attention cache; nothing for a growing-cache prefill or a stateful decoder."""
    comp = export.prefill
    if comp is None:
        comp = export.decode
        return {name: cross[name] if name in cross else np.zeros(comp.cache_shape(name, batch, 0), comp.cache_dtype(name))
                for name in comp.cache_inputs}
    layers = comp.cache.get("layers") or []
    feed = {}
    for name in comp.cache_inputs:
        layer, kind = int(name.split(".")[2]), name.rsplit(".", 1)[1]
        geo = layers[layer] if layer < len(layers) else None
        shape = (cache_geometry(geo, kind, batch, export.max_cache_len) if geo
                 else (batch, comp.graph_dim(name, 1), export.max_cache_len, comp.graph_dim(name, 3)))
        feed[name] = np.zeros(shape, comp.cache_dtype(name))
    if feed:
        feed["cache_position"] = np.arange(1, dtype=np.int64)
    return feed


def _greedy_decoder(export, cfg, seq, hidden, mask, max_new_tokens, eos_ids, pad_id, cross):
    """The decoder's greedy search from the prompt `seq` [B, n] over the encoder's `hidden` (and the
    sources' `mask`, None: no padding): prefill, then one decode step per token; or one decoder
    graph for both — its caches inside (reset first, encoder_hidden_states fed at every call: the
    first computes the cross-attention keys and values from it, later ones keep them), or the
    encoder's `cross` cache read at every call and the self-attention past starting empty."""
    batch = seq.shape[0]
    one_graph = export.prefill is None

    static = export.static
    M = export.max_cache_len if static else None
    used = 0  # the static cache's filled slots
    # past_key_values.{i}.* (a static cache: its zeroed M-slot buffers)
    cache = {name[len("input."):] if name.startswith("input.") else name: v
             for name, v in _first_cache(export, batch, cross).items() if name != "cache_position"}
    begin = seq.shape[1]  # the first generated token's position (begin_suppress_tokens apply there)
    comp, feed = export.prefill or export.decode, {"input_ids": seq, "encoder_hidden_states": hidden}
    comp.reset()
    beam_idx = np.arange(batch, dtype=np.int32)  # greedy search: every row keeps its own cache
    tokens, all_logits = [], []
    done = np.zeros(batch, bool)
    for step in range(max_new_tokens):
        n_new = feed["input_ids"].shape[1]
        if static:
            if used + n_new > M:
                raise UsageError(f"static cache full: {used} + {n_new} tokens > max_cache_len {M}")
            feed["cache_position"] = np.arange(used, used + n_new, dtype=np.int64)
            used += n_new
        if mask is not None:
            feed["encoder_attention_mask"] = mask
        if one_graph:
            feed["encoder_hidden_states"], feed["beam_idx"] = hidden, beam_idx
        for name in comp.cache_inputs:  # past_key_values.{i}.* or input.past_key_values.{i}.*
            feed[name] = cache[name[len("input."):] if name.startswith("input.") else name]
        out = comp.run(feed)
        for name, value in out.items():  # present.{i}.* / output.past_key_values.{i}.* → the next step's
            if name.startswith("present."):
                cache["past_key_values." + name[len("present."):]] = value
            elif name.startswith("output."):
                cache[name[len("output."):]] = value
        logits = np.array(out["logits"][:, -1, :], dtype=np.float32)
        all_logits.append(logits.copy())
        cur_len = seq.shape[1]
        if cfg["suppress"]:
            logits[:, cfg["suppress"]] = -np.inf
        if cur_len == begin and cfg["begin_suppress"]:
            logits[:, cfg["begin_suppress"]] = -np.inf
        if cur_len < cfg["min_length"] and eos_ids:
            logits[:, eos_ids] = -np.inf
        if cfg["no_repeat_ngram_size"]:
            for row in range(batch):
                logits[row, banned_ngram_tokens(seq[row].tolist(), cfg["no_repeat_ngram_size"])] = -np.inf
        if cur_len == 1 and cfg["forced_bos"] is not None:
            forced = np.full_like(logits, -np.inf)
            forced[:, int(cfg["forced_bos"])] = 0
            logits = forced
        if step == max_new_tokens - 1 and cfg["forced_eos"]:  # generate()'s max_length - 1
            forced = np.full_like(logits, -np.inf)
            forced[:, cfg["forced_eos"]] = 0
            logits = forced
        next_ids = logits.argmax(axis=-1)
        if eos_ids:
            next_ids = np.where(done, pad_id, next_ids)
            done |= np.isin(next_ids, eos_ids)
        tokens.append(next_ids)
        if done.all():
            break
        seq = np.concatenate([seq, next_ids[:, None].astype(np.int64)], axis=1)
        comp, feed = export.decode, {"input_ids": next_ids[:, None].astype(np.int64)}
    return np.stack(tokens, axis=1), np.stack(all_logits)


# ---- the command line ------------------------------------------------------------------------


def read_generation_config(out_dir: Path):
    """(eos ids list, pad id): like generate(), pad defaults to the first EOS id."""
    path = out_dir / "generation_config.json"
    cfg = json.loads(path.read_text()) if path.is_file() else {}
    eos = cfg.get("eos_token_id")
    eos_ids = [] if eos is None else [int(e) for e in (eos if isinstance(eos, list) else [eos])]
    pad = cfg.get("pad_token_id")
    pad_id = int(pad) if pad is not None else (eos_ids[0] if eos_ids else 0)
    return eos_ids, pad_id


def audio_prompts(out_dir: Path, files) -> np.ndarray | dict:
    """What the encoder of the export in `out_dir` takes for the WAV `files` (one batch), as the checkpoint's
    feature extractor (its preprocessor_config.json, copied into the export) prepares them: Whisper's log-mel
    features [B, mels, frames], or a waveform encoder's {"input_values", "attention_mask"} [B, samples] padded to
    the longest."""
    if not (out_dir / "preprocessor_config.json").is_file():
        raise UsageError(f"{out_dir}: no preprocessor_config.json (the checkpoint's feature extractor)")
    from transformers import AutoFeatureExtractor
    extractor = AutoFeatureExtractor.from_pretrained(str(out_dir))
    audio = [read_wav(Path(f), extractor.sampling_rate) for f in files]
    if "input_features" in extractor.model_input_names:
        return extractor(audio, sampling_rate=extractor.sampling_rate, return_tensors="np").input_features
    out = extractor(audio, sampling_rate=extractor.sampling_rate, padding=True, return_attention_mask=True,
                    return_tensors="np")
    return {"input_values": out.input_values.astype(np.float32), "attention_mask": out.attention_mask.astype(np.int64)}


def parse_prompts(text: str):
    try:
        prompts = [[int(t) for t in p.split(",")] for p in text.split(";")]
    except ValueError:
        raise UsageError(f"--input-ids must be comma-separated integers, prompts separated by ';': {text!r}")
    return prompts


def main(argv, *, prog: str, doc: str, export_command: str, load_export, generate,
         prompts_first: bool = False) -> int:
    """The command line of both scripts: `prog OUT_DIR --input-ids ... [--max-new-tokens N]
    [--print-logits FILE.npz]`. load_export(out_dir) and generate(export, prompts, n, eos_ids,
    pad_id) are the script's; prompts_first: --input-ids is parsed before the export is loaded
    (which of two bad inputs is reported)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help=f"a directory written by `{export_command}`")
    sources = ap.add_mutually_exclusive_group(required=True)
    sources.add_argument("--input-ids", help='prompts: "1,2,3;4,5" (one batch, left-padded; an encoder-decoder\'s '
                                             'sources, right-padded)')
    sources.add_argument("--input-features", type=Path, metavar="FILE.npy",
                         help="Whisper: log-mel features [batch, mels, frames] (or [mels, frames]), float32")
    sources.add_argument("--audio", type=Path, nargs="+", metavar="FILE.wav",
                         help="an audio encoder-decoder's (Whisper's, Moonshine's) speech: 16-bit mono WAV files, one "
                              "batch, prepared by the export's feature extractor")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--print-logits", type=Path, metavar="FILE.npz",
                    help="save each step's last-position logits [steps, batch, vocab] and the tokens")
    args = ap.parse_args(argv)
    try:
        if args.max_new_tokens < 1:
            raise UsageError("--max-new-tokens must be at least 1")
        prompts = parse_prompts(args.input_ids) if prompts_first and args.input_ids is not None else None
        export = load_export(args.out_dir)
        eos_ids, pad_id = read_generation_config(args.out_dir)
        if args.input_features is not None:
            try:
                prompts = np.load(args.input_features).astype(np.float32)
            except (OSError, ValueError) as e:
                raise UsageError(f"--input-features {args.input_features}: {e}")
            if prompts.ndim == 2:
                prompts = prompts[None]
            if prompts.ndim != 3:
                raise UsageError(f"--input-features {args.input_features}: shape {prompts.shape}, want [batch, mels, frames]")
        elif args.audio:
            prompts = audio_prompts(args.out_dir, args.audio)
        elif prompts is None:
            prompts = parse_prompts(args.input_ids)
        tokens, logits = generate(export, prompts, args.max_new_tokens, eos_ids, pad_id)
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return report(tokens, logits, args.print_logits)


def report(tokens, logits, logits_file) -> int:
    """The scripts' output: --print-logits' file (each step's logits and the tokens), then one JSON
    list of new token ids per prompt on stdout; exit code 0."""
    if logits_file:
        np.savez(logits_file, logits=logits, tokens=tokens)
    for row in tokens:
        print(json.dumps([int(t) for t in row]))
    return 0
