"""transformers.exporters' own loader on hfx's plain exports (src/export/export.c: flat_specs, seed_fields): export.json
carries the seed's ExportMetadata for every plain forward — packages, export_config, export_dtype, export_device,
kwargs, in_constants, out_constants, and the pytree specs torch.export records (in_spec: the keyword call over the
graph's inputs; out_spec: the model's output class over its outputs) — so that
`transformers.exporters.ExportedModel.from_pretrained(hfx_dir)` loads the folder and its runners call the program as
the model, returning its output class.

  * the specs equal those the seed's own export of the same model records (its DynamoExporter's torch.export trace of
    the same keyword inputs, use_cache off: the plain graph returns no cache), compared as torch TreeSpecs: a Llama
    decoder (CausalLMOutputWithPast over logits), a ViT (BaseModelOutputWithPooling over both states), a BERT
    classifier (SequenceClassifierOutput, with token_type_ids) and bare encoders of ten lineages (BertModel's and
    RobertaModel's BaseModelOutputWithPoolingAndCrossAttentions, MPNetModel's, GteModel's, NomicBertModel's and
    JinaEmbeddingsV3Model's BaseModelOutputWithPooling or their own, DistilBertModel's, ModernBertModel's,
    DebertaV2Model's and EuroBertModel's BaseModelOutput);
  * the seed's ExportedModel over hfx's ONNX, OpenVINO and torch.export exports (OpenVINO at f32, passed as its runner
    takes it: config={"INFERENCE_PRECISION_HINT": "f32"}; the .pt2 called with keywords, as the seed calls its own)
    called with a left-padded batch of two prompts gives transformers' logits within 1e-4 (its padded positions too: eager attention), and the ViT's pixel values its two states;
  * generation in the seed's profile (io "seed"): the prefill's and decode's specs (the keyword call with
    transformers' DynamicCache or StaticCache, CausalLMOutputWithPast over the logits and the cache) equal those of
    the seed's own export_for_generation, and a greedy loop over the seed's runners on hfx's folders gives
    transformers' generate tokens."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conftest import PARITY_ATOL, describe, run_hfx

LLAMA = dict(vocab_size=120, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
VIT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=32,
           patch_size=8)


BERT = dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
            max_position_embeddings=64, num_labels=3)
# the bare encoders: each lineage's base class, its output class its own (pooled or not), and whether it takes
# token_type_ids
BARE = {
    "bert_model": ("Bert", BERT, True),
    "distilbert_model": ("DistilBert", dict(vocab_size=120, dim=32, n_layers=2, n_heads=4, hidden_dim=48,
                                            max_position_embeddings=64), False),
    "roberta_model": ("Roberta", dict(BERT, max_position_embeddings=72, pad_token_id=1), True),
    "mpnet_model": ("MPNet", dict(BERT, max_position_embeddings=72, pad_token_id=1), False),
    "modernbert_model": ("ModernBert", dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                            intermediate_size=48, max_position_embeddings=64, pad_token_id=0,
                                            global_attn_every_n_layers=2, local_attention=4), False),
    "deberta_v2_model": ("DebertaV2", dict(BERT, relative_attention=True, position_buckets=8,
                                           pos_att_type=["p2c", "c2p"]), False),  # (type_vocab_size 0: none)
    # the rotary encoders (transformers' classes of the Hub's remote code), bare
    "eurobert_model": ("EuroBert", dict(BERT, num_key_value_heads=2, mlp_bias=True, pad_token_id=0), False),
    "gte_model": ("Gte", dict(BERT, type_vocab_size=1, pad_token_id=0), False),
    "nomic_model": ("NomicBert", dict(BERT, type_vocab_size=2, pad_token_id=0), True),
    "jina_model": ("JinaEmbeddingsV3", dict(BERT, type_vocab_size=1, pad_token_id=1, max_position_embeddings=72),
                   False),
}


def _model(kind):
    import transformers
    torch.manual_seed(0)
    if kind == "bert":
        config = transformers.BertConfig(**BERT)
        return transformers.BertForSequenceClassification._from_config(config, attn_implementation="eager").eval()
    if kind in BARE:  # bare encoders: their lineage's own output class
        arch, fields, _ = BARE[kind]
        config = getattr(transformers, f"{arch}Config")(**fields)
        return getattr(transformers, f"{arch}Model")._from_config(config, attn_implementation="eager").eval()
    if kind == "llama":
        config = transformers.LlamaConfig(**LLAMA, use_cache=False)
        return transformers.LlamaForCausalLM._from_config(config, attn_implementation="eager").eval()
    return transformers.ViTModel._from_config(transformers.ViTConfig(**VIT), attn_implementation="eager").eval()


def _inputs(kind):
    if kind == "vit":
        return {"pixel_values": torch.from_numpy(np.random.default_rng(2).standard_normal((2, 3, 32, 32), np.float32))}
    ids = torch.tensor([[5, 17, 33, 40, 8, 9], [0, 0, 7, 3, 12, 90]])
    mask = (torch.arange(6)[None, :] >= torch.tensor([[0], [2]])).long()
    if kind == "bert" or (kind in BARE and BARE[kind][2]):
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    if kind in BARE:
        return {"input_ids": ids, "attention_mask": mask}
    return {"input_ids": ids, "attention_mask": mask, "position_ids": torch.arange(6)[None].expand(2, -1)}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(checkpoint, {format: hfx's plain export}) per model kind, made once."""
    made = {}

    def get(kind, fmt):
        if kind not in made:
            root = tmp_path_factory.mktemp(kind)
            _model(kind).save_pretrained(root / "ckpt")
            made[kind] = (root, {})
        root, outs = made[kind]
        if fmt not in outs:
            out = root / fmt
            proc = run_hfx(["export", root / "ckpt", out, "--format", fmt, "--dynamic"])
            assert proc.returncode == 0, describe(proc)
            outs[fmt] = out
        return root / "ckpt", outs[fmt]
    return get


@pytest.mark.parametrize("kind", ["llama", "vit", "bert", *BARE])
def test_specs_are_the_seeds(kind, exported, tmp_path):
    """hfx's in_spec and out_spec are the ones the seed's own export of the model records for the same keyword
    inputs."""
    from torch.utils._pytree import treespec_loads
    from transformers.exporters import DynamoConfig, DynamoExporter
    from transformers.exporters.metadata import register_treespec_types
    _, out = exported(kind, "onnx")
    ours = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]
    seed = DynamoExporter().export(_model(kind), _inputs(kind), DynamoConfig(dynamic=True)).components["model"].metadata
    for field in ("in_spec", "out_spec"):
        register_treespec_types(seed_spec := getattr(seed, field))
        assert treespec_loads(ours[field]) == treespec_loads(seed_spec), f"{field}: hfx {ours[field]}, seed {seed_spec}"
    assert ours["export_dtype"] == seed.export_dtype and ours["in_constants"] == {} and ours["out_constants"] == []
    assert sorted(ours["kwargs"]) == sorted(seed.kwargs)


@pytest.mark.parametrize("fmt", ["onnx", "openvino", "dynamo"])
@pytest.mark.parametrize("kind", ["llama", "vit", "bert", *BARE])
def test_seed_loader_runs_hfx_exports(kind, fmt, exported):
    """The seed's ExportedModel loads hfx's folder and, called as the model, returns its output class with
    transformers' values."""
    from transformers.exporters import ExportedModel
    _, out = exported(kind, fmt)
    runner = ({"config": {"INFERENCE_PRECISION_HINT": "f32"}} if fmt == "openvino"
              else {"trust_remote_code": True} if fmt == "dynamo" else {})  # (a .pt2 is pickled: the seed's gate)
    model = ExportedModel.from_pretrained(out, **runner)
    inputs = _inputs(kind)
    got = model(**inputs)
    with torch.no_grad():
        want = _model(kind)(**inputs)
    assert type(got).__name__ == type(want).__name__
    fields = [f for f in ("logits", "last_hidden_state", "pooler_output") if getattr(want, f, None) is not None]
    assert fields and fields == [f for f in ("logits", "last_hidden_state", "pooler_output")
                                 if getattr(got, f, None) is not None], (kind, fields)
    for field in fields:
        diff = (torch.as_tensor(np.asarray(getattr(got, field))) - getattr(want, field)).abs().max().item()
        assert diff <= PARITY_ATOL, f"{kind} {fmt} {field}: max abs diff {diff}"


# ---- generation components in the seed's profile (io "seed"): the specs of their call (export.c: call_specs) ----

CACHES = {"dynamic": (), "static": ("--cache", "static", "--max-cache-len", "32")}


@pytest.fixture(scope="module")
def generation(tmp_path_factory):
    """(checkpoint, {(format, cache): hfx's --io seed multi-token-decode export}) of the Llama, made once."""
    root = tmp_path_factory.mktemp("gen")
    _model("llama").save_pretrained(root / "ckpt")
    outs = {}

    def get(fmt, cache):
        if (fmt, cache) not in outs:
            out = root / f"{fmt}-{cache}"
            (root / "ov.json").write_text(json.dumps({"export_format": "openvino", "stateful": False}))
            # (ExecuTorch plans memory for each dim's bound, the cache's too)
            (root / "et.json").write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {
                "input_ids": {"0": {"name": "batch", "max": 2}, "1": {"name": "sequence", "max": 32}}}}))
            flags = (["--config", str(root / "ov.json")] if fmt == "openvino-stateless"
                     else ["--config", str(root / "et.json")] + (["--max-cache-len", "32"] if cache == "dynamic" else [])
                     if fmt == "executorch" else ["--format", fmt])
            proc = run_hfx(["export", root / "ckpt", out, *flags, "--dynamic", "--for-generation",
                            "--multi-token-decode", "--io", "seed", *CACHES[cache]])
            assert proc.returncode == 0, describe(proc)
            outs[fmt, cache] = out
        return root / "ckpt", outs[fmt, cache]
    return get


@pytest.mark.parametrize("cache", list(CACHES))
def test_generation_specs_are_the_seeds(cache, generation):
    """The prefill's and decode's in_spec and out_spec — the keyword call with transformers' DynamicCache or
    StaticCache object (empty for the prefill of a growing cache) and CausalLMOutputWithPast over the logits and the
    cache after the call — are those the seed's own export_for_generation of the model records, in ONNX, OpenVINO
    (stateful too, as the seed's own), torch.export and ExecuTorch."""
    import transformers
    from torch.utils._pytree import treespec_loads
    from transformers.exporters import OnnxConfig, OnnxExporter
    from transformers.exporters.metadata import register_treespec_types
    ckpt, _ = generation("onnx", cache)
    model = transformers.LlamaForCausalLM.from_pretrained(ckpt, use_cache=True).eval()  # (_model's config: off)
    ids = torch.tensor([[1, 5, 9, 3, 7]])
    gen = transformers.GenerationConfig(cache_implementation="static", max_cache_len=32) if cache == "static" else None
    seed = OnnxExporter().export_for_generation(model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)},
                                                OnnxConfig(dynamic=True), generation_config=gen,
                                                multi_token_decode=True).components
    # (a stateful OpenVINO model keeps a growing cache only)
    formats = ("onnx", "openvino", "openvino-stateless", "dynamo", "executorch") if cache == "dynamic" else (
        "onnx", "openvino-stateless", "dynamo", "executorch")
    for fmt in formats:
        ours = json.loads((generation(fmt, cache)[1] / "export.json").read_text())["components"]
        assert sorted(ours) == sorted(seed) == ["decode", "prefill"]
        for name in ours:
            for field in ("in_spec", "out_spec"):
                register_treespec_types(want := getattr(seed[name].metadata, field))
                got = ours[name]["metadata"][field]
                assert treespec_loads(got) == treespec_loads(want), f"{fmt} {cache} {name} {field}: {got} != {want}"


@pytest.mark.parametrize("fmt", ["onnx", "openvino-stateless", "dynamo"])
@pytest.mark.parametrize("cache", list(CACHES))
def test_seed_runners_generate_from_hfx_exports(fmt, cache, generation):
    """The seed's ExportedModel loads hfx's generation folder, and a greedy loop over its runners — the prefill called
    with the prompt and an empty cache object, each decode with the token and the cache the last call returned —
    gives transformers' generate tokens (OpenVINO stateless: the seed's runner returns the cache its stateful decode
    keeps inside)."""
    import transformers
    from transformers.exporters import ExportedModel
    ckpt, out = generation(fmt, cache)
    model = transformers.LlamaForCausalLM.from_pretrained(ckpt, use_cache=True).eval()
    runner = {"config": {"INFERENCE_PRECISION_HINT": "f32"}} if fmt.startswith("openvino") else {}
    runners = ExportedModel.from_pretrained(out, trust_remote_code=True, **runner).runners
    prompt = torch.tensor([[1, 5, 9, 3, 7]])
    with torch.no_grad():
        want = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=12, do_sample=False,
                              **({"cache_implementation": "static"} if cache == "static" else {}))[0, 5:].tolist()
    empty = (transformers.StaticCache(config=model.config, max_cache_len=32) if cache == "static"
             else transformers.DynamicCache(config=model.config))
    step = runners["prefill"](input_ids=prompt, position_ids=torch.arange(5)[None], cache=empty)
    tokens = []
    for n in range(5, 5 + 12):
        tokens.append(int(torch.as_tensor(step.logits)[0, -1].argmax()))
        # a static cache's step also takes its 4-D mask over the slots, as the seed records it: the token at slot n
        # sees slots 0..n
        mask = {"attention_mask": (torch.arange(32) <= n)[None, None, None, :]} if cache == "static" else {}
        step = runners["decode"](input_ids=torch.tensor([[tokens[-1]]]), position_ids=torch.tensor([[n]]),
                                 cache=step.cache, **mask)
    assert len(set(want)) > 2 and tokens == want, f"{fmt} {cache}: {tokens} != {want}"
