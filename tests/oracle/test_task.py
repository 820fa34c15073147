"""A config.json that names no class (`architectures` null, as transformers writes it for a model loaded from a GGUF
file, or missing) against transformers' Auto classes: `hfx export --task T` exports the class AutoModelFor<T> builds
from its model_type, with that model's outputs (within 1e-4 in ONNX Runtime); a causal LM's checkpoint exported as its
base model (feature-extraction) reads its stack and leaves the head, as AutoModel loads it; without --task the only
class of a model_type is taken and several are listed; tasks that contradict the named class, unknown tasks, and a
task whose head the checkpoint lacks (transformers would initialize it at random) are refused by name."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from conftest import assert_logits_close, describe, run_forward, run_hfx

AUTO = {"text-generation": "AutoModelForCausalLM", "feature-extraction": "AutoModel"}


def without_architectures(src, dst, value=None):
    """A copy of checkpoint `src` whose config.json has architectures `value` (None: null; "drop": no key)."""
    shutil.copytree(src, dst)
    cfg = json.loads((dst / "config.json").read_text())
    if value == "drop":
        cfg.pop("architectures")
    else:
        cfg["architectures"] = value
    (dst / "config.json").write_text(json.dumps(cfg))
    return dst


@pytest.mark.parametrize("task,value", [("text-generation", None), ("text-generation-with-past", "drop"),
                                        ("feature-extraction", None)])
def test_task_picks_the_auto_class(checkpoints, tmp_path, task, value):
    """The class hfx exports is the one transformers' Auto class for the task builds from the config, and its outputs
    are that model's."""
    import transformers
    ck = without_architectures(checkpoints("llama_default"), tmp_path / "ck", value)
    proc = run_hfx(["export", ck, tmp_path / "out", "--format", "onnx", "--dynamic", "--task", task])
    assert proc.returncode == 0, describe(proc)
    model = getattr(transformers, AUTO[task.removesuffix("-with-past")]).from_pretrained(str(ck), attn_implementation="eager").eval()
    exported = json.loads((tmp_path / "out" / "export.json").read_text())["components"]["model"]["metadata"]
    assert exported["architecture"] == type(model).__name__
    ids = np.array([[5, 9, 2, 7, 11, 3], [0, 0, 4, 8, 6, 1]], dtype=np.int64)
    mask = np.array([[1] * 6, [0, 0, 1, 1, 1, 1]], dtype=np.int64)
    pos = np.clip(mask.cumsum(1) - 1, 0, None)
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                    position_ids=torch.from_numpy(pos))
    want = out.logits if hasattr(out, "logits") else out.last_hidden_state
    got = run_forward("onnx", tmp_path / "out", {"input_ids": ids, "attention_mask": mask, "position_ids": pos})
    assert_logits_close(list(got.values())[0], want.numpy(), f"--task {task}")


def test_without_task_the_choices_are_listed(checkpoints, tmp_path):
    ck = without_architectures(checkpoints("llama_default"), tmp_path / "ck")
    proc = run_hfx(["export", ck, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2, describe(proc)
    for words in ("'architectures' is missing", "--task text-generation (LlamaForCausalLM)",
                  "--task feature-extraction (LlamaModel)"):
        assert words in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


def test_without_task_the_only_class_is_taken(tmp_path):
    """model_type gemma3n_audio has one class (AutoModel's Gemma3nAudioEncoder): no task needed."""
    import transformers
    model = transformers.Gemma3nAudioEncoder(transformers.Gemma3nAudioConfig(
        hidden_size=16, conf_num_hidden_layers=1, conf_num_attention_heads=2, input_feat_size=8,
        sscp_conv_channel_size=[4, 4]))
    model.save_pretrained(tmp_path / "src")
    ck = without_architectures(tmp_path / "src", tmp_path / "ck")
    proc = run_hfx(["export", ck, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 0 and "Gemma3nAudioEncoder" in proc.stderr + proc.stdout, describe(proc)
    assert type(transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(str(ck)))).__name__ == \
        "Gemma3nAudioEncoder"


@pytest.mark.parametrize("named,task,words", [
    (True, "feature-extraction", "names LlamaForCausalLM, which is not what transformers builds for --task "
                                 "feature-extraction"),
    (False, "summarize-please", "--task 'summarize-please' is not a task hfx knows"),
    (False, "fill-mask", "has no class hfx exports for --task fill-mask"),
    # AutoModelForSequenceClassification would give the causal LM's checkpoint a random `score`: hfx has no such head
    (False, "text-classification", "score.weight"),
])
def test_refused(checkpoints, tmp_path, named, task, words):
    ck = checkpoints("llama_default")
    if not named:
        ck = without_architectures(ck, tmp_path / "ck")
    proc = run_hfx(["export", ck, tmp_path / "out", "--format", "onnx", "--task", task])
    assert proc.returncode == 2 and words in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


def test_the_table_is_transformers_own():
    """src/arch/auto_classes.def is what tools/gen_auto_classes.py derives from the pinned transformers' Auto mappings
    and hfx's registry (a class added without rerunning it would be missing from --task)."""
    import subprocess
    import sys
    from conftest import REPO
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "gen_auto_classes.py"), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
