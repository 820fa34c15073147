"""hfx.utils: the seed's `transformers.exporters.utils.decompose_for_generation` for hfx's exports.

hfx exports generation components from the checkpoint, not from torch submodules, so what the seed returns as
`(submodule, forward_inputs)` is `(None, forward_inputs)` here; the forward inputs are the ones the seed captures, which
the graphs of hfx's `export_for_generation` (the seed's profile, the package's default) take by name."""
from __future__ import annotations

from typing import Any


def decompose_for_generation(model, inputs: dict[str, Any], generation_config: Any = None,
                             multi_token_decode: bool = False) -> dict[str, tuple[None, dict]]:
    """`{component: (None, forward_inputs)}`: the components transformers.exporters' decomposition names —
    "prefill" / "decode" for a causal LM or an encoder-decoder, "language_model" / "lm_head" / "decode" for a
    multimodal model — each with the keyword inputs the seed captures from one `model.generate(**inputs)` (two or,
    with `multi_token_decode`, three new tokens; `generation_config` as the seed takes it: a static cache with
    `cache_implementation="static"` and `max_cache_len`). hfx's graphs of the same names take these inputs (a cache
    object by its flattened leaves, as the seed's runners pass it).

    What differs from the seed's: no torch submodule (None in its place), and hfx's export also writes components the
    seed leaves to the caller (an encoder-decoder's `encoder`, a multimodal model's `image_encoder` and
    `embed_tokens`), which are not in this dict. Needs torch and transformers (the capture runs the model)."""
    try:
        from transformers.exporters.utils import decompose_for_generation as seed_decompose
    except ImportError as e:  # (the capture is the seed's: it runs the model's generate)
        raise ImportError("hfx.utils.decompose_for_generation runs the model's generate() as transformers.exporters "
                          "does: it needs transformers with its exporters module (5.24 or later)") from e
    parts = seed_decompose(model, inputs, generation_config=generation_config, multi_token_decode=multi_token_decode)
    return {name: (None, forward_inputs) for name, (_module, forward_inputs) in parts.items()}
