"""Vision-language models in the Python system's profile (io "seed", docs/GENERATION.md): its split of a multimodal
model's prompt into the language model (inputs_embeds and positions → the final states and the cache) and the lm_head
module, then its decode over input_ids, beside hfx's image_encoder and embed_tokens, which make the embeddings the
seed leaves to the caller (transformers 5.24's generate() encodes the images before the forward it captures, so the
seed's own export has no image encoder).

  * the language_model, lm_head and decode graphs take and return what transformers.exporters' own
    export_for_generation of the same model and inputs does (names in order, dtypes, ranks: ONNX; OpenVINO's files
    and ports; the .pt2's call: specs, user and None inputs, argument names, and export.json's kwargs and
    constants), Qwen2-VL's M-RoPE positions [4, B, S] with the text positions as a first row and the processor's
    mm_token_type_ids in its decode, as the seed's graphs have them;
  * a greedy loop over those graphs (the image features written over the image tokens, the last state through
    lm_head, then one decode a token) gives transformers' generate() token for token, each step's logits within 1e-4:
    ONNX Runtime, OpenVINO stateless and stateful (the decode's variables set from the language model's cache) and
    torch (.pt2, called as the seed's programs are), for LLaVA, Qwen2-VL and Qwen2.5-VL (windowed tower), from an image
    and a prompt;
  * the seed's runners (transformers.exporters' ExportedModel on hfx's folder: ONNX Runtime, OpenVINO, torch, and
    ExecuTorch in its virtualenv, where the language model's None keywords are None arguments of the method) give the
    same tokens;
  * Qwen3-VL's language model with DeepStack's features as the seed passes them (visual_pos_masks and the list
    deepstack_visual_embeds.{i}): its I/O the seed's (ONNX; the .pt2's call), generation equal (ONNX Runtime,
    OpenVINO, torch);
  * the lineages whose language model the seed calls with constants beside None (InternVL's image_sizes=None,
    LLaVA-OneVision's logits_to_keep=0 — its tiles packed as transformers packs them —, Qwen3-VL-MoE's and
    Qwen3.5-MoE's output_router_logits=False, their language model returning MoeModelOutputWithPast): their I/O and
    calls the seed's, generation equal;
  * the models whose language model the seed feeds more than embeddings and positions (Gemma 3's per-layer-type
    masks) refused by name;
  * (test_python_package.py: the Python package's OnnxExporter.export_for_generation on the live model, the seed
    docs' multimodal example, which takes the seed's profile by default, writes these components.)"""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest
import torch

import ovutil
from conftest import call_pt2, describe, load_pt2, run_hfx
from genutil import compare_generation
from mmutil import expand_tokens
from test_vlm import (IMAGE_TOKEN, NEW_TOKENS, QWEN_GRID_ARCHS, VARIANTS, anyres, ckpt, encoder_feed,  # noqa: F401
                      generate_vlm, grid, images,
                      prompts, reference, want_features, want_generation, image_inputs)

# the lineages whose language model the seed calls with constants beside None (InternVL's image_sizes=None,
# LLaVA-OneVision's logits_to_keep=0, the MoE ones' output_router_logits=False: constant inputs of its programs)
RECORDED = ["internvl", "llava_onevision", "qwen3_vl_moe", "qwen3_5_moe"]
NAMES = ["llava", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", *RECORDED]
DEEPSTACK_OR_HYBRID = ("qwen3_vl", "qwen3_vl_moe", "qwen3_5_moe")  # (the stateful OpenVINO layout is GenAI's for them)
SPLIT = ("language_model", "lm_head", "decode")


def _rows(reference, name, paths):
    """The prompt (batch 1), its image token expanded to the image's features."""
    return np.array(expand_tokens(prompts(1), IMAGE_TOKEN,
                                  [np.prod(want_features(reference, name, [p]).shape[:-1]) for p in paths]), np.int64)


def _generate_inputs(name, ids, paths):
    """generate()'s keyword inputs as the model's processor makes them (Qwen-VL's token types too)."""
    kwargs = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.ones(ids.shape, dtype=torch.long),
              **image_inputs(name, paths)}
    if VARIANTS[name].arch in QWEN_GRID_ARCHS:
        kwargs["mm_token_type_ids"] = torch.from_numpy((ids == IMAGE_TOKEN).astype(np.int64))
    return kwargs


def _positions(reference, name, ids, paths):
    """The prompt's position_ids as the seed's language model takes them, and the decode's at step t (a function):
    [B, S] plainly; M-RoPE's [4, B, S], the text positions, then transformers' get_rope_index's three rows."""
    n = ids.shape[1]
    if VARIANTS[name].arch not in QWEN_GRID_ARCHS:
        return np.arange(n)[None], lambda t: np.array([[n + t]])
    kwargs = _generate_inputs(name, ids, paths)
    rope, deltas = reference(name).model.get_rope_index(kwargs["input_ids"], kwargs["mm_token_type_ids"],
                                                        kwargs["image_grid_thw"], attention_mask=kwargs["attention_mask"])
    prompt = np.concatenate([np.arange(n)[None, None], rope.numpy()]).astype(np.int64)
    delta = int(deltas.reshape(-1)[0])
    return prompt, lambda t: np.array([[[n + t]], [[n + t + delta]], [[n + t + delta]], [[n + t + delta]]], np.int64)


class _Runner:
    """The export's graphs by component in ONNX Runtime or OpenVINO (f32); `stateful`: OpenVINO's decode keeps the
    cache in its variables."""

    def __init__(self, out, fmt):
        self.out, self.fmt = out, fmt
        self.files = {k: out / v["file"] for k, v in json.loads((out / "export.json").read_text())["components"].items()}
        self.sessions = {}

    def _session(self, component):
        if component not in self.sessions:
            if self.fmt == "onnx":
                import onnxruntime as ort
                self.sessions[component] = ort.InferenceSession(str(self.files[component]),
                                                                providers=["CPUExecutionProvider"])
            else:
                import openvino as ov
                compiled = ov.Core().compile_model(str(self.files[component]), "CPU", ovutil.OV_CONFIG)
                self.sessions[component] = compiled.create_infer_request()
        return self.sessions[component]

    def inputs(self, component):
        s = self._session(component)
        return [i.name for i in s.get_inputs()] if self.fmt == "onnx" else [p.get_any_name() for p in s.model_inputs]

    def states(self, component):
        return [] if self.fmt == "onnx" else list(self._session(component).query_state())

    def __call__(self, component, feed):
        s = self._session(component)
        if self.fmt == "onnx":
            return dict(zip([o.name for o in s.get_outputs()], s.run(None, feed)))
        res = s.infer(feed)
        return {p.get_any_name(): np.array(res[p]) for p in s.model_outputs}


def _image_features(encode, out, name, paths):
    """What the prompt's image tokens take ([tokens, hidden]) and DeepStack's features (per layer, or none) from hfx's
    image_encoder (`encode`: its feed → its outputs by name): any-resolution tiles packed as transformers packs them
    (examples/generate_vlm.py's anyres_features: LLaVA-OneVision)."""
    if anyres(name):
        import types
        export = types.SimpleNamespace(image_encoder=types.SimpleNamespace(run=encode))
        return generate_vlm.anyres_features(export, out, paths)[0], None
    encoded = encode(encoder_feed(name, paths))
    features = np.asarray(encoded["image_features"])
    return features.reshape(-1, features.shape[-1]), encoded.get("deepstack_features")


def seed_loop(out, fmt, reference, name, paths, new_tokens):
    """Greedy generation over the seed's split: (tokens [1, n], logits [n, 1, vocab])."""
    run = _Runner(out, fmt)
    ids = _rows(reference, name, paths)
    features, deepstack = _image_features(lambda feed: run("image_encoder", feed), out, name, paths)
    embeds = run("embed_tokens", {"input_ids": ids})["inputs_embeds"]
    embeds[ids == IMAGE_TOKEN] = features
    prompt_positions, step_positions = _positions(reference, name, ids, paths)
    feed = {"position_ids": prompt_positions, "inputs_embeds": embeds}
    if deepstack is not None:  # DeepStack: the image tokens, and each layer's features (the seed's list)
        feed["visual_pos_masks"] = ids == IMAGE_TOKEN
        feed.update({f"deepstack_visual_embeds.{i}": f for i, f in enumerate(deepstack)})
    res = run("language_model", feed)
    cache = {k: v for k, v in res.items() if k.startswith("cache.")}
    logits = [run("lm_head", {"input": res["last_hidden_state"][:, -1:]})["output"][:, -1]]
    import openvino as ov
    for state in run.states("decode"):  # a stateful decode starts from the language model's cache
        state.state = ov.Tensor(np.ascontiguousarray(cache[state.name.split("output.")[0].removeprefix("input.")]))
    wanted = run.inputs("decode")
    for t in range(new_tokens - 1):
        token = np.array([[int(logits[-1][0].argmax())]])
        feed = {"input_ids": token, "position_ids": step_positions(t)}
        feed.update({f"input.{k}": v for k, v in cache.items() if f"input.{k}" in wanted})
        if "mm_token_type_ids" in wanted:
            feed["mm_token_type_ids"] = np.zeros((1, 1), np.int64)
        if "beam_idx" in wanted:
            feed["beam_idx"] = np.zeros(1, np.int32)
        res = run("decode", feed)
        cache = {k.removeprefix("output."): v for k, v in res.items() if k.startswith("output.")}
        logits.append(res["logits"][:, -1])
    tokens = [int(x[0].argmax()) for x in logits]
    return np.array([tokens]), np.stack(logits)


def seed_loop_dynamo(out, reference, name, paths, new_tokens):
    """The same loop over the .pt2 programs as a torch caller runs them: the language model called with its sample's
    empty DynamicCache and the None keywords its model passes (and DeepStack's mask and list of features), returning
    BaseModelOutputWithPast whose cache object the decode takes and returns anew; the encoders called positionally."""
    def program(component):
        return load_pt2(out / f"{component}.pt2")
    ids = _rows(reference, name, paths)
    names = json.loads((out / "export.json").read_text())["components"]["image_encoder"]["metadata"]["output_names"]
    features, deepstack = _image_features(
        lambda feed: dict(zip(names, (t.numpy() for t in call_pt2(program("image_encoder"), feed)))), out, name, paths)
    # DeepStack: the image tokens, and each layer's features as the seed's list
    deepstack = ({} if deepstack is None else {"visual_pos_masks": torch.from_numpy(ids == IMAGE_TOKEN),
                                               "deepstack_visual_embeds": list(torch.from_numpy(deepstack))})
    embeds = call_pt2(program("embed_tokens"), {"input_ids": ids})[0].clone()
    embeds[torch.from_numpy(ids == IMAGE_TOKEN)] = torch.from_numpy(features)
    prompt_positions, step_positions = _positions(reference, name, ids, paths)
    lm_program = program("language_model")
    _, sample = lm_program.example_inputs
    # (the keywords its model passes as constants: None, logits_to_keep=0, output_router_logits=False)
    call = {k: v for k, v in sample.items() if v is None or isinstance(v, (bool, int))}
    with torch.no_grad():
        res = lm_program.module()(**call, position_ids=torch.from_numpy(prompt_positions),
                                  cache=copy.deepcopy(sample["cache"]), inputs_embeds=embeds, **deepstack)
        head, decode = program("lm_head").module(), program("decode").module()
        logits = [head(input=res.last_hidden_state[:, -1:])[:, -1]]
        cache = res.cache
        decode_keys = program("decode").call_spec.in_spec.child(1).context
        for t in range(new_tokens - 1):
            step = {"input_ids": logits[-1].argmax(-1)[:, None], "position_ids": torch.from_numpy(step_positions(t)),
                    "cache": cache}
            if "mm_token_type_ids" in decode_keys:
                step["mm_token_type_ids"] = torch.zeros((1, 1), dtype=torch.long)
            res = decode(**step)
            cache = res.cache
            logits.append(res.logits[:, -1])
    tokens = [int(x[0].argmax()) for x in logits]
    return np.array([tokens]), torch.stack(logits).numpy()


def _hfx_seed(ckpt_dir, out, fmt, stateful=True):
    cfg = out.parent / f"{out.name}.json"
    extra = {} if stateful or fmt != "openvino" else {"stateful": False}
    cfg.write_text(json.dumps({"export_format": fmt, "dynamic": True, "io": "seed", **extra}))
    proc = run_hfx(["export", ckpt_dir, out, "--config", cfg, "--for-generation", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    return out


def _seed_export(reference, name, paths, out, fmt):
    from transformers.exporters import DynamoExporter, OnnxExporter, OpenVINOExporter
    from transformers.exporters.configs import DynamoConfig, OnnxConfig, OpenVINOConfig
    exporter, config = {"onnx": (OnnxExporter, OnnxConfig), "openvino": (OpenVINOExporter, OpenVINOConfig),
                        "dynamo": (DynamoExporter, DynamoConfig)}[fmt]
    ids = _rows(reference, name, paths)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exporter().export_for_generation(reference(name), _generate_inputs(name, ids, paths),
                                         config(dynamic=True)).save_pretrained(str(out))
    return out


def _onnx_io(path):
    import onnx
    m = onnx.load(str(path), load_external_data=False)
    return ([(v.name, v.type.tensor_type.elem_type, len(v.type.tensor_type.shape.dim)) for v in m.graph.input],
            [(v.name, v.type.tensor_type.elem_type, len(v.type.tensor_type.shape.dim)) for v in m.graph.output])


def _pt2_call(path):
    """What a torch caller sees of a .pt2 (seedutil.pt2_call's view: specs, user inputs with the None ones, argument
    names), and the seed's metadata beside it (its kwargs and constants)."""
    from seedutil import pt2_call
    component = json.loads((path.parent / "export.json").read_text())["components"][path.stem]["metadata"]
    kwargs = {k: v if "container" in v else {**v, "shape": None} for k, v in component["kwargs"].items()}
    return pt2_call(path), kwargs, component["in_constants"]


def _ov_io(path):
    import openvino as ov
    m = ov.Core().read_model(str(path))
    side = lambda ports: [(p.get_any_name(), p.get_element_type().get_type_name(), p.get_partial_shape().rank.get_length())
                          for p in ports]
    variables = sorted({op.get_variable_id() for op in m.get_ops() if op.get_type_name() == "ReadValue"})
    return side(m.inputs), side(m.outputs), variables


# (no OpenVINO I/O for Qwen3-VL's and the lineages with constants: the seed's OpenVINO converter keeps DeepStack's list
# as it does ONNX's, and turns LLaVA-OneVision's logits_to_keep=0 into an i64 input its graph ignores, which hfx does
# not write; their OpenVINO graphs generate below)
@pytest.mark.parametrize("name, fmt", [(n, f) for n in ("llava", "qwen2_vl", "qwen3_vl", *RECORDED)
                                       for f in ("onnx", "openvino", "dynamo")
                                       if (n not in ("qwen3_vl", "qwen3_vl_moe", "llava_onevision") or f != "openvino")
                                       and (n != "qwen3_5_moe" or f == "onnx")])
def test_split_graphs_equal_the_seeds(name, fmt, ckpt, reference, tmp_path):
    paths = images(tmp_path, 1)
    hfx = _hfx_seed(ckpt(name), tmp_path / "hfx", fmt)
    seed = _seed_export(reference, name, paths, tmp_path / "seed", fmt)
    seed_components = json.loads((seed / "export.json").read_text())["components"]
    hfx_components = json.loads((hfx / "export.json").read_text())["components"]
    assert set(seed_components) == set(SPLIT)  # (transformers 5.24: no image encoder captured)
    assert set(hfx_components) == {"image_encoder", "embed_tokens", *SPLIT}
    io = {"onnx": _onnx_io, "openvino": _ov_io, "dynamo": _pt2_call}[fmt]
    for component in SPLIT:
        assert hfx_components[component]["file"] == seed_components[component]["file"]
        assert io(hfx / hfx_components[component]["file"]) == io(seed / seed_components[component]["file"]), component


# (Qwen2.5-VL's split in ONNX only: its OpenVINO language model and decode are Qwen2-VL's op for op; Qwen3-VL's
# DeepStack in ONNX, OpenVINO stateless and torch.export)
@pytest.mark.parametrize("name, fmt", [(n, f) for n in NAMES for f in ("onnx", "openvino-stateless", "openvino", "dynamo")
                                       if f == "onnx" or n not in ("qwen2_5_vl", *DEEPSTACK_OR_HYBRID) or
                                       (n in DEEPSTACK_OR_HYBRID and f in ("openvino-stateless", "dynamo"))])
def test_split_generates_transformers_tokens(name, fmt, ckpt, reference, tmp_path):
    runtime = fmt.split("-")[0]
    out = _hfx_seed(ckpt(name), tmp_path / "hfx", runtime, stateful=fmt == "openvino")
    paths = images(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference, name, prompts(1), paths)
    assert len(set(want_tokens[0].tolist())) > 3  # (a test that would see wrong positions or caches)
    if runtime == "dynamo":
        tokens, logits = seed_loop_dynamo(out, reference, name, paths, NEW_TOKENS)
    else:
        tokens, logits = seed_loop(out, runtime, reference, name, paths, NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} seed split", runtime=runtime)


@pytest.mark.parametrize("fmt", ["onnx", "openvino-stateless", "dynamo"])
def test_seed_runners_generate_from_the_split(fmt, ckpt, reference, tmp_path):
    """transformers.exporters' ExportedModel loads hfx's Qwen2-VL split (export.json's specs: the seed's calls, and
    keyword calls of the encoder and the embedding) and a greedy loop over its runners gives generate()'s tokens: the
    language model called as the model calls it, with an empty DynamicCache, its ModelOutput's cache passed to each
    decode."""
    import transformers
    from transformers.exporters import ExportedModel
    runtime = fmt.split("-")[0]
    out = _hfx_seed(ckpt("qwen2_vl"), tmp_path / "hfx", runtime, stateful=False)
    runner = {"config": ovutil.OV_CONFIG} if runtime == "openvino" else {}
    runners = ExportedModel.from_pretrained(out, trust_remote_code=True, **runner).runners
    paths = images(tmp_path, 1)
    ids = _rows(reference, "qwen2_vl", paths)
    with torch.no_grad():
        features = runners["image_encoder"](**{k: torch.from_numpy(v) for k, v in encoder_feed("qwen2_vl", paths).items()})
        embeds = torch.as_tensor(runners["embed_tokens"](input_ids=torch.from_numpy(ids))).clone()
        embeds[torch.from_numpy(ids == IMAGE_TOKEN)] = torch.as_tensor(features).reshape(-1, embeds.shape[-1])
        prompt_positions, step_positions = _positions(reference, "qwen2_vl", ids, paths)
        empty = transformers.DynamicCache(config=reference("qwen2_vl").config.get_text_config())
        step = runners["language_model"](input_ids=None, attention_mask=None,
                                         position_ids=torch.from_numpy(prompt_positions), cache=empty,
                                         inputs_embeds=embeds)
        logits = runners["lm_head"](input=torch.as_tensor(step.last_hidden_state)[:, -1:])
        tokens = [int(torch.as_tensor(logits)[0, -1].argmax())]
        for t in range(NEW_TOKENS - 1):
            step = runners["decode"](input_ids=torch.tensor([[tokens[-1]]]),
                                     position_ids=torch.from_numpy(step_positions(t)), cache=step.cache,
                                     mm_token_type_ids=torch.zeros((1, 1), dtype=torch.long))
            tokens.append(int(torch.as_tensor(step.logits)[0, -1].argmax()))
    want_tokens, _ = want_generation(reference, "qwen2_vl", prompts(1), paths)
    assert tokens == want_tokens[0].tolist()


SEED_RUNNERS_ET = """
import numpy as np, torch, transformers
from transformers.exporters import ExportedModel
ckpt, out, feed, ids, image_token, prompt_positions, step_positions, n = args
runners = ExportedModel.from_pretrained(out, trust_remote_code=True).runners
ids = torch.tensor(ids)
features = runners["image_encoder"](**{k: torch.tensor(v) for k, v in feed.items()})
embeds = torch.as_tensor(runners["embed_tokens"](input_ids=ids)).clone()
embeds[ids == image_token] = torch.as_tensor(features).reshape(-1, embeds.shape[-1])
config = transformers.AutoConfig.from_pretrained(ckpt).get_text_config()
step = runners["language_model"](input_ids=None, attention_mask=None, position_ids=torch.tensor(prompt_positions),
                                 cache=transformers.DynamicCache(config=config), inputs_embeds=embeds)
logits = runners["lm_head"](input=torch.as_tensor(step.last_hidden_state)[:, -1:])
tokens = [int(torch.as_tensor(logits)[0, -1].argmax())]
for t in range(n - 1):
    step = runners["decode"](input_ids=torch.tensor([[tokens[-1]]]), position_ids=torch.tensor(step_positions[t]),
                             cache=step.cache, mm_token_type_ids=torch.zeros((1, 1), dtype=torch.long))
    tokens.append(int(torch.as_tensor(step.logits)[0, -1].argmax()))
result = tokens
"""
# ExecuTorch plans memory for the largest size: the patches, images and tokens bounded
ET_BOUNDS = {"export_format": "executorch", "io": "seed", "dynamic_shapes": {
    "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 160}},
    "pixel_values": {"0": {"name": "num_patches", "max": 1024}},
    "image_grid_thw": {"0": {"name": "num_images", "max": 4}}}}


def test_seed_runners_generate_from_the_executorch_split(ckpt, reference, tmp_path):
    """The same loop over the seed's ExecuTorch runners (its executorch virtualenv) on hfx's .pte split of Qwen2-VL."""
    from etutil import worker
    cfg = tmp_path / "et.json"
    cfg.write_text(json.dumps(ET_BOUNDS))
    out = tmp_path / "hfx"
    proc = run_hfx(["export", ckpt("qwen2_vl"), out, "--config", cfg, "--for-generation", "--max-cache-len", "160",
                    "--quiet"])
    assert proc.returncode == 0, describe(proc)
    paths = images(tmp_path, 1)
    ids = _rows(reference, "qwen2_vl", paths)
    prompt_positions, step_positions = _positions(reference, "qwen2_vl", ids, paths)
    feed = {k: v.tolist() for k, v in encoder_feed("qwen2_vl", paths).items()}
    got = worker().python(SEED_RUNNERS_ET, [str(ckpt("qwen2_vl")), str(out), feed, ids.tolist(), IMAGE_TOKEN,
                                            prompt_positions.tolist(),
                                            [step_positions(t).tolist() for t in range(NEW_TOKENS)], NEW_TOKENS])
    want_tokens, _ = want_generation(reference, "qwen2_vl", prompts(1), paths)
    assert got == want_tokens[0].tolist()


def test_positions_matter(ckpt, reference, tmp_path, monkeypatch):
    """The loop's M-RoPE rows are what moves Qwen2-VL's tokens: plain positions in every row give others."""
    out = _hfx_seed(ckpt("qwen2_vl"), tmp_path / "hfx", "onnx")
    paths = images(tmp_path, 1)
    want_tokens, _ = want_generation(reference, "qwen2_vl", prompts(1), paths)
    def plain(reference_, name, ids, paths_):
        n = ids.shape[1]
        return np.broadcast_to(np.arange(n), (4, 1, n)).copy(), lambda t: np.full((4, 1, 1), n + t, np.int64)
    monkeypatch.setitem(globals(), "_positions", plain)
    tokens, _ = seed_loop(out, "onnx", reference, "qwen2_vl", paths, NEW_TOKENS)
    assert tokens[0].tolist() != want_tokens[0].tolist()


@pytest.mark.parametrize("name, reason", [("gemma3", "masks its language model takes per layer type")])
def test_seed_split_refused_where_the_language_model_takes_more(name, reason, ckpt, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"export_format": "onnx", "dynamic": True, "io": "seed"}))
    proc = run_hfx(["export", ckpt(name), tmp_path / "out", "--config", cfg, "--for-generation"])
    assert proc.returncode == 2 and reason in proc.stderr and 'io "seed"' in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()

