"""onnxruntime-genai runs hfx's generation export as it is (genai_config.json + decode.onnx):
greedy generation must equal transformers' generate token for token."""
import onnxruntime_genai as og
import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from conftest import run_hfx, describe
from genutil import genai_greedy

NEW_TOKENS = 24
PROMPTS = ([5, 6, 7, 8, 9, 10], [11, 12, 13])


@pytest.mark.parametrize("name", ["llama_default", "qwen3", "mistral_swa"])
def test_genai_greedy_equals_transformers(checkpoints, tmp_path, name):
    model_dir = checkpoints(name)
    out = tmp_path / "genai"
    proc = run_hfx(["export", model_dir, out, "--format", "onnx", "--for-generation",
                    "--multi-token-decode", "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    assert (out / "genai_config.json").exists()
    ref_model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    model = og.Model(str(out))
    for prompt in PROMPTS:
        got = genai_greedy(model, prompt, NEW_TOKENS)
        with torch.no_grad():
            # both stop after the checkpoint's EOS token (generation_config.json)
            want = ref_model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                      max_new_tokens=NEW_TOKENS, do_sample=False)[0, len(prompt):].tolist()
        eos = ref_model.generation_config.eos_token_id
        eos = set(eos if isinstance(eos, list) else [eos])
        if want and want[-1] in eos:  # genai ends the sequence before the EOS it stopped at
            want = want[:-1]
        assert got == want, f"{name} prompt {prompt}: genai {got} != transformers {want}"


def test_genai_config_only_for_a_single_growing_graph(checkpoints, tmp_path):
    """genai's decoder is one graph with a growing cache: prefill+decode splits and static caches
    get no genai_config.json rather than one genai would misread."""
    model_dir = checkpoints("llama_default")
    for flags in (["--dynamic"], ["--multi-token-decode", "--dynamic", "--cache", "static", "--max-cache-len", "32"]):
        out = tmp_path / ("x".join(flags).replace("-", ""))
        proc = run_hfx(["export", model_dir, out, "--format", "onnx", "--for-generation", "--quiet", *flags])
        assert proc.returncode == 0, describe(proc)
        assert not (out / "genai_config.json").exists(), flags
