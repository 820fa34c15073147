"""--format dynamo: torch.export programs (.pt2) written by hfx from C, for every decoder variant
the ONNX and OpenVINO suites cover. torch.export.load reads each; `.module()` gives transformers'
eager logits within 1e-4 on every element for each input case (left-padded batches included);
the parameters carry transformers' state-dict names; the program passes torch.export's verifier.
(The architectures of decoders_encoders_models.py, encoders included, are in test_decoders_encoders.py.)"""
import json

import pytest
import torch

import models
from conftest import assert_logits_close, call_pt2, describe, load_pt2, run_hfx

@pytest.fixture(scope="module")
def dynamo_exports(tmp_path_factory, checkpoints):
    root = tmp_path_factory.mktemp("dynamo")
    done = {}

    def get(name):
        if name not in done:
            out = root / name
            done[name] = (out, run_hfx(["export", checkpoints(name), out, "--format", "dynamo", "--dynamic", "--quiet"]))
        return done[name]
    return get


_programs = {}


def _program(path):
    if path not in _programs:
        _programs[path] = load_pt2(path)
    return _programs[path]


PARAMS = [pytest.param(v.name, case, id=f"{v.name}-{case.id}") for v in models.VARIANTS_LIST for case in v.cases]


@pytest.mark.parametrize("name,case", PARAMS)
def test_dynamo_parity(dynamo_exports, checkpoints, name, case):
    variant = models.VARIANTS[name]
    out, proc = dynamo_exports(name)
    assert proc.returncode == 0, describe(proc)
    ep = _program(out / "model.pt2")
    inputs = models.make_inputs(case, variant.vocab_size)
    got = call_pt2(ep, inputs)[0]
    want = models.reference_logits(checkpoints(name), inputs)
    assert_logits_close(got.detach().numpy(), want, f"[dynamo] {name} {case.id}")


@pytest.mark.parametrize("name", [v.name for v in models.VARIANTS_LIST])
def test_dynamo_program_is_real(dynamo_exports, checkpoints, name):
    """State-dict names are transformers' own; the verifier passes; export.json names model.pt2."""
    out, proc = dynamo_exports(name)
    assert proc.returncode == 0, describe(proc)
    ep = _program(out / "model.pt2")
    reference = models.load_reference_model(checkpoints(name)).state_dict()
    assert set(ep.state_dict) <= set(reference), sorted(set(ep.state_dict) - set(reference))[:5]
    for k, v in ep.state_dict.items():
        assert torch.equal(v.to(reference[k].dtype), reference[k]), k
    ep.validate()
    manifest = json.loads((out / "export.json").read_text())
    assert manifest["export_format"] == "dynamo" and manifest["components"]["model"]["file"] == "model.pt2"


def test_dynamo_program_compiles_and_converts(dynamo_exports, checkpoints, tmp_path):
    """The program is real: AOTInductor compiles it (from the sample inputs the archive carries)
    and the compiled package gives transformers' logits; torch.onnx.export accepts it."""
    out, proc = dynamo_exports("llama_default")
    assert proc.returncode == 0, describe(proc)
    ep = _program(out / "model.pt2")
    names = ("input_ids", "attention_mask", "position_ids")
    assert ep.example_inputs[0] == () and list(ep.example_inputs[1]) == list(names)  # called with keywords
    assert [tuple(t.shape) for t in ep.example_inputs[1].values()] == [(2, 16)] * 3  # the hinted sample shapes
    inputs = models.make_inputs(models.Case(2, 9, (0, 3)), models.VARIANTS["llama_default"].vocab_size)
    want = models.reference_logits(checkpoints("llama_default"), inputs)
    feed = {n: torch.from_numpy(inputs[n]).contiguous() for n in names}
    package = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "aoti.pt2"))
    got = torch._inductor.aoti_load_package(package)(**feed)
    got = got.logits if hasattr(got, "logits") else got[0] if isinstance(got, (tuple, list)) else got
    assert_logits_close(got.detach().numpy(), want, "[dynamo → AOTInductor] llama_default")
    onnx_program = torch.onnx.export(ep, (), kwargs=feed, dynamo=True)
    assert len(onnx_program.model_proto.graph.node) > 0


# ---- generation: examples/generate_torch.py against transformers' generate ----------------------

from genutil import MODES, NEW_TOKENS, GenExports, References, compare_generation, prompts, run_loop  # noqa: E402
from conftest import REPO  # noqa: E402

TORCH_LOOP = REPO / "examples" / "generate_torch.py"
NO_EOS = {"bos_token_id": 1, "eos_token_id": None}
GEN_MATRIX = [pytest.param(v, m, lengths, id=f"{v}-{m}-b{len(lengths)}")
              for v in ("llama_default", "mistral_swa", "qwen2_swa", "qwen3", "gemma2", "gemma3", "starcoder2")
              for m in ("dyncache", "dyncache-mtd")
              for lengths in ((7,), (10, 5, 1))] + [
    pytest.param(v, m, lengths, id=f"{v}-{m}-b{len(lengths)}")
    for v in ("llama_default", "mistral_swa", "gemma2")
    for m in ("static", "static-mtd")
    for lengths in ((7,), (10, 5, 1))] + [
    # a static cache for the rest of the template families, and every mode for the remaining decoders
    pytest.param(v, "static", lengths, id=f"{v}-static-b{len(lengths)}")
    for v in ("qwen2_swa", "qwen3", "gemma3", "starcoder2")
    for lengths in ((7,), (10, 5, 1))] + [
    pytest.param(v, m, lengths, id=f"{v}-{m}-b{len(lengths)}")
    for v in ("granite", "olmo2", "gemma")
    for m in ("dyncache", "dyncache-mtd", "static")
    for lengths in ((7,), (10, 5, 1))]


@pytest.fixture(scope="module")
def dynamo_gen(tmp_path_factory, checkpoints):
    return GenExports(tmp_path_factory.mktemp("dynamo_gen"), checkpoints, fmt="dynamo")


@pytest.fixture(scope="module")
def gen_refs(checkpoints):
    return References(checkpoints)


@pytest.mark.parametrize("name,mode_name,lengths", GEN_MATRIX)
def test_dynamo_greedy_generation(dynamo_gen, gen_refs, tmp_path, name, mode_name, lengths):
    """32 new tokens through examples/generate_torch.py (torch.export.load + .module(); a growing
    cache, or a static one the program writes in place) equal generate()'s, every step's logits
    within 1e-4; batch 1 and batch 3 left-padded; prefill + decode and one multi-token decode."""
    out = dynamo_gen.with_generation_config(dynamo_gen.mode(name, MODES[mode_name]), NO_EOS)
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    want_tokens, want_logits = gen_refs.generate(name, rows, NO_EOS)
    res = run_loop(out, rows, NEW_TOKENS, tmp_path / "logits.npz", timeout=300, script=TORCH_LOOP)
    assert res.proc.returncode == 0, describe(res.proc)
    compare_generation(res.tokens, res.logits, want_tokens, want_logits, f"[dynamo] {name} {mode_name} b{len(rows)}")


def test_dynamo_static_cache_mutates_its_inputs(dynamo_gen):
    """A static cache is torch.export's input mutation: each cache input of decode.pt2 has a
    USER_INPUT_MUTATION output, and the program's only user output is the logits."""
    out = dynamo_gen.mode("llama_default", MODES["static"])
    ep = torch.export.load(str(out / "decode.pt2"))
    specs = ep.graph_signature.output_specs
    mutated = {s.target for s in specs if s.kind.name == "USER_INPUT_MUTATION"}
    user_inputs = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    assert mutated == {n for n in user_inputs if "past_key_values" in n} and len(mutated) == 4, (mutated, user_inputs)
    assert [s.kind.name for s in specs].count("USER_OUTPUT") == 1


def test_inspect_names_a_pt2(dynamo_exports):
    """hfx inspect on a dynamo export says what the .pt2 is instead of misreading it."""
    out, proc = dynamo_exports("llama_default")
    assert proc.returncode == 0, describe(proc)
    for path in (out, out / "model.pt2"):
        res = run_hfx(["inspect", path])
        assert res.returncode == 0 and "torch.export program" in res.stdout, describe(res)
