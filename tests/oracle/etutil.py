"""ExecuTorch in the tests: its Python runtime, flatc and transformers' ExecutorchExporter live in
a virtualenv layered over the oracle's (${HFX_VENV}-executorch, made by scripts/setup-venv.sh),
because executorch pins packages of its own. The tests stay in the oracle's interpreter and send
work to one long-lived worker process in that venv: load a .pte, run a method on numpy inputs,
return its outputs. A missing venv is an error, never a skip."""

from __future__ import annotations

import atexit
import json
import os
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

VENV = Path(str(os.environ.get("HFX_VENV", Path.home() / ".cache" / "hfx" / "venv")) + "-executorch")
PYTHON = VENV / "bin" / "python"

WORKER = r"""
import json, sys, traceback
import numpy as np, torch
from executorch.runtime import Runtime
runtime = Runtime.get()
programs = {}
for line in sys.stdin:
    req = json.loads(line)
    try:
        if req["cmd"] == "run":
            key = (req["pte"], req["method"])
            if key not in programs or programs[key][0] != req["mtime"]:
                program = runtime.load_program(req["pte"])
                programs[key] = (req["mtime"], program, program.load_method(req["method"]))
            method = programs[key][2]
            data = np.load(req["inputs"])
            outs = method.execute([torch.from_numpy(data[f"arg{i}"]) for i in range(len(data.files))])
            np.savez(req["out"], *[o.numpy() if isinstance(o, torch.Tensor) else np.asarray(o) for o in outs])
            reply = {"ok": True}
        elif req["cmd"] == "python":
            scope = {"args": req["args"]}
            exec(req["code"], scope)
            reply = {"ok": True, "result": scope.get("result")}
        else:
            reply = {"error": "unknown command"}
    except Exception as e:
        reply = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
    sys.stdout.write("@@" + json.dumps(reply) + "\n")
    sys.stdout.flush()
"""


LOOP = Path(__file__).resolve().parents[2] / "examples" / "generate_executorch.py"

# the example loop, loaded once into the worker, and its Export once per directory (by mtime)
GENERATE = r"""
import importlib.util, os, sys
import numpy as np
loop_path, out_dir, rows, n, eos, pad, out = args
if "generate_executorch" not in sys.modules:
    spec = importlib.util.spec_from_file_location("generate_executorch", loop_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["generate_executorch"] = module
loop = sys.modules["generate_executorch"]
if not hasattr(loop, "exports"):  # (imported first by another example in this worker: generate_vlm's)
    loop.exports = {}
key = (out_dir, os.stat(os.path.join(out_dir, "export.json")).st_mtime_ns)
if key not in loop.exports:
    loop.exports[key] = loop.Export(loop.Path(out_dir))
if isinstance(rows, dict):  # a waveform encoder's input_values and attention_mask
    rows = {k: np.asarray(v, np.float32 if k == "input_values" else np.int64) for k, v in rows.items()}
elif rows and isinstance(rows[0], list) and rows[0] and isinstance(rows[0][0], list):  # Whisper's log-mel features
    rows = np.asarray(rows, np.float32)
tokens, logits = loop.generate(loop.exports[key], rows, n, eos, pad)
np.savez(out, tokens=tokens, logits=logits)
"""


class ExecutorchError(RuntimeError):
    pass


class Worker:
    """One executorch process for the session; runtime errors come back with its log."""

    def __init__(self):
        if not PYTHON.exists():
            raise ExecutorchError(f"no executorch virtualenv at {VENV}: run scripts/setup-venv.sh (make venv)")
        self.dir = Path(tempfile.mkdtemp(prefix="hfx-et-"))
        self.log = open(self.dir / "stderr.log", "w+")
        self.proc = subprocess.Popen([str(PYTHON), "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        self.n = 0
        atexit.register(self.close)

    def _ask(self, req: dict) -> dict:
        start = self.log.tell()
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                self.log.seek(0)
                raise ExecutorchError(f"the executorch worker died: {self.log.read()[-4000:]}")
            if line.startswith("@@"):
                reply = json.loads(line[2:])
                break
        if "error" in reply:
            self.log.flush()
            self.log.seek(start)
            raise ExecutorchError(f"{reply['error']}\n{self.log.read()[-3000:]}\n{reply.get('trace', '')}")
        self.log.seek(0, 2)
        return reply

    def run(self, pte: os.PathLike, inputs: list, method: str = "forward") -> list:
        """The method's outputs for positional numpy inputs."""
        self.n += 1
        feed, out = self.dir / f"in{self.n}.npz", self.dir / f"out{self.n}.npz"
        np.savez(feed, **{f"arg{i}": np.ascontiguousarray(x) for i, x in enumerate(inputs)})
        self._ask({"cmd": "run", "pte": str(pte), "method": method, "mtime": os.stat(pte).st_mtime_ns,
                   "inputs": str(feed), "out": str(out)})
        with np.load(out) as z:
            got = [z[f"arr_{i}"] for i in range(len(z.files))]
        feed.unlink(), out.unlink()
        return got

    def python(self, code: str, args=None):
        """Run `code` in the executorch venv (`args` given, `result` returned, both JSON)."""
        return self._ask({"cmd": "python", "code": code, "args": args}).get("result")

    def python_arrays(self, code: str, args) -> dict:
        """Run `code` in the executorch venv with `args` + [a scratch .npz path] as `args`; the arrays it saves there."""
        self.n += 1
        out = self.dir / f"arrays{self.n}.npz"
        self.python(code, [*args, str(out)])
        with np.load(out) as z:
            got = {k: z[k] for k in z.files}
        out.unlink()
        return got

    def generate(self, out_dir: os.PathLike, rows, n: int, eos_ids=(), pad_id: int = 0):
        """examples/generate_executorch.py's greedy loop on an export directory, in this worker:
        (tokens, one list per row; logits [steps, B, vocab])."""
        self.n += 1
        out = self.dir / f"gen{self.n}.npz"
        self.python(GENERATE, [str(LOOP), str(out_dir), rows, n, list(eos_ids), pad_id, str(out)])
        with np.load(out) as z:
            tokens, logits = z["tokens"], z["logits"]
        out.unlink()
        return [list(map(int, t)) for t in tokens], logits

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


_worker = None


def worker() -> Worker:
    global _worker
    if _worker is None:
        _worker = Worker()
    return _worker


def _flatc(schema: str, binary: Path, out_dir: os.PathLike) -> dict:
    """`binary` decoded by the wheel's flatc against `schema` (a path in the executorch package),
    strictly: it fails on any byte the schema does not explain."""
    site = worker().python("import executorch; result = list(executorch.__path__)[0]")
    flatc = Path(site) / "data" / "bin" / "flatc"
    proc = subprocess.run([str(flatc), "--json", "--raw-binary", "--strict-json", "--defaults-json", "-o",
                           str(out_dir), str(Path(site) / schema), "--", str(binary)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = (Path(out_dir) / (binary.stem + ".json")).read_text()
    # flatc writes non-finite doubles bare (-inf, nan), which JSON has no words for
    for word, value in (("-inf", "-1e999"), ("inf", "1e999"), ("nan", "0")):
        text = text.replace(f": {word}\n", f": {value}\n")
    return json.loads(text)


def flatc_xnngraph(payload: bytes, out_dir: os.PathLike) -> dict:
    """An XNNPACK delegate's payload: its header ("XH00" at byte 4), then the XNNGraph flatbuffer
    at the offset the header gives, decoded against runtime_schema.fbs."""
    assert payload[4:8] == b"XH00", payload[:16]
    offset, size = struct.unpack_from("<II", payload, 10)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "xnngraph.bin").write_bytes(payload[offset:offset + size])
    return _flatc("backends/xnnpack/serialization/runtime_schema.fbs", out_dir / "xnngraph.bin", out_dir)


def flatc_json(pte: os.PathLike, out_dir: os.PathLike) -> dict:
    """The program decoded by the wheel's flatc against its program.fbs."""
    return _flatc("exir/_serialize/program.fbs", Path(pte), out_dir)
