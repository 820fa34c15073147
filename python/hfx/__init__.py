"""hfx for Python: transformers.exporters' API over hfx's C library.

    from hfx import AutoExportConfig, AutoHfExporter
    config = AutoExportConfig.from_dict({"export_format": "onnx", "dynamic": True})
    exporter = AutoHfExporter.from_config(config)
    exporter.export("path/or/Org/Name", config=config).save_pretrained("out/")

A thin binding: configs are the seed's dataclasses' fields, serialized to the export-config JSON
the C library validates; `model` is a checkpoint directory, a Hub id in the local cache, or a
loaded PreTrainedModel, whose state dict is handed to the C library in memory (no checkpoint is
written; contiguous CPU tensors are not copied). Generation exports
default to the seed's I/O profile (`io="seed"`), so the seed's decode loops run on them. Errors
are HfxError with the C library's message. The work happens in `save_pretrained`: an export is
one transaction into its directory (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import json
import os
import warnings
from pathlib import Path
from typing import Any

__all__ = [
    "AutoExportConfig", "AutoHfExporter", "Dim", "DynamoConfig", "DynamoExporter", "ExecutorchConfig",
    "ExecutorchExporter", "ExportedComponent", "ExportedModel", "HfxError",
    "OnnxConfig", "OnnxExporter",
    "OpenVINOConfig", "OpenVINOExporter", "version",
]

# ---- the C library -------------------------------------------------------------------------------


def _find_library() -> str:
    if os.environ.get("HFX_LIBRARY"):
        return os.environ["HFX_LIBRARY"]
    here = Path(__file__).resolve().parent
    found = sorted(glob.glob(str(here / "libhfx.so*")))
    if not found:
        raise ImportError(f"hfx: libhfx.so not found beside {here} (pip install . builds it; or set HFX_LIBRARY)")
    return found[0]


_lib = ctypes.CDLL(_find_library())


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 2048)]


_P = ctypes.c_void_p
_lib.hfx_version.restype = ctypes.c_char_p
_lib.hfx_model_open_at.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(_Error)]
_lib.hfx_model_close.argtypes = [_P]


class _Tensor(ctypes.Structure):  # hfx_tensor
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


_lib.hfx_model_open_memory.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_Tensor), ctypes.c_size_t,
                                       ctypes.POINTER(_P), ctypes.POINTER(_Error)]
_lib.hfx_model_open_memory.restype = ctypes.c_int
_lib.hfx_export_config_from_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(_Error)]
_lib.hfx_export_config_free.argtypes = [_P]
_lib.hfx_exporter_from_config.argtypes = [_P, ctypes.POINTER(_P), ctypes.POINTER(_Error)]
_lib.hfx_exporter_free.argtypes = [_P]
_lib.hfx_sample_inputs_new.restype = _P
_lib.hfx_sample_inputs_free.argtypes = [_P]
_lib.hfx_sample_inputs_add.argtypes = [_P, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(_Error)]
_lib.hfx_export.argtypes = [_P, _P, _P, _P, ctypes.c_char_p, ctypes.POINTER(_Error)]
_lib.hfx_export_for_generation.argtypes = [_P, _P, _P, _P, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                           ctypes.POINTER(_Error)]
_lib.hfx_exporter_warnings.argtypes = [_P]
_lib.hfx_exporter_warnings.restype = ctypes.c_char_p
for _f in ("hfx_model_open_at", "hfx_export_config_from_json", "hfx_exporter_from_config", "hfx_sample_inputs_add",
           "hfx_export", "hfx_export_for_generation"):
    getattr(_lib, _f).restype = ctypes.c_int

_DTYPE_I64 = 5  # hfx_dtype: HFX_DTYPE_I64


class HfxError(RuntimeError):
    """A refusal of the C library: `status` is its hfx_status (2: bad input, 3: unsupported, ...)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _check(status: int, err: _Error) -> None:
    if status:
        raise HfxError(status, err.message.decode("utf-8", "replace"))


def version() -> str:
    return _lib.hfx_version().decode()


# ---- configs: the seed's dataclasses --------------------------------------------------------------


@dataclasses.dataclass
class Dim:
    """A symbolic dimension for `dynamic_shapes` (torch.export's Dim): a name and optional bounds."""

    name: str
    min: int | None = None
    max: int | None = None


def _torch_dim(value: Any) -> tuple[bool, Any]:
    """(True, hfx's JSON) for torch.export's Dim (a named dim: its name and finite bounds; torch's least, 0, read as
    unset) or its hints (Dim.AUTO, Dim.DYNAMIC: dynamic under hfx's own name, with their bounds if given; Dim.STATIC:
    static), (False, None) for anything else. torch is not imported: a value of its types means it is there."""
    kind, module = type(value).__name__, type(value).__module__
    if not module.startswith("torch.export"):
        return False, None
    def bound(x, least=None):
        return int(x) if isinstance(x, int) and not isinstance(x, bool) and x != least else None
    if kind == "_DimHint":
        if getattr(value.type, "name", "") == "STATIC":
            return True, None
        return True, {k: v for k, v in (("min", bound(value.min)), ("max", bound(value.max))) if v is not None}
    if hasattr(value, "__name__") and hasattr(value, "min") and hasattr(value, "max"):  # (Dim's class is its type)
        return True, {"name": value.__name__, "min": bound(value.min, 0), "max": bound(value.max)}
    return False, None


def _jsonable(value: Any) -> Any:
    if isinstance(value, Dim):
        return {"name": value.name, "min": value.min, "max": value.max}
    is_dim, spec = _torch_dim(value)
    if is_dim:
        return spec
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@dataclasses.dataclass
class _ConfigBase:
    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "hfx_options"}
        d.update(self.hfx_options)
        if d.get("quantizer") is not None:  # the seed's quantizer object, as hfx's quantization keys
            d.update(_quantizer_keys(d.pop("quantizer"), d.get("export_format")))
        return d

    def to_json_string(self) -> str:
        d = {k: v for k, v in self.to_dict().items() if k != "quantizer"}
        return json.dumps(_jsonable(d), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]):
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in d.items() if k in names}
        extra = {k: v for k, v in d.items() if k not in names}  # hfx's own keys (dtype, io, ...)
        return cls(**known, hfx_options=extra)


class _OptionInfo(ctypes.Structure):  # hfx_option_info
    _fields_ = [("key", ctypes.c_char_p), ("type", ctypes.c_char_p), ("choices", ctypes.POINTER(ctypes.c_char_p)),
                ("min", ctypes.c_int64), ("max", ctypes.c_int64), ("nullable", ctypes.c_int),
                ("format", ctypes.c_char_p), ("default_json", ctypes.c_char * 32), ("seed_default", ctypes.c_char_p),
                ("seed_format", ctypes.c_char_p), ("flag", ctypes.c_char_p), ("flag_off", ctypes.c_char_p),
                ("flag_words", ctypes.c_char_p), ("scope", ctypes.c_int), ("group", ctypes.c_char_p),
                ("help", ctypes.c_char_p)]


_lib.hfx_option_info_at.argtypes = [ctypes.c_int, ctypes.POINTER(_OptionInfo)]
_lib.hfx_option_info_at.restype = ctypes.c_int


def _seed_fields() -> list[tuple[str | None, str, Any]]:
    """The library's table of export options, as the seed's config fields: (format, name, default),
    format None for the fields every config class shares."""
    fields, info, i = [], _OptionInfo(), 0
    while _lib.hfx_option_info_at(i, ctypes.byref(info)):
        i += 1
        if info.seed_default is None:
            continue  # hfx's own key: carried in hfx_options
        fmt = info.format or info.seed_format
        fields.append((fmt.decode() if fmt else None, info.key.decode(), json.loads(info.seed_default)))
    return fields


_SEED_FIELDS = _seed_fields()


def _config_class(name: str, fmt: str | None, doc: str, base: type):
    """A dataclass of the seed's fields for `fmt` (None: the shared ones), from the library's table."""
    fields = [("export_format", str, dataclasses.field(default=fmt or ""))]
    fields += [(key, Any, dataclasses.field(default=default)) for f, key, default in _SEED_FIELDS if f == fmt]
    if fmt is None:
        fields.append(("hfx_options", dict[str, Any], dataclasses.field(default_factory=dict)))
    cls = dataclasses.make_dataclass(name, fields, bases=(base,), namespace={"__doc__": doc})
    cls.__module__ = __name__
    return cls


_SeedConfig = _config_class(
    "_SeedConfig", None, """The fields every transformers.exporters config shares (its DynamoConfig's); `hfx_options`
    carries hfx's own keys.""", _ConfigBase)
OnnxConfig = _config_class("OnnxConfig", "onnx", """transformers.exporters.OnnxConfig's fields.""", _SeedConfig)
OpenVINOConfig = _config_class("OpenVINOConfig", "openvino", """transformers.exporters.OpenVINOConfig's fields.""",
                               _SeedConfig)
DynamoConfig = _config_class("DynamoConfig", "dynamo",
                             """transformers.exporters.DynamoConfig's fields (a torch.export program, .pt2).""",
                             _SeedConfig)
ExecutorchConfig = _config_class("ExecutorchConfig", "executorch", """transformers.exporters.ExecutorchConfig's fields (an ExecuTorch program, .pte): `backend`
    "xnnpack" (the default: the linear layers delegated to XNNPACK) or "portable" (hfx's: every op
    on the portable kernels). Every dynamic dim needs a max (dynamic_shapes with Dim(max=...)).""", _SeedConfig)


_CONFIGS = {"onnx": OnnxConfig, "openvino": OpenVINOConfig, "dynamo": DynamoConfig, "executorch": ExecutorchConfig}


class AutoExportConfig:
    """The config class for a dict's export_format, as the seed's AutoExportConfig."""

    @classmethod
    def from_dict(cls, export_config_dict: dict[str, Any]):
        fmt = export_config_dict.get("export_format")
        if fmt not in _CONFIGS:
            raise HfxError(3, f"export_format {fmt!r} is not available in hfx (available: {', '.join(_CONFIGS)})")
        return _CONFIGS[fmt].from_dict(export_config_dict)


# NNCFWeightCompressionConfig's fields that need data, a model run, or choices hfx does not make
_NNCF_REFUSED = ("sensitivity_metric", "subset_size", "awq", "scale_estimation", "gptq", "lora_correction",
                 "compression_format", "advanced_parameters", "ignored_scope")


def _quantizer_keys(quantizer, export_format) -> dict[str, Any]:
    """The seed's `quantizer` (a transformers.exporters quantization config) as hfx's `quantize`,
    `group_size`, `symmetric`, `quantize_embeddings` and `quantize_lm_head`:
    NNCFWeightCompressionConfig's data-free int4/int8 compression for OpenVINO, with NNCF's
    default mixed precision (int4: embeddings and the last layer in int8) or all layers alike
    (docs/QUANTIZATION.md). Everything else — calibrated (static) quantization, data-aware
    algorithms, a ratio below 1 — is refused with what to change."""
    inner = getattr(quantizer, "config", None)  # a quantizer object (OnnxRuntimeQuantizer(config)): its config
    if inner is not None and type(inner).__name__.endswith("Config"):
        quantizer = inner
    kind = type(quantizer).__name__
    if kind == "OnnxRuntimeDynamicConfig":
        return _dynamic_keys(quantizer, export_format)
    if kind != "NNCFWeightCompressionConfig":
        raise HfxError(3, f"quantizer {kind}: hfx quantizes weights data-free only: NNCFWeightCompressionConfig "
                          "for OpenVINO, OnnxRuntimeDynamicConfig for ONNX, or the config keys "
                          "quantize/group_size/symmetric")
    if export_format != "openvino":
        raise HfxError(3, f"quantizer NNCFWeightCompressionConfig compresses OpenVINO models, not {export_format!r}; "
                          "for ONNX set the config keys quantize/group_size/symmetric")
    set_fields = {k: v for k, v in dataclasses.asdict(quantizer).items() if v is not None} \
        if dataclasses.is_dataclass(quantizer) else {k: v for k, v in vars(quantizer).items() if v is not None}
    refused = [k for k in _NNCF_REFUSED if set_fields.get(k) not in (None, False)]
    if refused:
        raise HfxError(3, f"quantizer NNCFWeightCompressionConfig: {', '.join(refused)} not supported: hfx compresses "
                          "data-free (round to nearest)")
    # nncf.compress_weights' default mode is INT8_ASYM
    mode = str(getattr(set_fields.get("mode"), "value", set_fields.get("mode", "int8_asym"))).lower()
    modes = {"int4_asym": (4, False), "int4_sym": (4, True), "int8_asym": (8, False), "int8_sym": (8, True),
             "int8": (8, False)}
    if mode not in modes:
        raise HfxError(3, f"quantizer NNCFWeightCompressionConfig: mode {mode!r} not supported (int4_asym, int4_sym, "
                          "int8_asym, int8_sym)")
    bits, symmetric = modes[mode]
    if set_fields.get("ratio", 1.0) != 1.0:
        raise HfxError(3, "quantizer NNCFWeightCompressionConfig: ratio below 1 (a share of the layers in the backup "
                          "precision, chosen by a sensitivity metric) not supported: hfx compresses every layer's "
                          "linears alike")
    keys = {"quantize": f"int{bits}", "symmetric": symmetric}
    if "group_size" in set_fields:
        keys["group_size"] = 0 if set_fields["group_size"] == -1 else set_fields["group_size"]
    all_layers = set_fields.get("all_layers")
    if all_layers is not None and bits == 8:  # as NNCF itself refuses it
        raise HfxError(3, "quantizer NNCFWeightCompressionConfig: INT8 modes do not take all_layers: they compress "
                          "every layer alike")
    backup = str(getattr(set_fields.get("backup_mode"), "value", set_fields.get("backup_mode", "int8_asym"))).lower()
    if backup not in ("int8_asym", "none"):
        raise HfxError(3, f"quantizer NNCFWeightCompressionConfig: backup_mode {backup!r} not supported (int8_asym, "
                          "the default, or none)")
    if bits == 4 and all_layers:  # embeddings and the last layer in int4 too
        keys["quantize_embeddings"] = keys["quantize_lm_head"] = "int4"
    elif bits == 4 and backup == "none":  # the layers the backup precision would take stay float
        keys["quantize_embeddings"] = keys["quantize_lm_head"] = "none"
    return keys


def _dynamic_keys(config, export_format) -> dict[str, Any]:
    """OnnxRuntimeDynamicConfig (onnxruntime's quantize_dynamic) as `quantize: int8-dynamic`:
    per_channel → group_size 0, reduce_range, weight_type QInt8 (symmetric) or QUInt8, and
    op_types_to_quantize's MatMul and Gather (the linears and the embedding table). Node lists
    name nodes of the seed's graph, which hfx's does not have: refused, as are extra_options."""
    if export_format != "onnx":
        raise HfxError(3, f"quantizer OnnxRuntimeDynamicConfig quantizes ONNX models, not {export_format!r}")
    fields = {k: v for k, v in (dataclasses.asdict(config) if dataclasses.is_dataclass(config)
                                else vars(config)).items() if v is not None}
    refused = [k for k in ("nodes_to_quantize", "nodes_to_exclude", "extra_options") if fields.get(k)]
    if refused:
        raise HfxError(3, f"quantizer OnnxRuntimeDynamicConfig: {', '.join(refused)} not supported: hfx's graph "
                          "names its nodes its own way (use quantize_embeddings / quantize_lm_head)")
    keys: dict[str, Any] = {"quantize": "int8-dynamic"}
    ops = fields.get("op_types_to_quantize")
    if ops is not None:
        if "MatMul" not in ops:
            raise HfxError(3, "quantizer OnnxRuntimeDynamicConfig: op_types_to_quantize without MatMul: hfx "
                              "quantizes the linears")
        if "Gather" not in ops:
            keys["quantize_embeddings"] = "none"
    if fields.get("per_channel"):
        keys["group_size"] = 0
    if fields.get("reduce_range"):
        keys["reduce_range"] = True
    weight = str(getattr(fields.get("weight_type"), "name", fields.get("weight_type", "QInt8")))
    if weight not in ("QInt8", "QUInt8"):
        raise HfxError(3, f"quantizer OnnxRuntimeDynamicConfig: weight_type {weight} not supported (QInt8, QUInt8)")
    keys["symmetric"] = weight == "QInt8"
    return keys


def _config_json(config) -> str:
    if isinstance(config, dict) and config and all(isinstance(v, _ConfigBase) for v in config.values()):
        return json.dumps({name: _jsonable(c.to_dict()) for name, c in config.items()})  # per component
    if isinstance(config, dict):
        config = AutoExportConfig.from_dict(config)
    return json.dumps(_jsonable(config.to_dict()))


# ---- exporters ----------------------------------------------------------------------------------


# hfx_dtype by torch dtype name
_HFX_DTYPE = {"float32": 1, "float16": 2, "bfloat16": 3, "float64": 4, "int64": 5, "int32": 6, "int16": 7, "int8": 8,
              "uint8": 9, "bool": 10}


def _open_model(model, keep: list) -> _P:
    """The C model: a checkpoint directory or Hub id is opened by path; a loaded PreTrainedModel's
    state dict is handed over in memory — contiguous CPU tensors without a copy (`keep` holds
    what must outlive the model: the tensors, their names and shapes)."""
    handle, err = _P(), _Error()
    if isinstance(model, (str, os.PathLike)):
        _check(_lib.hfx_model_open_at(os.fspath(model).encode(), None, ctypes.byref(handle), ctypes.byref(err)), err)
        return handle
    if not (hasattr(model, "state_dict") and hasattr(model, "config")):
        raise TypeError("model must be a checkpoint directory, a Hub id, or a PreTrainedModel")
    state = model.state_dict()
    tensors = (_Tensor * len(state))()
    for i, (name, t) in enumerate(state.items()):
        t = t.detach()
        if t.device.type != "cpu" or not t.is_contiguous():
            t = t.to("cpu").contiguous()  # the one case that copies
        dtype = _HFX_DTYPE.get(str(t.dtype).removeprefix("torch."))
        if dtype is None:
            raise HfxError(3, f"tensor {name!r}: dtype {t.dtype} is not supported")
        shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
        keep.extend([t, shape])
        tensors[i] = _Tensor(name.encode(), dtype, t.dim(), shape, t.data_ptr())
    keep.append(tensors)
    config = model.config.to_json_string()
    gen = getattr(model, "generation_config", None)
    gen_json = gen.to_json_string() if gen is not None and hasattr(gen, "to_json_string") else None
    _check(_lib.hfx_model_open_memory(config.encode(), gen_json.encode() if gen_json else None, tensors, len(state),
                                      ctypes.byref(handle), ctypes.byref(err)), err)
    return handle


class ExportedComponent:
    """One graph of an export, as the seed's ExportedComponent: `metadata` (what export.json records: the seed's
    ExportMetadata fields and hfx's), `file`, and `program`, the backend's own object as transformers.exporters
    loads it (its exporter's load_program: onnx_ir.Model, openvino.Model, torch.export.ExportedProgram, ExecuTorch's
    program), loaded on first use (ImportError naming what is missing where that runtime or transformers.exporters
    is not installed)."""

    def __init__(self, directory: Path, export_format: str, entry: dict):
        self._path, self._format = directory / entry["file"], export_format
        self.file, self.metadata = entry["file"], entry.get("metadata") or {}
        self._program = None

    @property
    def program(self):
        if self._program is None:
            try:
                from transformers.exporters.auto import get_exporter_class
                self._program = get_exporter_class(self._format).load_program(self._path)
            except ImportError as e:
                raise ImportError(f"hfx: {self.file}'s program is loaded by transformers.exporters and the "
                                  f"{self._format} runtime: {e}") from e
        return self._program

    def __repr__(self) -> str:
        return f"ExportedComponent(file={self.file!r})"


class ExportedModel:
    """What an export returns, as the seed's ExportedModel: built when export() / export_for_generation() is
    called (errors raise there), into a private directory this object owns; `components` ({name:
    ExportedComponent}), `program` (a single-graph export's), called like the model through transformers.exporters'
    runners; `save_pretrained(dir)` writes the files (a new directory whole or not at all; over an existing one,
    the library's transaction writes the export again: a reader sees the previous export or this one)."""

    def __init__(self, exporter, model, config_json, inputs, generation, generation_config, multi_token_decode):
        import shutil
        import tempfile
        import weakref

        self._exporter, self._model, self._config = exporter, model, config_json
        self._inputs, self._generation = inputs, generation
        self._generation_config, self._multi = generation_config, multi_token_decode
        self._keep: list = []
        self._seed = None
        self._home = tempfile.mkdtemp(prefix="hfx-export-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._home, True)
        self._built = Path(self._home) / "export"
        self._write(self._built)
        manifest = json.loads((self._built / "export.json").read_text())
        self.export_format = manifest["export_format"]
        self.generation_config = generation_config
        self.components = {name: ExportedComponent(self._built, self.export_format, entry)
                           for name, entry in manifest["components"].items()}

    def __repr__(self) -> str:
        return f"ExportedModel(format={self.export_format!r}, components={list(self.components)})"

    def _write(self, directory) -> None:
        """The export into `directory` through the C library (its transaction)."""
        err = _Error()
        model, cfg, exporter, samples = _P(), _P(), _P(), None
        try:
            model = _open_model(self._model, self._keep)
            _check(_lib.hfx_export_config_from_json(self._config.encode(), ctypes.byref(cfg), ctypes.byref(err)), err)
            _check(_lib.hfx_exporter_from_config(cfg, ctypes.byref(exporter), ctypes.byref(err)), err)
            samples = _samples(self._inputs)
            out = os.fspath(directory).encode()
            if self._generation:
                gen = self._generation_config
                gen_json = gen.to_json_string() if hasattr(gen, "to_json_string") else (json.dumps(gen) if gen else None)
                st = _lib.hfx_export_for_generation(exporter, model, samples, cfg,
                                                    gen_json.encode() if gen_json else None, int(self._multi), out,
                                                    ctypes.byref(err))
            else:
                st = _lib.hfx_export(exporter, model, samples, cfg, out, ctypes.byref(err))
            _check(st, err)
            for line in (_lib.hfx_exporter_warnings(exporter) or b"").decode().splitlines():
                warnings.warn(f"hfx: {line}", stacklevel=3)
        finally:
            _lib.hfx_sample_inputs_free(samples)
            _lib.hfx_exporter_free(exporter)
            _lib.hfx_export_config_free(cfg)
            _lib.hfx_model_close(model)
            self._keep.clear()

    def save_pretrained(self, save_directory) -> None:
        import shutil

        target = Path(save_directory)
        if target.exists():  # (a previous export there: replaced by the library's transaction)
            self._write(target)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.parent / f".{target.name}.hfx-{os.getpid()}-{id(self):x}"
        try:
            shutil.copytree(self._built, partial)
            os.rename(partial, target)  # the whole directory at once
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    save = save_pretrained

    def _single(self) -> str:
        if len(self.components) != 1:
            raise ValueError(f"this export has {len(self.components)} components ({list(self.components)}): "
                             "`.program` and calling it need a single-graph export (export()); take a component's "
                             "program from `.components[name].program`")
        return next(iter(self.components))

    @property
    def program(self):
        """The backend's own program, for a single-graph export."""
        return self.components[self._single()].program

    def to(self, device=None, **runner_kwargs) -> "ExportedModel":
        """Load the export on its runtime through transformers.exporters' runners (the seed's from_pretrained:
        `config={"INFERENCE_PRECISION_HINT": "f32"}` for OpenVINO's exact arithmetic, `providers` for ONNX
        Runtime, ...)."""
        try:
            from transformers.exporters import ExportedModel as SeedModel
        except ImportError as e:
            raise ImportError(f"hfx: an export is run by transformers.exporters' runners (transformers ≥ 5.24 and "
                              f"the {self.export_format} runtime): {e}") from e
        # (this object built those files: loading them runs no one else's code)
        self._seed = SeedModel.from_pretrained(self._built, device=device, trust_remote_code=True, **runner_kwargs)
        return self

    @classmethod
    def from_pretrained(cls, directory, *, device=None, **runner_kwargs):
        """A saved export, hfx's or transformers.exporters' alike, loaded by transformers.exporters (its programs on
        their runtime, ready to run): the seed's ExportedModel."""
        try:
            from transformers.exporters import ExportedModel as SeedModel
        except ImportError as e:
            raise ImportError(f"hfx: a saved export is loaded by transformers.exporters (transformers ≥ 5.24): {e}") from e
        return SeedModel.from_pretrained(directory, device=device, **runner_kwargs)

    def __call__(self, *args, **kwargs):
        """Run a single-graph export as the model (transformers.exporters' runner: the model's output class)."""
        self._single()
        if self._seed is None:
            self.to()
        return self._seed(*args, **kwargs)


def _samples(inputs):
    """The sample shapes (only input_ids' matters: batch and sequence) for a static export."""
    if not inputs or "input_ids" not in inputs:
        return None
    shape = tuple(int(d) for d in inputs["input_ids"].shape)
    samples = _lib.hfx_sample_inputs_new()
    err = _Error()
    arr = (ctypes.c_int64 * len(shape))(*shape)
    _check(_lib.hfx_sample_inputs_add(samples, b"input_ids", _DTYPE_I64, len(shape), arr, ctypes.byref(err)), err)
    return samples


class HfExporter:
    """The seed's exporter interface: export() and export_for_generation()."""

    config_class = OnnxConfig

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def _config(self, config, sample_inputs=None):
        """The export config's JSON (a format may complete it from the sample: ExecutorchExporter's bounds)."""
        return _config_json(config if config is not None else self.config_class())

    def export(self, model, sample_inputs=None, config=None) -> ExportedModel:
        return ExportedModel(self, model, self._config(config, sample_inputs), sample_inputs, False, None, False)

    def export_for_generation(self, model, sample_inputs=None, config=None, *, generation_config=None,
                              multi_token_decode: bool = False) -> ExportedModel:
        text = self._config(config, sample_inputs)
        d = json.loads(text)
        parts = d.values() if "export_format" not in d else [d]
        for part in parts:  # the seed's users run the seed's decode loops: its names by default
            part.setdefault("io", "seed")
        return ExportedModel(self, model, json.dumps(d), sample_inputs, True, generation_config, multi_token_decode)


class OnnxExporter(HfExporter):
    config_class = OnnxConfig


class OpenVINOExporter(HfExporter):
    config_class = OpenVINOConfig


class DynamoExporter(HfExporter):
    """torch.export programs: model.pt2, or prefill.pt2 + decode.pt2 called as the seed's are
    (keywords, transformers' cache objects, a ModelOutput; a static cache written in place)."""

    config_class = DynamoConfig


def _seed_executorch_bounds(config_json: str, sample_inputs) -> str:
    """`dynamic: true` without dynamic_shapes, as the seed's ExecutorchExporter bounds it (ExecuTorch plans memory for
    each dim's largest size): torch.export's Dim.AUTO pins the sample's dims of size 0 or 1, and the seed caps each
    other one at max(4 · 2, 4 · sample, floor), the floor round(2^24^(1/N)) within [64, 1024] for its N such dims
    (`_fix_range_constraints`). The sample's input_ids say them (the other sequence inputs share its axes, as torch
    links them). Without one (a checkpoint directory) the config is left as it is: hfx then asks for the bounds."""
    d = json.loads(config_json)
    parts = d.values() if "export_format" not in d else [d]
    ids = (sample_inputs or {}).get("input_ids")
    for part in parts:
        if not part.get("dynamic") or part.get("dynamic_shapes") is not None or not hasattr(ids, "shape"):
            continue
        sizes = [int(n) for n in ids.shape]
        floor = max(64, min(1024, round(2 ** (24 / max(sum(n > 1 for n in sizes), 1)))))
        part["dynamic_shapes"] = {"input_ids": {str(axis): None if n <= 1 else {"max": max(4 * 2, 4 * n, floor)}
                                                for axis, n in enumerate(sizes)}}
    return json.dumps(d)


class ExecutorchExporter(HfExporter):
    """ExecuTorch programs: model.pte, or prefill.pte + decode.pte (or one multi-token decode.pte) in the seed's
    method layout (docs/GENERATION.md, ExecuTorch in the seed profile); max_cache_len (the generation config's)
    bounds every length; `dynamic=True` alone bounds the sample's dims as the seed does."""

    config_class = ExecutorchConfig

    def _config(self, config, sample_inputs=None):
        return _seed_executorch_bounds(super()._config(config), sample_inputs)


class AutoHfExporter:
    """The exporter for a config's export_format, as the seed's AutoHfExporter."""

    @classmethod
    def from_config(cls, export_config, **kwargs) -> HfExporter:
        fmt = export_config.get("export_format") if isinstance(export_config, dict) else export_config.export_format
        exporters = {"onnx": OnnxExporter, "openvino": OpenVINOExporter, "dynamo": DynamoExporter,
                     "executorch": ExecutorchExporter}
        if fmt not in exporters:
            raise HfxError(3, f"export_format {fmt!r} is not available in hfx (available: {', '.join(exporters)})")
        return exporters[fmt](**kwargs)
