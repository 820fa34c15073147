"""Deterministic weights for the tiny image and image-text checkpoints of test_vision.py,
test_contrastive.py and test_vlm.py: large enough to matter (transformers' own init leaves norms at
1 and many tables near 0, which hides a wrong scale or offset)."""

from __future__ import annotations

import math

import torch


def init_weights(model: torch.nn.Module, seed: int, table_std, fixed: dict | None = None,
                 offset_norm=lambda name: False) -> None:
    """Every parameter, in order: `fixed` ones (name → value); tables, whose std table_std(name)
    gives (None: not a table); other matrices at 1/√fan-in; norm weights around 1, or around 0 where
    offset_norm(name) (Gemma's norms scale by 1 + w); the rest (biases, vectors) small."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            std = table_std(name)
            if fixed and name in fixed:
                p.copy_(torch.full(p.shape, fixed[name]))
            elif std is not None:
                p.copy_(torch.randn(p.shape, generator=g) * std)
            elif p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p[0].numel()))
            elif "norm" in name and name.endswith("weight") and offset_norm(name):
                p.copy_(-0.5 + torch.rand(p.shape, generator=g))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
