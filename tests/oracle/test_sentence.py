"""Sentence embeddings: an encoder export that ends where sentence-transformers' own pipeline ends.

A sentence-transformers folder (modules.json: Transformer, Pooling, optionally Normalize) is built
here with the real library (the current layout it saves, and the legacy layout of older folders:
`sentence_transformers.models.Pooling` with pooling_mode_*_tokens booleans, which the library still
reads). hfx exports it with `--pooling auto` (the default) or an explicit `--pooling`; the graph's
`sentence_embedding` must match `SentenceTransformer(folder)(features)["sentence_embedding"]` and its
`token_embeddings` the transformer's last_hidden_state, every element within 1e-4, through ONNX
Runtime, OpenVINO and torch.export.load of the .pt2, on batches with right padding, left padding
and a row the mask keeps only one token of. Every pooling mode, their concatenation and
normalization are covered; so are the files carried into the export and the refusals (a module hfx
cannot reproduce, a head model, a malformed folder) with exit code 2 and nothing written.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from sentence_transformers import SentenceTransformer
from sentence_transformers import models as st_models
from transformers import (
    BertConfig, BertForSequenceClassification, BertModel, EuroBertConfig, EuroBertModel, GteConfig, GteModel,
    JinaEmbeddingsV3Config, JinaEmbeddingsV3Model, ModernBertConfig, ModernBertDecoderConfig, ModernBertDecoderModel,
    ModernBertModel, MPNetConfig, MPNetModel, NomicBertConfig, NomicBertModel, Qwen3Config, Qwen3ForCausalLM, RobertaConfig, RobertaModel, XLMRobertaConfig, XLMRobertaModel)

from conftest import PARITY_ATOL, REPO, call_pt2, describe, load_pt2, run_forward, run_hfx

MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
SMALL = dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
             max_position_embeddings=64)
ENCODERS = {
    "bert": (BertConfig, BertModel, 0),
    "roberta": (RobertaConfig, RobertaModel, 1),
    "xlmr": (XLMRobertaConfig, XLMRobertaModel, 1),
    "modernbert": (ModernBertConfig, ModernBertModel, 0),
    # a causal LM's folder (Qwen3-Embedding's form): sentence-transformers pools its base model's final states
    "qwen3": (Qwen3Config, Qwen3ForCausalLM, 0),
    # EuroBERT: Llama's layers attending both ways (positions 0, 1, ... whatever the padding)
    "eurobert": (EuroBertConfig, EuroBertModel, 0),
    # GTE: post-LN layers attending both ways, rotary, one token type
    "gte": (GteConfig, GteModel, 0),
    # NomicBERT (nomic-embed-text's): GTE-like post-LN layers, rotary, two token types (a token_type_ids input)
    "nomic": (NomicBertConfig, NomicBertModel, 0),
    # JinaEmbeddingsV3: XLM-R's embeddings over rotary post-LN layers (one token type, no token_type_ids input)
    "jina": (JinaEmbeddingsV3Config, JinaEmbeddingsV3Model, 1),
    # ModernBERT's decoder (a causal LM's base model, Ettin's): last-token pooling
    "modernbert_decoder": (ModernBertDecoderConfig, ModernBertDecoderModel, 0),
    # MPNet (all-mpnet-base-v2's): RoBERTa's positions, a relative position bias
    "mpnet": (MPNetConfig, MPNetModel, 1),
}
# ModernBERT's own keys: a window smaller than the batch's rows, special ids inside the tiny vocabulary
MODERN = dict(local_attention=4, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)
LEGACY_KEYS = {"cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens", "mean": "pooling_mode_mean_tokens",
               "mean_sqrt_len_tokens": "pooling_mode_mean_sqrt_len_tokens",
               "weightedmean": "pooling_mode_weightedmean_tokens", "lasttoken": "pooling_mode_lasttoken"}


def _base_model(arch: str, root):
    """A tiny encoder saved with transformers (fixed seed, weights drawn wide enough that every token's
    embedding differs visibly)."""
    cfg_cls, model_cls, pad = ENCODERS[arch]
    out = root / f"{arch}_base"
    if not out.exists():
        torch.manual_seed(7)
        extra = (MODERN if arch in ("modernbert", "modernbert_decoder") else dict(num_key_value_heads=2, head_dim=8, tie_word_embeddings=False)
                 if arch == "qwen3" else dict(num_key_value_heads=2, mlp_bias=True) if arch == "eurobert"
                 else {"type_vocab_size": 1} if arch in ("gte", "jina") else {} if arch == "mpnet" else {"type_vocab_size": 2})
        model = model_cls(cfg_cls(**SMALL, pad_token_id=pad, **extra)).eval()
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.3)
        model.save_pretrained(out)
        if arch in ("modernbert", "eurobert", "gte", "mpnet", "nomic", "jina", "modernbert_decoder"):  # sentence-transformers wants a tokenizer beside it; the tests feed ids
            from transformers import BertTokenizerFast

            vocab = root / "vocab.txt"
            vocab.write_text("\n".join(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"] +
                                       [f"t{i}" for i in range(SMALL["vocab_size"] - 5)]))
            BertTokenizerFast(str(vocab)).save_pretrained(out)
    return out


def _st_folder(root, arch: str, modes, normalize: bool, legacy: bool = False, dense: bool = False):
    """A sentence-transformers folder around the tiny encoder, saved by the library (legacy: its
    modules.json and Pooling config rewritten in the old layout)."""
    name = f"st_{arch}_{'-'.join(modes)}_{int(normalize)}_{int(legacy)}_{int(dense)}"
    out = root / name
    if out.exists():
        return out
    transformer = st_models.Transformer(str(_base_model(arch, root)))
    chain = [transformer, st_models.Pooling(SMALL["hidden_size"], pooling_mode=tuple(modes) if len(modes) > 1 else modes[0])]
    if dense:
        chain.append(st_models.Dense(SMALL["hidden_size"] * len(modes), 8))
    if normalize:
        chain.append(st_models.Normalize())
    SentenceTransformer(modules=chain, device="cpu").save(str(out))
    if legacy:
        mods = json.loads((out / "modules.json").read_text())
        for m in mods:
            m["type"] = "sentence_transformers.models." + m["type"].rsplit(".", 1)[1]
        (out / "modules.json").write_text(json.dumps(mods))
        cfg = {"word_embedding_dimension": SMALL["hidden_size"]}
        cfg.update({key: mode in modes for mode, key in LEGACY_KEYS.items()})
        (out / "1_Pooling" / "config.json").write_text(json.dumps(cfg))
    return out


def _inputs(arch: str):
    """Batch 4, length 9: a full row, right padding, left padding, and a row with one kept token."""
    pad = ENCODERS[arch][2]
    rng = np.random.default_rng(3)
    ids = rng.integers(3, SMALL["vocab_size"], (4, 9)).astype(np.int64)
    mask = np.ones((4, 9), np.int64)
    mask[1, 6:] = 0
    mask[2, :4] = 0
    mask[3, 1:] = 0
    ids[mask == 0] = pad
    if arch in ("modernbert", "qwen3", "eurobert", "gte", "mpnet", "jina", "modernbert_decoder"):  # no token types
        return {"input_ids": ids, "attention_mask": mask}
    types = np.zeros_like(ids)
    types[0, 5:] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def _reference(folder, inputs):
    model = SentenceTransformer(str(folder), device="cpu").eval()
    with torch.no_grad():
        out = model({k: torch.from_numpy(v) for k, v in inputs.items()})
    return out["token_embeddings"].numpy(), out["sentence_embedding"].numpy()


def _run(fmt: str, out, inputs):
    if fmt == "onnx":
        import onnxruntime as ort

        sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        feed = {i.name: inputs[i.name] for i in sess.get_inputs()}
        return dict(zip(names, sess.run(names, feed)))
    if fmt == "openvino":
        from ovutil import compile_model

        compiled = compile_model(out / "model.xml")
        request = compiled.create_infer_request()
        takes = {i.get_any_name() for i in compiled.inputs}  # (an encoder computes its positions: none fed)
        request.infer({k: np.ascontiguousarray(v) for k, v in inputs.items() if k in takes})
        return {o.get_any_name(): np.array(request.get_tensor(o.get_any_name()).data) for o in compiled.outputs}
    if fmt == "executorch":
        from etutil import worker

        meta = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]
        outs = worker().run(out / "model.pte", [inputs[n] for n in meta["input_names"]])
        return dict(zip(meta["output_names"], outs))
    names = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]["output_names"]
    outs = call_pt2(load_pt2(out / "model.pt2"), inputs)
    return {n: o.detach().numpy() for n, o in zip(names, outs)}


def _export(folder, out, fmt, *flags):
    dims = ["--dynamic"]
    if fmt == "executorch":  # its dims need bounds: the inputs' [4, 9]
        cfg = out.parent / f"{out.name}-bounds.json"
        cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {"input_ids": {
            "0": {"name": "batch", "max": 4}, "1": {"name": "sequence", "max": 9}}}}))
        dims = ["--config", str(cfg)]
    proc = run_hfx(["export", folder, out, "--format", fmt, *dims, "--quiet", *flags])
    assert proc.returncode == 0, describe(proc)
    return proc


def _check(got: dict, tokens, sentence, mask, label):
    """Token embeddings are compared where the mask keeps a token: sentence-transformers' ModernBERT
    path leaves other values at padding than the eager model (whose padded positions test_decoders_encoders.py
    compares)."""
    assert set(got) == {"token_embeddings", "sentence_embedding"}, f"{label}: outputs {sorted(got)}"
    assert got["sentence_embedding"].shape == sentence.shape, f"{label}: {got['sentence_embedding'].shape}"
    assert got["token_embeddings"].shape == tokens.shape, f"{label}: {got['token_embeddings'].shape}"
    err_t = float(np.max(np.abs(got["token_embeddings"] - tokens)[mask.astype(bool)]))
    err_s = float(np.max(np.abs(got["sentence_embedding"] - sentence)))
    assert err_t <= PARITY_ATOL and err_s <= PARITY_ATOL, f"{label}: token max |diff| {err_t}, sentence {err_s}"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("sentence")


FORMATS = ("onnx", "openvino", "dynamo", "executorch")
AUTO_CASES = [("bert", (m,), False, False) for m in MODES] + [
    ("bert", ("cls", "mean", "max"), True, False),
    ("roberta", ("mean",), True, True),
    ("xlmr", ("lasttoken",), False, True),
    ("xlmr", ("weightedmean", "cls"), True, False),
    ("modernbert", ("mean",), True, False),
    ("qwen3", ("lasttoken",), True, False),
    ("qwen3", ("mean", "max"), False, False),
    ("eurobert", ("mean",), True, False),
    ("gte", ("cls",), True, False),
    ("mpnet", ("mean",), True, False),
    ("nomic", ("mean",), True, False),
    ("jina", ("mean",), True, False),
    ("modernbert_decoder", ("lasttoken",), True, False),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("modes,normalize", [(("mean",), True), (("cls", "max"), False)])
def test_dense_modules_match_sentence_transformers(root, modes, normalize, fmt):
    """A folder with Dense modules after the pooling (LaBSE's, EmbeddingGemma's: linears with tanh or none, then
    Normalize) ends in the library's sentence embedding; export.json lists them."""
    folder = root / f"st_dense_{'-'.join(modes)}_{int(normalize)}"
    if not folder.exists():
        transformer = st_models.Transformer(str(_base_model("bert", root)))
        width = SMALL["hidden_size"] * len(modes)
        chain = [transformer, st_models.Pooling(SMALL["hidden_size"], pooling_mode=modes if len(modes) > 1 else modes[0]),
                 st_models.Dense(width, 24), st_models.Dense(24, 12, bias=False, activation_function=torch.nn.Identity())]
        if normalize:
            chain.append(st_models.Normalize())
        torch.manual_seed(5)
        for m in chain[2:4]:
            with torch.no_grad():
                for p in m.parameters():
                    p.normal_(0.0, 0.3)
        SentenceTransformer(modules=chain, device="cpu").save(str(folder))
    inputs = _inputs("bert")
    tokens, sentence = _reference(folder, inputs)
    assert sentence.shape == (4, 12)
    out = root / f"out_{folder.name}_{fmt}"
    _export(folder, out, fmt)
    _check(_run(fmt, out, inputs), tokens, sentence, inputs["attention_mask"], f"dense {fmt}")
    meta = json.loads((out / "export.json").read_text())["sentence_embedding"]
    assert [d["out_features"] for d in meta["dense"]] == [24, 12] and meta["dense"][0]["activation"] == "tanh"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("arch,modes,normalize,legacy", AUTO_CASES,
                         ids=[f"{a}-{'+'.join(m)}{'-norm' if n else ''}{'-legacy' if lg else ''}"
                              for a, m, n, lg in AUTO_CASES])
def test_folder_pooling_matches_sentence_transformers(root, arch, modes, normalize, legacy, fmt):
    """The default export of a sentence-transformers folder ends in its sentence embedding."""
    folder = _st_folder(root, arch, modes, normalize, legacy)
    inputs = _inputs(arch)
    tokens, sentence = _reference(folder, inputs)
    out = root / f"out_{folder.name}_{fmt}"
    _export(folder, out, fmt)
    _check(_run(fmt, out, inputs), tokens, sentence, inputs["attention_mask"], f"[{fmt}] {folder.name}")
    manifest = json.loads((out / "export.json").read_text())
    assert manifest["sentence_embedding"] == {"pooling_mode": list(modes), "normalize": normalize}
    # the folder's own pipeline files are carried over, byte for byte
    for rel in ("modules.json", "1_Pooling/config.json", "sentence_bert_config.json"):
        assert (out / rel).read_bytes() == (folder / rel).read_bytes(), rel
    assert "1_Pooling" in manifest["files"]


def test_normalize_on_its_own_is_visible(root):
    """The harness can fail: with and without Normalize the references differ by far more than
    the tolerance, and so do two pooling modes."""
    inputs = _inputs("bert")
    _, plain = _reference(_st_folder(root, "bert", ("mean",), False), inputs)
    _, unit = _reference(_st_folder(root, "bert", ("mean",), True), inputs)
    _, first = _reference(_st_folder(root, "bert", ("cls",), False), inputs)
    assert np.max(np.abs(plain - unit)) > 100 * PARITY_ATOL
    assert np.max(np.abs(plain - first)) > 100 * PARITY_ATOL


@pytest.mark.parametrize("fmt", ("onnx", "openvino"))
def test_explicit_pooling_on_a_plain_encoder(root, fmt):
    """--pooling and --normalize on a folder without modules.json: the same as the pipeline
    sentence-transformers builds from those modules."""
    base = _base_model("roberta", root)
    inputs = _inputs("roberta")
    ref = _st_folder(root, "roberta", ("weightedmean", "max"), True)
    tokens, sentence = _reference(ref, inputs)
    out = root / f"explicit_{fmt}"
    _export(base, out, fmt, "--pooling", "weightedmean,max", "--normalize")
    _check(_run(fmt, out, inputs), tokens, sentence, inputs["attention_mask"], f"[{fmt}] explicit")
    assert not (out / "modules.json").exists()


def test_pooling_none_keeps_the_encoder_outputs(root):
    folder = _st_folder(root, "bert", ("mean",), True)
    out = root / "none"
    _export(folder, out, "onnx", "--pooling", "none")
    import onnx

    names = [o.name for o in onnx.load(str(out / "model.onnx"), load_external_data=False).graph.output]
    assert names[0] == "last_hidden_state" and "sentence_embedding" not in names
    assert "sentence_embedding" not in json.loads((out / "export.json").read_text())


def test_export_over_a_previous_one_replaces_its_folders(root):
    """Module folders are part of the export's transaction: replaced whole, user files kept; a
    file where the export writes a folder is refused and the previous export stays."""
    a = _st_folder(root, "bert", ("mean",), True)
    b = _st_folder(root, "bert", ("cls",), False)
    out = root / "again"
    _export(a, out, "onnx")
    (out / "notes.txt").write_text("mine")
    _export(b, out, "onnx")
    assert (out / "1_Pooling" / "config.json").read_bytes() == (b / "1_Pooling" / "config.json").read_bytes()
    assert not (out / "2_Normalize").exists()  # the previous export's folder, not written again
    assert (out / "notes.txt").read_text() == "mine"
    bad = root / "file_in_the_way"
    bad.mkdir()
    (bad / "1_Pooling").write_text("a file")
    proc = run_hfx(["export", a, bad, "--format", "onnx", "--quiet"])
    assert proc.returncode == 2 and "1_Pooling" in proc.stderr, describe(proc)
    assert sorted(p.name for p in bad.iterdir()) == ["1_Pooling"]


def _refused(args, *needles):
    proc = run_hfx(args)
    assert proc.returncode == 2, describe(proc)
    for n in needles:
        assert n in proc.stderr, describe(proc)


def test_refusals(root, tmp_path):
    base = _base_model("bert", root)
    folder = _st_folder(root, "bert", ("mean",), True)
    # a Dense module hfx cannot reproduce (another activation, its weights as pytorch_model.bin): named
    dense = _st_folder(root, "bert", ("mean",), False, dense=True)
    relu = tmp_path / "relu"
    shutil.copytree(dense, relu)
    cfg = json.loads((relu / "2_Dense" / "config.json").read_text())
    (relu / "2_Dense" / "config.json").write_text(json.dumps({**cfg, "activation_function": "torch.nn.modules.activation.ReLU"}))
    _refused(["export", relu, tmp_path / "o1", "--format", "onnx"], "2_Dense/config.json", "ReLU")
    assert not (tmp_path / "o1").exists()
    _export(relu, tmp_path / "o1b", "onnx", "--pooling", "none")  # the encoder alone: the module's weights unused
    binary = tmp_path / "binary"
    shutil.copytree(dense, binary)
    (binary / "2_Dense" / "model.safetensors").rename(binary / "2_Dense" / "pytorch_model.bin")
    _refused(["export", binary, tmp_path / "o1c", "--format", "onnx"], "2_Dense/model.safetensors", "pytorch_model.bin")
    # a head model cannot pool
    torch.manual_seed(0)
    head = tmp_path / "head"
    BertForSequenceClassification(BertConfig(**SMALL)).save_pretrained(head)
    _refused(["export", head, tmp_path / "o2", "--format", "onnx", "--pooling", "mean"], "BertForSequenceClassification")
    _refused(["export", base, tmp_path / "o3", "--format", "onnx", "--normalize"], "normalize")
    _refused(["export", base, tmp_path / "o4", "--format", "onnx", "--pooling", "mean,median"], "pooling")
    _refused(["export", REPO / "examples" / "tiny-llama", tmp_path / "o5", "--format", "onnx", "--for-generation",
              "--pooling", "mean"], "--for-generation")

    def broken(edit, *needles):
        d = tmp_path / f"broken{len(list(tmp_path.iterdir()))}"
        shutil.copytree(folder, d)
        edit(d)
        _refused(["export", d, tmp_path / (d.name + "_out"), "--format", "onnx"], *needles)
        assert not (tmp_path / (d.name + "_out")).exists()

    def modules(d, f):
        mods = json.loads((d / "modules.json").read_text())
        f(mods)
        (d / "modules.json").write_text(json.dumps(mods))

    broken(lambda d: (d / "modules.json").write_text("[{"), "modules.json", "malformed")
    broken(lambda d: (d / "modules.json").write_text("{}"), "modules.json", "array")
    broken(lambda d: modules(d, lambda m: m[1].update(path="../elsewhere")), "modules.json", "../elsewhere")
    broken(lambda d: modules(d, lambda m: m[0].update(path="0_Transformer")), "0_Transformer")
    broken(lambda d: modules(d, lambda m: m.pop(1)), "Normalize")
    broken(lambda d: (d / "1_Pooling" / "config.json").write_text('{"pooling_mode": "median"}'), "median")
    broken(lambda d: (d / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": 1}'),
           "pooling_mode_mean_tokens")
    broken(lambda d: (d / "1_Pooling" / "config.json").write_text('{"pooling_mode": "mean", "embedding_dimension": 31}'),
           "31", "hidden_size")
    broken(lambda d: (d / "1_Pooling" / "config.json").unlink(), "1_Pooling/config.json")


def test_a_causal_lm_folder_pools_its_base_model(tmp_path):
    """A causal LM's folder with modules.json (its config a ForCausalLM's, its tensors under "model." with an lm_head:
    sentence-transformers loads the base model and pools it): the export ends in the sentence embedding, the head
    unused, equal to the library's on left-padded rows (last token and mean)."""
    import onnxruntime as ort
    d = tmp_path / "llama"
    shutil.copytree(REPO / "examples" / "tiny-llama", d)
    (d / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    hidden = json.loads((d / "config.json").read_text())["hidden_size"]
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": hidden,
                                                             "pooling_mode": ["lasttoken", "mean"]}))
    (d / "2_Normalize").mkdir()
    from transformers import BertTokenizerFast  # (the library loads one; the inputs are given as ids)
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "a", "b"]))
    BertTokenizerFast(str(tmp_path / "vocab.txt")).save_pretrained(d)
    ids = np.array([[5, 6, 7, 8, 9], [0, 0, 11, 12, 13], [0, 0, 0, 0, 14]], np.int64)
    inputs = {"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64)}
    tokens, sentence = _reference(d, inputs)
    out = tmp_path / "out"
    _export(d, out, "onnx")
    _check(_run("onnx", out, inputs), tokens, sentence, inputs["attention_mask"], "tiny-llama folder")
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert {i.name for i in sess.get_inputs()} == {"input_ids", "attention_mask"}  # positions as the library's


def test_a_base_decoder_exports_its_states(root):
    """A causal LM's base model alone (the folder's Qwen3Model, `--pooling none`): last_hidden_state [batch, seq,
    hidden] equal to transformers' base model on a left-padded batch with its positions."""
    import onnxruntime as ort
    from transformers import AutoModel
    folder = _st_folder(root, "qwen3", ("mean",), False)
    assert json.loads((folder / "config.json").read_text())["architectures"] == ["Qwen3Model"]
    out = root / "out_qwen3_base"
    _export(folder, out, "onnx", "--pooling", "none")
    inputs = _inputs("qwen3")
    pos = np.clip(np.cumsum(inputs["attention_mask"], 1) - 1, 0, None)
    with torch.no_grad():
        want = AutoModel.from_pretrained(str(folder)).eval()(
            torch.from_numpy(inputs["input_ids"]), attention_mask=torch.from_numpy(inputs["attention_mask"]),
            position_ids=torch.from_numpy(pos)).last_hidden_state.numpy()
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(["last_hidden_state"], {**inputs, "position_ids": pos})[0]
    err = float(np.max(np.abs(got - want)[inputs["attention_mask"].astype(bool)]))
    assert err <= PARITY_ATOL, err


def _head_model(root, name: str, model_cls, config):
    """A tiny head model saved once under `name`, its weights drawn as _base_model draws them."""
    out = root / name
    if not out.exists():
        torch.manual_seed(7)
        model = model_cls(config).eval()
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.3)
        model.save_pretrained(out)
    return out


def _eurobert_mlm(root):
    """A tiny EuroBertForMaskedLM (biased MLP and head: mlp_bias), saved once."""
    from transformers import EuroBertForMaskedLM
    return _head_model(root, "eurobert_mlm", EuroBertForMaskedLM,
                       EuroBertConfig(**SMALL, pad_token_id=0, num_key_value_heads=2, mlp_bias=True))


@pytest.mark.parametrize("fmt", FORMATS)
def test_eurobert_masked_lm(root, fmt):
    """EuroBertForMaskedLM: logits [batch, seq, vocab] at every position (padding's too: a padded query still sees
    the real keys both ways), equal to transformers' on right- and left-padded rows with positions 0, 1, ...; the
    same model with causal attention (what a decoder would compute) is far from them."""
    from transformers import EuroBertForMaskedLM
    folder = _eurobert_mlm(root)
    inputs = _inputs("eurobert")
    pos = np.broadcast_to(np.arange(inputs["input_ids"].shape[1]), inputs["input_ids"].shape).copy()
    model = EuroBertForMaskedLM.from_pretrained(str(folder), attn_implementation="eager").eval()
    with torch.no_grad():
        want = model(torch.from_numpy(inputs["input_ids"]), attention_mask=torch.from_numpy(inputs["attention_mask"]),
                     position_ids=torch.from_numpy(pos)).logits.numpy()
    out = root / f"out_eurobert_mlm_{fmt}"
    _export(folder, out, fmt)
    got = _run(fmt, out, {**inputs, "position_ids": pos})
    assert set(got) == {"logits"}, sorted(got)
    err = float(np.max(np.abs(got["logits"] - want)))
    assert err <= PARITY_ATOL, f"[{fmt}] EuroBERT logits max |diff| {err}"
    if fmt == "onnx":
        for layer in model.model.layers:
            layer.self_attn.is_causal = True
        from transformers.masking_utils import create_causal_mask
        import transformers.models.eurobert.modeling_eurobert as eb

        def causal(config, inputs_embeds, attention_mask, **kw):
            return create_causal_mask(config=config, inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                                      cache=None, position_ids=torch.from_numpy(pos))
        original = eb.create_bidirectional_mask
        eb.create_bidirectional_mask = causal
        try:
            with torch.no_grad():
                one_way = model(torch.from_numpy(inputs["input_ids"]),
                                attention_mask=torch.from_numpy(inputs["attention_mask"]),
                                position_ids=torch.from_numpy(pos)).logits.numpy()
        finally:
            eb.create_bidirectional_mask = original
        assert np.max(np.abs(one_way - want)) > 0.1


def test_eurobert_base_model_and_refusals(root, tmp_path):
    """EuroBertModel: last_hidden_state equal to transformers'; a generation export of EuroBERT (no causal LM) and a
    classifier_pooling transformers does not have are refused by name, exit code 2, nothing written."""
    from transformers import AutoModel
    folder = _base_model("eurobert", root)
    inputs = _inputs("eurobert")
    pos = np.broadcast_to(np.arange(inputs["input_ids"].shape[1]), inputs["input_ids"].shape).copy()
    with torch.no_grad():
        want = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()(
            torch.from_numpy(inputs["input_ids"]), attention_mask=torch.from_numpy(inputs["attention_mask"]),
            position_ids=torch.from_numpy(pos)).last_hidden_state.numpy()
    out = root / "out_eurobert_base"
    _export(folder, out, "onnx")
    got = _run("onnx", out, {**inputs, "position_ids": pos})
    err = float(np.max(np.abs(got["last_hidden_state"] - want)))
    assert err <= PARITY_ATOL, err
    dst = tmp_path / "refused"
    proc = run_hfx(["export", _eurobert_mlm(root), dst, "--format", "onnx", "--for-generation"])
    assert proc.returncode == 2 and "generation" in proc.stderr, describe(proc)
    assert not dst.exists()
    # a classifier_pooling transformers does not have
    bad = tmp_path / "bad"
    shutil.copytree(_eurobert_mlm(root), bad)
    cfg = json.loads((bad / "config.json").read_text())
    cfg.update(architectures=["EuroBertForSequenceClassification"], classifier_pooling="max")
    (bad / "config.json").write_text(json.dumps(cfg))
    proc = run_hfx(["export", bad, dst, "--format", "onnx"])
    assert proc.returncode == 2 and "classifier_pooling 'max'" in proc.stderr, describe(proc)
    assert not dst.exists()


@pytest.mark.parametrize("pooling,fmt", [("bos", "onnx"), ("mean", "onnx"), ("late", "onnx"), ("late", "openvino"),
                                         ("mean", "dynamo"), ("bos", "executorch")])
def test_eurobert_sequence_classification(root, pooling, fmt):
    """EuroBertForSequenceClassification: logits [batch, labels] of its head (dense, GELU, classifier) over the first
    token, the masked mean, or every token then their masked mean (classifier_pooling), equal to transformers' on
    right- and left-padded rows; the three poolings give different logits."""
    from transformers import EuroBertForSequenceClassification
    folder = _head_model(root, f"eurobert_cls_{pooling}", EuroBertForSequenceClassification,
                         EuroBertConfig(**SMALL, pad_token_id=0, num_key_value_heads=2, num_labels=3,
                                        classifier_pooling=pooling))
    inputs = _inputs("eurobert")
    pos = np.broadcast_to(np.arange(inputs["input_ids"].shape[1]), inputs["input_ids"].shape).copy()
    model = EuroBertForSequenceClassification.from_pretrained(str(folder), attn_implementation="eager").eval()
    feed = dict(attention_mask=torch.from_numpy(inputs["attention_mask"]), position_ids=torch.from_numpy(pos))
    with torch.no_grad():
        want = model(torch.from_numpy(inputs["input_ids"]), **feed).logits.numpy()
        others = []
        for other in ("bos", "mean", "late"):  # the same weights pooled the other ways
            model.classifier_pooling = other
            others.append(model(torch.from_numpy(inputs["input_ids"]), **feed).logits.numpy())
    assert min(np.abs(a - b).max() for i, a in enumerate(others) for b in others[i + 1:]) > 0.01
    out = root / f"out_eurobert_cls_{pooling}_{fmt}"
    _export(folder, out, fmt)
    got = _run(fmt, out, {**inputs, "position_ids": pos})
    err = float(np.max(np.abs(got["logits"] - want)))
    assert got["logits"].shape == (4, 3) and err <= PARITY_ATOL, f"[{fmt}] {pooling}: max |diff| {err}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_gte_masked_lm(root, fmt):
    """GteForMaskedLM: logits at every position (its head dense → GELU → LayerNorm → the tied, biased decoder) equal
    to transformers' on right- and left-padded rows with positions 0, 1, ...; its base model GteModel's
    last_hidden_state too (ONNX), and the Hub's names ("new." for the backbone); a second token type refused by name
    (the graph takes no token_type_ids)."""
    from transformers import AutoModel, GteForMaskedLM
    folder = _head_model(root, "gte_mlm", GteForMaskedLM, GteConfig(**SMALL, pad_token_id=0))
    inputs = _inputs("gte")
    pos = np.broadcast_to(np.arange(inputs["input_ids"].shape[1]), inputs["input_ids"].shape).copy()
    feed = dict(attention_mask=torch.from_numpy(inputs["attention_mask"]), position_ids=torch.from_numpy(pos))
    with torch.no_grad():
        want = GteForMaskedLM.from_pretrained(str(folder), attn_implementation="eager").eval()(
            torch.from_numpy(inputs["input_ids"]), **feed).logits.numpy()
    out = root / f"out_gte_mlm_{fmt}"
    _export(folder, out, fmt)
    got = _run(fmt, out, {**inputs, "position_ids": pos})
    err = float(np.max(np.abs(got["logits"] - want)))
    assert err <= PARITY_ATOL, f"[{fmt}] GTE logits max |diff| {err}"
    if fmt != "onnx":
        return
    want_logits = want
    base = _base_model("gte", root)
    with torch.no_grad():
        want = AutoModel.from_pretrained(str(base), attn_implementation="eager").eval()(
            torch.from_numpy(inputs["input_ids"]), **feed).last_hidden_state.numpy()
    _export(base, root / "out_gte_base", "onnx")
    got = _run("onnx", root / "out_gte_base", {**inputs, "position_ids": pos})
    assert float(np.max(np.abs(got["last_hidden_state"] - want))) <= PARITY_ATOL
    # the Hub's checkpoints keep the backbone under "new." (transformers renames it on load)
    from safetensors.numpy import load_file, save_file
    hub = root / "gte_hub"
    shutil.copytree(folder, hub, dirs_exist_ok=True)
    tensors = load_file(str(hub / "model.safetensors"))
    assert any(k.startswith("gte.") for k in tensors)
    save_file({("new." + k[4:] if k.startswith("gte.") else k): v for k, v in tensors.items()},
              str(hub / "model.safetensors"), metadata={"format": "pt"})
    _export(hub, root / "out_gte_hub", "onnx")
    got = _run("onnx", root / "out_gte_hub", {**inputs, "position_ids": pos})
    assert float(np.max(np.abs(got["logits"] - want_logits))) <= PARITY_ATOL
    bad = root / "gte_types"  # a config of two token types over a checkpoint's table of one: refused by name
    shutil.copytree(folder, bad, dirs_exist_ok=True)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "type_vocab_size": 2}))
    proc = run_hfx(["export", bad, root / "gte_refused", "--format", "onnx"])
    assert proc.returncode == 2 and "token_type_embeddings" in proc.stderr, describe(proc)
    assert not (root / "gte_refused").exists()


# (name, class, its outputs, the config's extra keys, formats): GTE's, NomicBERT's and JinaEmbeddingsV3's BERT and
# RoBERTa heads, their masked LMs (NomicBERT's transform reads hidden_act; the tied decoders' biases by their heads'
# names) and base models (JinaEmbeddingsV3Model saved with its pooler); NomicBERT with two token types
HEADS = [
    ("gte_cls", "GteForSequenceClassification", ("logits",), dict(num_labels=3), ("onnx", "openvino", "dynamo")),
    ("gte_tok", "GteForTokenClassification", ("logits",), dict(num_labels=3), ("onnx", "executorch")),
    ("nomic_mlm", "NomicBertForMaskedLM", ("logits",), {}, FORMATS),
    ("nomic_cls", "NomicBertForSequenceClassification", ("logits",), dict(num_labels=3),
     ("onnx", "openvino", "dynamo")),
    ("nomic_tok", "NomicBertForTokenClassification", ("logits",), dict(num_labels=3, hidden_act="gelu"),
     ("onnx", "executorch")),
    ("nomic_base", "NomicBertModel", ("last_hidden_state",), dict(rope_parameters={"rope_type": "default",
                                                                                    "rope_theta": 500.0}),
     ("onnx", "openvino")),
    ("jina_mlm", "JinaEmbeddingsV3ForMaskedLM", ("logits",), {}, FORMATS),
    ("jina_cls", "JinaEmbeddingsV3ForSequenceClassification", ("logits",), dict(num_labels=3),
     ("onnx", "openvino", "executorch")),
    ("jina_tok", "JinaEmbeddingsV3ForTokenClassification", ("logits",), dict(num_labels=3, hidden_act="gelu_new"),
     ("onnx", "dynamo")),
    ("jina_qa", "JinaEmbeddingsV3ForQuestionAnswering", ("start_logits", "end_logits"), {}, ("onnx", "openvino")),
    ("jina_base", "JinaEmbeddingsV3Model", ("last_hidden_state", "pooler_output"), {}, ("onnx", "dynamo")),
]


def _heads_config(name, extra):
    from transformers import JinaEmbeddingsV3Config
    if name.startswith("nomic"):
        return NomicBertConfig(**SMALL, pad_token_id=0, type_vocab_size=2, **extra)
    if name.startswith("jina"):
        return JinaEmbeddingsV3Config(**SMALL, pad_token_id=1, **extra)
    return GteConfig(**SMALL, pad_token_id=0, **extra)


@pytest.mark.parametrize("name,cls,outputs,extra,fmt",
                         [(n, c, o, e, f) for n, c, o, e, fs in HEADS for f in fs],
                         ids=[f"{n}-{f}" for n, _, _, _, fs in HEADS for f in fs])
def test_bert_heads(root, name, cls, outputs, extra, fmt):
    """GTE's, NomicBERT's and JinaEmbeddingsV3's heads: every output at every position of right- and left-padded rows
    equal to transformers' with positions 0, 1, ... and NomicBERT's token types (the graph takes token_type_ids)."""
    import transformers
    model_cls = getattr(transformers, cls)
    nomic = name.startswith("nomic")
    folder = _head_model(root, name, model_cls, _heads_config(name, extra))
    inputs = _inputs("nomic" if nomic else "gte")
    if name.startswith("jina"):
        inputs["input_ids"][inputs["attention_mask"] == 0] = 1  # XLM-R's pad id
    pos = np.broadcast_to(np.arange(inputs["input_ids"].shape[1]), inputs["input_ids"].shape).copy()
    feed = {k: torch.from_numpy(v) for k, v in {**inputs, "position_ids": pos}.items()}
    model = model_cls.from_pretrained(str(folder), attn_implementation="eager").eval()
    with torch.no_grad():
        ref = model(**feed)
    want = {k: getattr(ref, k).numpy() for k in outputs}
    if nomic:  # the token types move the outputs (so the parity below proves the graph reads them)
        plain = dict(feed, token_type_ids=torch.zeros_like(feed["token_type_ids"]))
        with torch.no_grad():
            other = getattr(model(**plain), outputs[0]).numpy()
        assert np.abs(other - want[outputs[0]]).max() > 100 * PARITY_ATOL
    out = root / f"out_{name}_{fmt}"
    _export(folder, out, fmt)
    got = _run(fmt, out, {**inputs, "position_ids": pos})
    assert sorted(got) == sorted(outputs), f"[{fmt}] {name}: outputs {sorted(got)}"
    for k in outputs:
        err = float(np.max(np.abs(got[k] - want[k])))
        assert got[k].shape == want[k].shape and err <= PARITY_ATOL, f"[{fmt}] {name} {k}: max |diff| {err}"


def _embeddinggemma(root, bidirectional=True):
    """EmbeddingGemma's folder: Gemma3TextModel attending both ways (a window of sliding_window / 2 + 1 each side on
    its sliding layers), mean pooling, two Dense modules without bias or activation, Normalize; saved by the library."""
    from transformers import Gemma3TextConfig, Gemma3TextModel
    folder = root / f"embeddinggemma_{int(bidirectional)}"
    if folder.exists():
        return folder
    base = root / f"gemma3_text_{int(bidirectional)}"
    torch.manual_seed(7)
    config = Gemma3TextConfig(**SMALL, pad_token_id=0, num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8,
                              sliding_window=6, layer_types=["sliding_attention", "full_attention"],
                              use_bidirectional_attention=bidirectional)
    model = Gemma3TextModel(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    model.save_pretrained(base)
    from transformers import BertTokenizerFast
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"] +
                               [f"t{i}" for i in range(SMALL["vocab_size"] - 5)]))
    BertTokenizerFast(str(vocab)).save_pretrained(base)
    h = SMALL["hidden_size"]
    chain = [st_models.Transformer(str(base)), st_models.Pooling(h, pooling_mode="mean"),
             st_models.Dense(h, 3 * h, bias=False, activation_function=torch.nn.Identity()),
             st_models.Dense(3 * h, h, bias=False, activation_function=torch.nn.Identity()), st_models.Normalize()]
    with torch.no_grad():
        for m in chain[2:4]:
            for p in m.parameters():
                p.normal_(0.0, 0.3)
    SentenceTransformer(modules=chain, device="cpu").save(str(folder))
    return folder


@pytest.mark.parametrize("fmt", FORMATS)
def test_embeddinggemma_folder(root, fmt):
    """EmbeddingGemma's pipeline ends in the library's sentence embedding (rows of 9 tokens: the sliding layer's
    window of 4 each side cuts some keys off both ways); attending both ways moves it."""
    folder = _embeddinggemma(root)
    inputs = {k: v for k, v in _inputs("modernbert").items()}
    tokens, sentence = _reference(folder, inputs)
    if fmt == "onnx":
        _, causal = _reference(_embeddinggemma(root, bidirectional=False), inputs)
        assert np.abs(causal - sentence).max() > 100 * PARITY_ATOL
    out = root / f"out_embeddinggemma_{fmt}"
    _export(folder, out, fmt)
    _check(_run(fmt, out, inputs), tokens, sentence, inputs["attention_mask"], f"embeddinggemma {fmt}")


def test_bidirectional_gemma3_has_no_generation(root, tmp_path):
    """A Gemma3ForCausalLM attending both ways is refused for generation by the key's name, nothing written."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    torch.manual_seed(0)
    ck = tmp_path / "bidi"
    Gemma3ForCausalLM(Gemma3TextConfig(**SMALL, num_key_value_heads=2, head_dim=8, use_bidirectional_attention=True,
                                       layer_types=["sliding_attention", "full_attention"])).save_pretrained(ck)
    _refused(["export", ck, tmp_path / "out", "--format", "onnx", "--for-generation"], "use_bidirectional_attention")
    assert not (tmp_path / "out").exists()


def _similarity(*args):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "similarity.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    return proc


TEXTS = ["t1 t2 t3", "t4 t5", "t9 t8 t7 t6 t5", "t1 t2 t30"]


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_similarity_example(root, fmt):
    """examples/similarity.py on a bi-encoder's export: the cosine similarity matrix and the ranking by a query equal
    sentence-transformers' (encode, then its similarity) on the same texts through the folder's own tokenizer."""
    folder = _st_folder(root, "mpnet", ("mean",), True)
    out = root / f"out_similarity_{fmt}"
    _export(folder, out, fmt)
    model = SentenceTransformer(str(folder), device="cpu")
    want = model.similarity(model.encode(TEXTS), model.encode(TEXTS)).numpy()
    proc = _similarity(out, *[x for t in TEXTS for x in ("--text", t)])
    assert proc.returncode == 0, proc.stderr
    got = np.array([json.loads(line) for line in proc.stdout.splitlines()])
    assert got.shape == (4, 4) and np.abs(got - want).max() <= PARITY_ATOL, (got, want)
    proc = _similarity(out, "--query", "t2 t3", *[x for t in TEXTS for x in ("--text", t)])
    assert proc.returncode == 0, proc.stderr
    ranked = [json.loads(line) for line in proc.stdout.splitlines()]
    scores = model.similarity(model.encode(["t2 t3"]), model.encode(TEXTS)).numpy()[0]
    assert [r["text"] for r in ranked] == [TEXTS[i] for i in np.argsort(-scores, kind="stable")]
    assert max(abs(r["score"] - scores[TEXTS.index(r["text"])]) for r in ranked) <= PARITY_ATOL


def test_rerank_example(root, tmp_path):
    """examples/similarity.py on a one-label cross-encoder's export (a reranker): each (query, text) pair's score is
    transformers' logit, the texts ranked by it; a bi-encoder's texts without a query, or a cross-encoder without
    one, are bad input (exit 2)."""
    from transformers import BertTokenizerFast
    folder = tmp_path / "reranker"
    torch.manual_seed(3)
    model = BertForSequenceClassification(BertConfig(**SMALL, num_labels=1)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    model.save_pretrained(folder)
    _base_model("modernbert", root)  # (writes the tiny vocabulary)
    BertTokenizerFast(str(root / "vocab.txt")).save_pretrained(folder)
    out = tmp_path / "out"
    _export(folder, out, "onnx")
    tok = BertTokenizerFast.from_pretrained(str(folder))
    with torch.no_grad():
        want = model(**tok(["t2 t3"] * len(TEXTS), TEXTS, padding=True, return_tensors="pt")).logits[:, 0].numpy()
    proc = _similarity(out, "--query", "t2 t3", *[x for t in TEXTS for x in ("--text", t)])
    assert proc.returncode == 0, proc.stderr
    ranked = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["text"] for r in ranked] == [TEXTS[i] for i in np.argsort(-want, kind="stable")]
    assert max(abs(r["score"] - want[TEXTS.index(r["text"])]) for r in ranked) <= PARITY_ATOL
    proc = _similarity(out, "--text", "t1")
    assert proc.returncode == 2 and "--query" in proc.stderr


def _cross_encoder(root, name: str, false_token):
    """A sentence-transformers CrossEncoder over a tiny Qwen3ForCausalLM (Transformer with transformer_task
    "text-generation", then LogitScore), saved by the library with a byte-level tokenizer that pads on the left."""
    folder = root / name
    if folder.exists():
        return folder
    from sentence_transformers import CrossEncoder
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.cross_encoder.modules import LogitScore
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    base = root / f"{name}_lm"
    torch.manual_seed(7)
    lm = Qwen3ForCausalLM(Qwen3Config(vocab_size=160, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, pad_token_id=0,
                                      tie_word_embeddings=false_token is None)).eval()
    with torch.no_grad():
        for p in lm.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.3)
    lm.save_pretrained(base)
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={"<pad>": 0, **{c: i + 1 for i, c in enumerate(alphabet[:159])}}, merges=[]))
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", padding_side="left").save_pretrained(base)
    CrossEncoder(modules=[Transformer(str(base), transformer_task="text-generation"),
                          LogitScore(true_token_id=9, false_token_id=false_token)]).save_pretrained(str(folder))
    return folder


PAIRS = [("cat", "a mat"), ("tax", "law"), ("q", "bye")]  # (one token a byte: within the ExecuTorch bound of 9)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("false_token", [17, None])
def test_cross_encoder_logit_score(root, fmt, false_token):
    """A CrossEncoder over a causal LM (Qwen3-Reranker's form: modules.json Transformer then LogitScore) exports to
    `scores` [batch, 1]: its forward's scores (logit[true] − logit[false] at the last position, or logit[true] alone
    without a false token, before predict's activation) within 1e-4 on left-padded pairs of different lengths."""
    from sentence_transformers import CrossEncoder
    folder = _cross_encoder(root, f"cross_{false_token}", false_token)
    model = CrossEncoder(str(folder))
    features = {k: v for k, v in model.preprocess(PAIRS).items() if isinstance(v, torch.Tensor)}
    mask = features["attention_mask"].numpy()
    assert (mask[:, 0] == 0).any() and (mask[:, -1] == 1).all(), "the library pads on the left"
    with torch.no_grad():
        want = model(dict(features))["scores"].numpy()
    out = root / f"out_cross_{false_token}_{fmt}"
    _export(folder, out, fmt)
    feed = {"input_ids": features["input_ids"].numpy(), "attention_mask": mask}
    got = run_forward(fmt, out, feed, ["scores"])["scores"]
    assert got.shape == (len(PAIRS), 1)
    assert np.abs(got - want).max() <= PARITY_ATOL, (got, want)


def test_cross_encoder_example_and_refusals(root, tmp_path):
    """examples/similarity.py ranks texts by the CrossEncoder export's scores (the library's predict before its
    sigmoid, which keeps the order); the folder is not an embedding model for OpenVINO GenAI, nor normalized."""
    from sentence_transformers import CrossEncoder
    folder = _cross_encoder(root, "cross_17", 17)
    out = tmp_path / "out"
    _export(folder, out, "onnx")
    texts = [t for _, t in PAIRS]
    want = CrossEncoder(str(folder)).predict([("tax", t) for t in texts], activation_fn=torch.nn.Identity())
    proc = _similarity(out, "--query", "tax", *[x for t in texts for x in ("--text", t)])
    assert proc.returncode == 0, proc.stderr
    ranked = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["text"] for r in ranked] == [texts[i] for i in np.argsort(-np.asarray(want), kind="stable")]
    assert max(abs(r["score"] - want[texts.index(r["text"])]) for r in ranked) <= PARITY_ATOL
    _refused(["export", folder, tmp_path / "o2", "--format", "openvino", "--genai-embedding"], "CrossEncoder")
    _refused(["export", folder, tmp_path / "o3", "--format", "onnx", "--normalize"], "LogitScore")


@pytest.mark.parametrize("arch,mode", [("mpnet", "mean"), ("gte", "cls")])
def test_genai_text_embedding_pipeline(root, arch, mode, tmp_path):
    """`--genai-embedding`: OpenVINO GenAI's TextEmbeddingPipeline loads the export (openvino_model.xml whose one output
    is last_hidden_state, hfx's tokenizer graphs) and, configured as export.json says from the folder's modules.json,
    embeds texts as sentence-transformers does."""
    import openvino_genai as ov_genai
    folder = _st_folder(root, arch, (mode,), True)
    out = tmp_path / "genai"
    _export(folder, out, "openvino", "--genai-embedding")
    pipe_cfg = json.loads((out / "export.json").read_text())["embedding_pipeline"]
    assert pipe_cfg == {"pooling_type": mode, "normalize": True}
    kinds = {"mean": ov_genai.TextEmbeddingPipeline.PoolingType.MEAN, "cls": ov_genai.TextEmbeddingPipeline.PoolingType.CLS}
    config = ov_genai.TextEmbeddingPipeline.Config(pooling_type=kinds[mode], normalize=pipe_cfg["normalize"])
    # (f32: the CPU plugin's default precision may be lower)
    pipe = ov_genai.TextEmbeddingPipeline(str(out), "CPU", config, INFERENCE_PRECISION_HINT="f32")
    got = np.array(pipe.embed_documents(TEXTS))
    want = SentenceTransformer(str(folder), device="cpu").encode(TEXTS)
    assert got.shape == want.shape and np.abs(got - want).max() <= PARITY_ATOL


def test_genai_embedding_refusals(root, tmp_path):
    """What the embedding pipeline cannot run is refused by name: a Dense module, a pooling asked for, a head model."""
    dense = _st_folder(root, "bert", ("mean",), False, dense=True)
    _refused(["export", dense, tmp_path / "a", "--format", "openvino", "--genai-embedding"], "genai_embedding", "Dense")
    _refused(["export", _st_folder(root, "mpnet", ("mean",), True), tmp_path / "b", "--format", "openvino",
              "--genai-embedding", "--pooling", "mean"], "genai_embedding", "pooling")
    torch.manual_seed(0)
    head = tmp_path / "head"
    BertForSequenceClassification(BertConfig(**SMALL)).save_pretrained(head)
    _refused(["export", head, tmp_path / "c", "--format", "openvino", "--genai-embedding"], "genai_embedding",
             "BertForSequenceClassification")
    for d in "abc":
        assert not (tmp_path / d).exists()


T5GEMMA_ENC = dict(vocab_size=SMALL["vocab_size"], hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                   intermediate_size=48, num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8, sliding_window=3,
                   layer_types=["sliding_attention", "full_attention", "sliding_attention"], attn_logit_softcapping=2.0)


def _t5gemma_encoder(root, **overrides):
    from transformers import T5GemmaConfig, T5GemmaEncoderModel
    name = "t5gemma_enc" + "".join(f"_{k}{v}" for k, v in overrides.items())
    out = root / name
    if not out.exists():
        enc = {**T5GEMMA_ENC, **overrides}
        torch.manual_seed(7)
        model = T5GemmaEncoderModel(T5GemmaConfig(encoder=enc, decoder=enc, is_encoder_decoder=False)).eval()
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.3)
        model.save_pretrained(out)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_t5gemma_encoder(root, fmt):
    """T5GemmaEncoderModel (its config under "encoder"): Gemma 2's sandwiched layers attending both ways, the sliding
    layers within sliding_window on each side (inclusive), softcapped scores: last_hidden_state at every position of
    right- and left-padded rows within 1e-4 of transformers; the window moves it."""
    from transformers import T5GemmaEncoderModel
    inputs = _inputs("modernbert")
    pos = np.broadcast_to(np.arange(inputs["input_ids"].shape[1]), inputs["input_ids"].shape).copy()

    def ref(folder):
        model = T5GemmaEncoderModel.from_pretrained(str(folder), attn_implementation="eager").eval()
        with torch.no_grad():
            return model(**{k: torch.from_numpy(v) for k, v in inputs.items()}).last_hidden_state.numpy()
    want = ref(_t5gemma_encoder(root))
    keep = inputs["attention_mask"].astype(bool)
    if fmt == "onnx":
        assert np.abs(ref(_t5gemma_encoder(root, sliding_window=4)) - want)[keep].max() > 100 * PARITY_ATOL
    out = root / f"out_t5gemma_enc_{fmt}"
    _export(_t5gemma_encoder(root), out, fmt)
    got = _run(fmt, out, {**inputs, "position_ids": pos})["last_hidden_state"]
    err = float(np.abs(got - want).max())  # (padded positions too: they attend to the real tokens)
    assert got.shape == want.shape and err <= PARITY_ATOL, f"[{fmt}] max |diff| {err}"
