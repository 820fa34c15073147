"""The Python package (python/hfx): `pip install .` in a fresh virtualenv gives `import hfx` and the
`hfx` command; the seed's API examples run with `import hfx` in place of transformers.exporters
and give transformers' logits; a loaded PreTrainedModel exports to the same bytes as its saved
directory."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch

from conftest import HFX_BIN, PARITY_ATOL, REPO, describe, load_pt2, run_hfx
from test_vlm import ckpt, reference  # noqa: F401 (the VLM checkpoints' fixtures)

# the package under test, from the tree, over the library `make build` made beside the CLI
os.environ.setdefault("HFX_LIBRARY", str(sorted(Path(HFX_BIN).parent.glob("libhfx.so.*.*.*"))[-1])
                      if list(Path(HFX_BIN).parent.glob("libhfx.so.*.*.*")) else "")
sys.path.insert(0, str(REPO / "python"))
import hfx  # noqa: E402


def _digest(out: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}


def test_pip_install_in_a_fresh_venv(checkpoints, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(REPO)],
                         capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "HFX_LIBRARY"}  # the installed library, not the tree's
    code = ("import sys, hfx; cfg = hfx.AutoExportConfig.from_dict({'export_format': 'onnx', 'dynamic': True});"
            "hfx.AutoHfExporter.from_config(cfg).export(sys.argv[1], config=cfg).save_pretrained(sys.argv[2])")
    py = subprocess.run([str(venv / "bin" / "python"), "-c", code, str(checkpoints("llama_default")), str(tmp_path / "py")],
                        capture_output=True, text=True, timeout=300, env=env)
    assert py.returncode == 0, py.stderr[-3000:]
    cli = subprocess.run([str(venv / "bin" / "hfx"), "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert cli.returncode == 0 and "hfx export" in cli.stdout, cli.stderr
    proc = run_hfx(["export", checkpoints("llama_default"), tmp_path / "cli", "--format", "onnx", "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    # the same files; export_config.json records the config as given (the package's has every seed field)
    py_files, cli_files = _digest(tmp_path / "py"), _digest(tmp_path / "cli")
    assert py_files.pop("export_config.json") and cli_files.pop("export_config.json")
    assert py_files == cli_files
    import json
    written = json.loads((tmp_path / "py" / "export_config.json").read_text())
    assert written["export_format"] == "onnx" and written["dynamic"] is True and "ort_fusions" in written


def test_seed_api_example_with_import_hfx(checkpoints, tmp_path):
    """The seed docs' "Export" example, `transformers.exporters` replaced by `hfx`."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    inputs = {"input_ids": torch.tensor([[1, 5, 9, 3, 7]]), "attention_mask": torch.ones(1, 5, dtype=torch.long)}

    from hfx import AutoExportConfig, AutoHfExporter

    export_config_dict = {"export_format": "onnx", "dynamic": True}
    config = AutoExportConfig.from_dict(export_config_dict)
    exporter = AutoHfExporter.from_config(config)

    onnx_program = exporter.export(model, inputs, config=config)
    onnx_program.save_pretrained(tmp_path / "out")
    assert {n: c.file for n, c in onnx_program.components.items()} == {"model": "model.onnx"}

    session = ort.InferenceSession(str(tmp_path / "out" / "model.onnx"), providers=["CPUExecutionProvider"])
    feed = {k: v.numpy() for k, v in inputs.items()}
    feed["position_ids"] = np.arange(5)[None]
    got = session.run(["logits"], feed)[0]
    with torch.no_grad():
        want = model(**inputs).logits.numpy()
    assert np.abs(got - want).max() <= PARITY_ATOL


@pytest.mark.parametrize("name", ["llama_default", "llama_tied", "gemma", "qwen3_tied"])
def test_loaded_model_exports_like_its_directory(checkpoints, tmp_path, name):
    """The state dict goes to C in memory (hfx_model_open_memory), no checkpoint written."""
    from transformers import AutoModelForCausalLM, GenerationConfig

    ck = checkpoints(name)
    model = AutoModelForCausalLM.from_pretrained(str(ck)).eval()
    exporter = hfx.OnnxExporter()
    config = hfx.OnnxConfig(dynamic=True)
    gen = GenerationConfig(cache_implementation="static", max_cache_len=32)
    for name, source in (("live", model), ("saved", ck)):
        exported = exporter.export_for_generation(source, {"input_ids": torch.tensor([[1, 2, 3]])}, config=config,
                                                  generation_config=gen, multi_token_decode=True)
        exported.save_pretrained(tmp_path / name)
        assert {n: c.file for n, c in exported.components.items()} == {"prefill": "prefill.onnx",
                                                                       "decode": "decode.onnx"}
    graphs = lambda d: {k: v for k, v in _digest(d).items() if ".onnx" in k}  # noqa: E731
    assert graphs(tmp_path / "live") == graphs(tmp_path / "saved")


def test_exporting_a_live_model_leaves_its_weights_alone(checkpoints, tmp_path):
    """hfx lets the kernel drop a checkpoint file's pages once it has written them (MADV_DONTNEED) to
    keep its memory bounded; a model held in memory is the caller's (on anonymous memory that call
    would zero it), so it comes out of every kind of export bit for bit as it went in."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    with torch.no_grad():
        for p in model.parameters():  # heap memory, as a model trained or edited in this process has
            p.data = p.data.clone()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    exporters = ((hfx.OnnxExporter(), hfx.OnnxConfig(dynamic=True)), (hfx.OpenVINOExporter(), hfx.OpenVINOConfig(dynamic=True)),
                 (hfx.DynamoExporter(), hfx.DynamoConfig(dynamic=True)))
    for exporter, config in exporters:
        exporter.export(model, None, config=config).save_pretrained(tmp_path / type(exporter).__name__)
        changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
        assert not changed, f"{type(exporter).__name__} changed the live model's {changed[:5]}"


def test_errors_are_exceptions_with_the_c_message(tmp_path):
    with pytest.raises(hfx.HfxError) as e:
        hfx.OnnxExporter().export(str(tmp_path / "missing"), config=hfx.OnnxConfig()).save_pretrained(tmp_path / "o")
    assert e.value.status == 2 and "missing" in str(e.value)
    with pytest.raises(hfx.HfxError):
        hfx.AutoExportConfig.from_dict({"export_format": "tflite"})


def test_memory_tensors_are_checked():
    """A state dict with a name twice or an unknown dtype is refused with the tensor named."""
    import ctypes
    shape = (ctypes.c_int64 * 1)(4)
    data = (ctypes.c_float * 4)()
    tensors = (hfx._Tensor * 2)(hfx._Tensor(b"w", 1, 1, shape, ctypes.addressof(data)),
                                hfx._Tensor(b"w", 1, 1, shape, ctypes.addressof(data)))
    handle, err = hfx._P(), hfx._Error()
    cfg = b'{"architectures": ["LlamaForCausalLM"]}'
    assert hfx._lib.hfx_model_open_memory(cfg, None, tensors, 2, ctypes.byref(handle), ctypes.byref(err)) == 2
    assert b"duplicate tensor 'w'" in err.message
    tensors[1] = hfx._Tensor(b"v", 99, 1, shape, ctypes.addressof(data))
    assert hfx._lib.hfx_model_open_memory(cfg, None, tensors, 2, ctypes.byref(handle), ctypes.byref(err)) == 2
    assert b"'v'" in err.message


def test_export_warnings_are_python_warnings(checkpoints, tmp_path):
    """What an export says it left out (here: a tokenizer.json OpenVINO's graphs cannot be written
    from) is a Python warning, with the C text, from export() where it is built."""
    import shutil
    src = tmp_path / "m"
    shutil.copytree(checkpoints("llama_default"), src)
    (src / "tokenizer.json").write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0}}}))
    from hfx import AutoExportConfig, AutoHfExporter
    config = AutoExportConfig.from_dict({"export_format": "openvino", "dynamic": True})
    with pytest.warns(UserWarning, match="hfx: no OpenVINO tokenizer written: tokenizer.json: model type 'WordLevel'"):
        program = AutoHfExporter.from_config(config).export(str(src), None, config=config)  # (built there)
    program.save_pretrained(tmp_path / "out")
    assert json.loads((tmp_path / "out" / "export.json").read_text())["tokenizer"]["converted"] is False


def test_dynamo_exporter_from_python(checkpoints, tmp_path):
    """The seed's DynamoExporter through `import hfx`: a live model to model.pt2, loaded by
    torch.export.load, equal to the model's own logits."""
    from transformers import AutoModelForCausalLM

    from hfx import AutoExportConfig, AutoHfExporter, DynamoExporter

    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    config = AutoExportConfig.from_dict({"export_format": "dynamo", "dynamic": True})
    exporter = AutoHfExporter.from_config(config)
    assert isinstance(exporter, DynamoExporter)
    program = exporter.export(model, None, config=config)
    program.save_pretrained(tmp_path / "out")
    assert {n: c.file for n, c in program.components.items()} == {"model": "model.pt2"}
    ep = load_pt2(tmp_path / "out" / "model.pt2")
    ids = torch.tensor([[1, 5, 9, 3, 7]])
    mask, pos = torch.ones_like(ids), torch.arange(5)[None]
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits
        got = ep.module()(input_ids=ids, attention_mask=mask, position_ids=pos)  # (called as the model)
    assert type(got).__name__ == "CausalLMOutputWithPast" and (got.logits - want).abs().max() <= PARITY_ATOL


def test_dynamo_generation_from_python_runs_the_seeds_loop(checkpoints, tmp_path):
    """DynamoExporter.export_for_generation through `import hfx` takes the seed's profile by
    default: the seed docs' Dynamo decode loop runs on its decode.pt2 and gives generate()'s tokens."""
    from transformers import AutoModelForCausalLM, GenerationConfig

    from hfx import DynamoConfig, DynamoExporter
    from test_dynamo_seed import _greedy, _prompt, _seed_dynamo_loop

    ck = checkpoints("llama_default")
    model = AutoModelForCausalLM.from_pretrained(str(ck)).eval()
    program = DynamoExporter().export_for_generation(
        model, None, DynamoConfig(dynamic=True),
        generation_config=GenerationConfig(cache_implementation="static", max_cache_len=48), multi_token_decode=True)
    program.save_pretrained(tmp_path / "out")
    prompt = _prompt(ck, 5, 1)
    assert _seed_dynamo_loop(tmp_path / "out", prompt, 16) == _greedy(ck, prompt, 16)


def test_dynamo_generation_of_an_encoder_decoder_from_python(tmp_path):
    """DynamoExporter.export_for_generation of a live BART through `import hfx` (the seed's profile by default): the
    encoder, prefill and decode programs, which transformers.exporters' own runners load and run to transformers'
    greedy tokens (the encoder's BaseModelOutput passed as encoder_outputs, an EncoderDecoderCache between calls)."""
    from transformers import AutoModelForSeq2SeqLM

    import seq2seq_models
    from genutil import compare_generation
    from hfx import DynamoConfig, DynamoExporter
    from test_seq2seq import plain_greedy, right_padded, seed_runner_loop, sources

    ck = seq2seq_models.save_checkpoint("bart", tmp_path / "bart")
    model = AutoModelForSeq2SeqLM.from_pretrained(str(ck)).eval()
    rows = sources("bart", 1)
    ids, mask = right_padded(rows, model.config.pad_token_id)
    program = DynamoExporter().export_for_generation(model, {"input_ids": ids, "attention_mask": mask},
                                                     DynamoConfig(dynamic=True))
    assert sorted(program.components) == ["decode", "encoder", "prefill"]
    program.save_pretrained(tmp_path / "out")
    want_tokens, want_logits, prompt = plain_greedy(ck, rows)
    tokens, logits = seed_runner_loop(tmp_path / "out", seq2seq_models.load(ck), rows, prompt, False)
    compare_generation(tokens, logits, want_tokens, want_logits, "bart .pt2 from the Python package", runtime="torch")


def test_seed_quantizer_config_compresses_openvino_weights(checkpoints, tmp_path):
    """OpenVINOConfig(quantizer=NNCFWeightCompressionConfig(...)) — the seed's object — gives the
    same compressed IR as hfx's own keys; what hfx cannot do (data-aware algorithms, mixed
    precision, calibrated quantization, NNCF for ONNX) is refused with HfxError."""
    from transformers.exporters.quantizers.quantizer_nncf import NNCFWeightCompressionConfig
    from transformers.exporters.quantizers.quantizer_onnxruntime import OnnxRuntimeDynamicConfig

    from hfx import HfxError, OnnxConfig, OpenVINOConfig, OpenVINOExporter

    ck = str(checkpoints("llama_default"))
    seed_cfg = OpenVINOConfig(dynamic=True, quantizer=NNCFWeightCompressionConfig(
        mode="int4_sym", group_size=32, ratio=1.0, all_layers=True))
    OpenVINOExporter().export(ck, None, config=seed_cfg).save_pretrained(tmp_path / "seed")
    keys_cfg = OpenVINOConfig(dynamic=True, hfx_options={"quantize": "int4", "group_size": 32, "symmetric": True,
                                                         "quantize_embeddings": "int4", "quantize_lm_head": "int4"})
    OpenVINOExporter().export(ck, None, config=keys_cfg).save_pretrained(tmp_path / "keys")
    assert (tmp_path / "seed" / "model.bin").read_bytes() == (tmp_path / "keys" / "model.bin").read_bytes()
    assert b'element_type="i4"' in (tmp_path / "seed" / "model.xml").read_bytes()
    # NNCF's default mixed precision (the embeddings and the head in int8) is hfx's default
    OpenVINOExporter().export(ck, None, config=OpenVINOConfig(dynamic=True, quantizer=NNCFWeightCompressionConfig(
        mode="int4_asym", group_size=32))).save_pretrained(tmp_path / "seed_mixed")
    OpenVINOExporter().export(ck, None, config=OpenVINOConfig(dynamic=True, hfx_options={
        "quantize": "int4", "group_size": 32, "symmetric": False})).save_pretrained(tmp_path / "keys_mixed")
    mixed = (tmp_path / "seed_mixed" / "model.bin").read_bytes()
    assert mixed == (tmp_path / "keys_mixed" / "model.bin").read_bytes()
    assert b'element_type="u8"' in (tmp_path / "seed_mixed" / "model.xml").read_bytes()
    # mode unset: NNCF's INT8_ASYM
    OpenVINOExporter().export(ck, None, config=OpenVINOConfig(dynamic=True, quantizer=NNCFWeightCompressionConfig(
    ))).save_pretrained(tmp_path / "seed_int8")
    q = json.loads((tmp_path / "seed_int8" / "export.json").read_text())["components"]["model"]["metadata"]
    assert q["quantization"]["bits"] == 8 and q["quantization"]["symmetric"] is False
    for bad, what in [(NNCFWeightCompressionConfig(mode="int4_asym", awq=True, all_layers=True), "awq"),
                      (NNCFWeightCompressionConfig(mode="int4_asym", ratio=0.8, all_layers=True), "ratio"),
                      (NNCFWeightCompressionConfig(mode="int8_asym", all_layers=True), "all_layers"),
                      (NNCFWeightCompressionConfig(mode="int4_asym", backup_mode="int8_sym"), "backup_mode"),
                      (OnnxRuntimeDynamicConfig(), "ONNX models")]:
        with pytest.raises(HfxError, match=what):
            OpenVINOExporter().export(ck, None, config=OpenVINOConfig(dynamic=True, quantizer=bad)).save_pretrained(
                tmp_path / "bad")
    # OnnxRuntimeDynamicConfig: onnxruntime's quantize_dynamic, as hfx's int8-dynamic keys
    from hfx import OnnxExporter
    from onnxruntime.quantization import QuantType

    OnnxExporter().export(ck, None, config=OnnxConfig(dynamic=True, quantizer=OnnxRuntimeDynamicConfig(
        per_channel=True, weight_type=QuantType.QUInt8))).save_pretrained(tmp_path / "seed_dyn")
    OnnxExporter().export(ck, None, config=OnnxConfig(dynamic=True, hfx_options={
        "quantize": "int8-dynamic", "group_size": 0, "symmetric": False})).save_pretrained(tmp_path / "keys_dyn")
    for f in ("model.onnx", "model.onnx.data"):
        assert (tmp_path / "seed_dyn" / f).read_bytes() == (tmp_path / "keys_dyn" / f).read_bytes(), f
    assert b"MatMulInteger" in (tmp_path / "seed_dyn" / "model.onnx").read_bytes()
    with pytest.raises(HfxError, match="nodes_to_exclude"):
        OnnxExporter().export(ck, None, config=OnnxConfig(dynamic=True, quantizer=OnnxRuntimeDynamicConfig(
            nodes_to_exclude=["x"]))).save_pretrained(tmp_path / "bad")
    with pytest.raises(HfxError, match="ONNX"):
        OnnxExporter().export(ck, None, config=OnnxConfig(dynamic=True, quantizer=NNCFWeightCompressionConfig(
            mode="int4_sym", all_layers=True))).save_pretrained(tmp_path / "bad")


def test_executorch_exporter_from_python(checkpoints, tmp_path):
    """The seed's ExecutorchExporter through `import hfx`: a live model to model.pte (XNNPACK's
    linears by default, the dims bounded by Dim(max=...)), run by executorch.runtime, equal to
    the model's own logits; and a multi-token decode for generation in the seed's profile (its prefill beside it)."""
    from transformers import AutoModelForCausalLM

    from etutil import worker
    from hfx import AutoExportConfig, AutoHfExporter, Dim, ExecutorchConfig, ExecutorchExporter

    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    seq = Dim("sequence", max=32)
    config = ExecutorchConfig(dynamic_shapes={"input_ids": {0: Dim("batch", max=2), 1: seq}})
    assert AutoExportConfig.from_dict({"export_format": "executorch"}).backend == "xnnpack"
    exporter = AutoHfExporter.from_config(config)
    assert isinstance(exporter, ExecutorchExporter)
    program = exporter.export(model, None, config=config)
    program.save_pretrained(tmp_path / "out")
    assert {n: c.file for n, c in program.components.items()} == {"model": "model.pte"}
    ids = np.array([[1, 5, 9, 3, 7], [2, 4, 6, 8, 10]], np.int64)
    mask, pos = np.ones_like(ids), np.tile(np.arange(5), (2, 1))
    got = worker().run(tmp_path / "out" / "model.pte", [ids, mask, pos])[0]
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                     position_ids=torch.from_numpy(pos)).logits.numpy()
    assert np.abs(got - want).max() <= PARITY_ATOL
    from transformers import GenerationConfig

    gen = exporter.export_for_generation(model, None, config=ExecutorchConfig(dynamic_shapes={"input_ids": {1: seq}}),
                                         generation_config=GenerationConfig(max_cache_len=32), multi_token_decode=True)
    gen.save_pretrained(tmp_path / "gen")
    manifest = json.loads((tmp_path / "gen" / "export.json").read_text())  # (the seed's profile, as its own)
    assert sorted(manifest["components"]) == ["decode", "prefill"]
    assert manifest["components"]["decode"]["metadata"]["input_names"][:3] == [
        "input_ids", "position_ids", "input.cache.layers.0.keys"]


@pytest.mark.parametrize("fmt,program_type", [("onnx", "onnx_ir.Model"), ("openvino", "openvino._ov_api.Model"),
                                              ("dynamo", "torch.export.exported_program.ExportedProgram")])
def test_export_is_built_at_once_and_runs_as_the_seeds(checkpoints, tmp_path, fmt, program_type):
    """export() builds there, as the seed's does: its components hold the backend's own program (transformers.
    exporters' load_program of each file), and the export, called like the model (the seed's runners, OpenVINO at
    f32 as its runner takes it), returns the model's output class within 1e-4 of transformers; save_pretrained writes
    the same bytes into a new directory, and over an existing one (the library's transaction)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    config = hfx.AutoExportConfig.from_dict({"export_format": fmt, "dynamic": True})
    exported = hfx.AutoHfExporter.from_config(config).export(model, None, config=config)
    program = exported.program
    assert f"{type(program).__module__}.{type(program).__name__}".endswith(program_type), type(program)
    assert exported.components["model"].metadata["in_spec"], "the seed's ExportMetadata"
    if fmt == "openvino":
        exported.to(config={"INFERENCE_PRECISION_HINT": "f32"})
    ids = torch.tensor([[1, 5, 9, 3, 7], [2, 4, 6, 8, 10]])
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "position_ids": torch.arange(5).repeat(2, 1)}
    with torch.no_grad():
        want = model(**inputs).logits
    got = exported(**inputs)
    assert type(got).__name__ == "CausalLMOutputWithPast"
    assert (torch.as_tensor(got.logits) - want).abs().max() <= PARITY_ATOL
    exported.save_pretrained(tmp_path / "new")
    (tmp_path / "old").mkdir()
    exported.save_pretrained(tmp_path / "old")
    files = lambda d: {p.name: p.read_bytes() for p in d.iterdir() if p.suffix != ".json"}  # noqa: E731
    assert files(tmp_path / "new") == files(tmp_path / "old") and files(tmp_path / "new")


def test_export_errors_raise_at_export(checkpoints):
    """A refused export raises from export(), as the seed's does, not later from save_pretrained."""
    with pytest.raises(hfx.HfxError, match="no upper bound"):
        hfx.ExecutorchExporter().export(checkpoints("llama_default"), None, config=hfx.ExecutorchConfig(dynamic=True))


def test_torch_export_dims_in_dynamic_shapes(checkpoints, tmp_path):
    """dynamic_shapes as the seed's docs write them, with torch.export.Dim (its own example: Dim("batch", min=1,
    max=32)) and its hints: Dim.AUTO and Dim.DYNAMIC make the axis dynamic under hfx's own name, Dim.STATIC keeps it
    at the sample's size. The ONNX graph's dims say so, and it runs at other sizes equal to the model."""
    import onnx
    from transformers import AutoModelForCausalLM

    from hfx import OnnxConfig, OnnxExporter

    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    dims = {}
    for name, seq in (("auto", torch.export.Dim.AUTO), ("dynamic", torch.export.Dim.DYNAMIC(min=1, max=64)),
                      ("static", torch.export.Dim.STATIC)):
        config = OnnxConfig(dynamic_shapes={"input_ids": {0: torch.export.Dim("batch", min=1, max=32), 1: seq}})
        OnnxExporter().export(model, None, config=config).save_pretrained(tmp_path / name)
        graph = onnx.load(str(tmp_path / name / "model.onnx"), load_external_data=False).graph
        dims[name] = [d.dim_param or d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    assert dims == {"auto": ["batch", "sequence_length"], "dynamic": ["batch", "sequence_length"],
                    "static": ["batch", 16]}, dims
    ids = np.array([[1, 5, 9], [2, 4, 6], [3, 7, 11]], np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "position_ids": np.tile(np.arange(3), (3, 1))}
    got = ort.InferenceSession(str(tmp_path / "auto" / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        ["logits"], feed)[0]
    with torch.no_grad():
        want = model(**{k: torch.from_numpy(v) for k, v in feed.items()}).logits.numpy()
    assert np.abs(got - want).max() <= PARITY_ATOL


@pytest.mark.parametrize("name", ["OnnxConfig", "OpenVINOConfig", "DynamoConfig", "ExecutorchConfig"])
def test_config_classes_are_the_seeds(name):
    """The package's config classes, made from the library's table of options (hfx_option_info_at),
    have the seed's dataclasses' fields with the seed's defaults, and hfx_options besides."""
    import dataclasses

    import transformers.exporters as seed

    def fields(cls):
        return {f.name: f.default for f in dataclasses.fields(cls) if f.name != "hfx_options"}

    assert fields(getattr(hfx, name)) == fields(getattr(seed, name))


def test_python_package_exports_the_docs_multimodal_example(ckpt, reference, tmp_path):
    """The seed docs' Qwen2-VL example through `import hfx` (its default profile is the seed's): the components of
    the seed's split beside the encoder and the embedding, each loaded as its runtime's program."""
    from test_vlm_seed import SPLIT, _generate_inputs, _rows, images, prompts, seed_loop, want_generation
    paths = images(tmp_path, 1)
    ids = _rows(reference, "qwen2_vl", paths)
    exported = hfx.OnnxExporter().export_for_generation(reference("qwen2_vl"), _generate_inputs("qwen2_vl", ids, paths),
                                                        config=hfx.OnnxConfig(dynamic=True))
    assert set(exported.components) == {"image_encoder", "embed_tokens", *SPLIT}
    exported.save_pretrained(tmp_path / "out")
    tokens, _ = seed_loop(tmp_path / "out", "onnx", reference, "qwen2_vl", paths, 8)
    want_tokens, _ = want_generation(reference, "qwen2_vl", prompts(1), paths)
    assert tokens[0].tolist() == want_tokens[0][:8].tolist()


def test_decompose_for_generation_feeds_hfx_graphs(checkpoints, tmp_path):
    """hfx.utils.decompose_for_generation: the seed's components and the forward inputs it captures, None in place of
    its submodules; the graphs of hfx's export_for_generation (the seed's runners on hfx's folder, inputs by name) take
    those inputs to the submodules' eager outputs within 1e-4 — the seed docs' check-before-export loop."""
    import copy

    from transformers import AutoModelForCausalLM
    from transformers.exporters import ExportedModel
    from transformers.exporters.utils import decompose_for_generation as seed_decompose

    from hfx.utils import decompose_for_generation
    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    ids = torch.tensor([[1, 5, 9, 3, 7]])
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    parts, seed_parts = decompose_for_generation(model, inputs), seed_decompose(model, inputs)
    assert list(parts) == list(seed_parts) == ["prefill", "decode"]
    assert all(module is None for module, _ in parts.values())
    exported = hfx.OnnxExporter().export_for_generation(model, inputs, hfx.OnnxConfig(dynamic=True))
    exported.save_pretrained(tmp_path / "out")
    runners = ExportedModel.from_pretrained(tmp_path / "out").runners
    for name, (_, kwargs) in parts.items():
        assert set(kwargs) == set(seed_parts[name][1])
        with torch.no_grad():
            eager = seed_parts[name][0](**copy.deepcopy(kwargs)).logits
        got = torch.as_tensor(runners[name](**copy.deepcopy(kwargs)).logits)
        assert got.shape == eager.shape and float((got - eager).abs().max()) <= PARITY_ATOL, name


def test_executorch_dynamic_alone_takes_the_seeds_bounds(checkpoints, tmp_path):
    """ExecutorchConfig(dynamic=True) without dynamic_shapes, from a live model and its sample: the sample's dims of
    size 1 pinned (torch's Dim.AUTO) and the others capped as the seed's ExecutorchExporter caps them (its own
    _dim_floor and multiplier), recorded in export_config.json; the program runs other lengths within the cap to the
    model's logits."""
    from transformers import AutoModelForCausalLM
    from transformers.exporters import exporter_executorch as seed_et

    from etutil import worker
    model = AutoModelForCausalLM.from_pretrained(str(checkpoints("llama_default"))).eval()
    ids = torch.tensor([[1, 5, 9, 3, 7, 2, 4]])
    exported = hfx.ExecutorchExporter().export(model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)},
                                               hfx.ExecutorchConfig(dynamic=True))
    exported.save_pretrained(tmp_path / "out")
    cap = max(2 * seed_et._MAX_DIM_MULTIPLIER, 7 * seed_et._MAX_DIM_MULTIPLIER, seed_et._dim_floor(1))
    config = json.loads((tmp_path / "out" / "export_config.json").read_text())
    assert config["dynamic_shapes"] == {"input_ids": {"0": None, "1": {"max": cap}}}
    for n in (3, 40):
        x = np.arange(1, n + 1, dtype=np.int64)[None] % 100
        mask, pos = np.ones_like(x), np.arange(n)[None]
        got = worker().run(tmp_path / "out" / "model.pte", [x, mask, pos])[0]
        with torch.no_grad():
            want = model(input_ids=torch.from_numpy(x), attention_mask=torch.from_numpy(mask)).logits.numpy()
        assert np.abs(got - want).max() <= PARITY_ATOL, n
