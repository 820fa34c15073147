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


def inject_lora(model: torch.nn.Module, path=None, seed: int = 3, **lora) -> torch.nn.Module:
    """model with a LoRA adapter injected by peft (r 4 and alpha 8 unless `lora` says otherwise; its matrices random
    from `seed`) and, with `path`, saved there as peft saves one: adapter_config.json and adapter_model.safetensors,
    its names under base_model.model. (transformers 5.24's own adapter loading wants a newer peft than the index holds:
    the tests build the adapted reference with peft's API.)"""
    from peft import LoraConfig, get_peft_model_state_dict, inject_adapter_in_model
    from safetensors.torch import save_file
    config = LoraConfig(**{"r": 4, "lora_alpha": 8, "lora_dropout": 0.0, **lora})
    model = inject_adapter_in_model(config, model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_" in n:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
    if path is not None:
        config.save_pretrained(str(path))
        save_file({f"base_model.model.{k}": v.contiguous() for k, v in get_peft_model_state_dict(model).items()},
                  str(path / "adapter_model.safetensors"))
    return model
