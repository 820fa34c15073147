#!/usr/bin/env python3
"""Speech to text with an `hfx export` directory of a CTC model (Wav2Vec2ForCTC, HubertForCTC, UniSpeechForCTC,
UniSpeechSatForCTC, Data2VecAudioForCTC, ParakeetForCTC), in ONNX Runtime or OpenVINO (the export's files say which).

    python examples/transcribe_ctc.py OUT_DIR speech.wav [more.wav ...]

The WAV files (16-bit PCM, mono, at the feature extractor's sampling rate) are one batch; one transcription is
printed per file, one line each; --print-logits FILE.npz saves the logits [batch, frames, vocab]; exit code 2 for
bad input.

hfx exports graphs, not processors: the waveforms become input_values (normalized per utterance, zero-padded to
the longest) and, where the model takes one, attention_mask by transformers' feature extractor, read from the
export's preprocessor_config.json (copied from the checkpoint). The graph gives CTC logits per frame (one frame
per 320 samples for wav2vec 2.0's feature encoder). The greedy CTC decode is here: each frame's most likely token,
runs of one token merged, the blank (the tokenizer's pad token) dropped, then the tokens spelled out by the
model's tokenizer (Wav2Vec2CTCTokenizer: its word delimiter "|" becomes a space). Parakeet's graph takes log-mel
input_features and attention_mask (ParakeetFeatureExtractor's); its frames past each file's subsampled length are
blank, as ParakeetForCTC.generate masks them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from decode_loop import UsageError, read_wav  # noqa: E402

PROG = "transcribe_ctc"


class Graph:
    """The export's `model` graph in ONNX Runtime (model.onnx) or OpenVINO (model.xml)."""

    def __init__(self, out: Path):
        if (out / "model.onnx").exists():
            import onnxruntime as ort
            self.session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
            self.inputs = [i.name for i in self.session.get_inputs()]
            self.run = lambda feed: self.session.run(["logits"], feed)[0]
        elif (out / "model.xml").exists():
            import openvino as ov
            compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            self.inputs = [i.get_any_name() for i in compiled.inputs]
            self.run = lambda feed: np.array(compiled(feed)[compiled.output("logits")])
        else:
            raise UsageError(f"{out}: no model.onnx or model.xml (export with --format onnx or openvino)")
        if self.inputs[0] not in ("input_values", "input_features"):
            raise UsageError(f"{out}: the graph takes {self.inputs}, not a CTC model's input_values or input_features")


def greedy_ctc(logits: np.ndarray, blank: int) -> list[list[int]]:
    """Each row's best path: the most likely token per frame, repeats merged, blanks dropped."""
    best = logits.argmax(-1)
    rows = []
    for path in best:
        keep = np.ones(len(path), dtype=bool)
        keep[1:] = path[1:] != path[:-1]
        rows.append([int(t) for t in path[keep] if t != blank])
    return rows


def blank_past(out: Path, logits: np.ndarray, frames: np.ndarray, blank: int) -> np.ndarray:
    """Parakeet's logits [B, F, vocab] with every frame past each row's subsampled length made the blank's: the
    length through the subsampling's log2(subsampling_factor) strided convolutions (transformers'
    _get_subsampling_output_length)."""
    import json
    enc = json.loads((out / "config.json").read_text()).get("encoder_config", {})
    k, s = enc.get("subsampling_conv_kernel_size", 3), enc.get("subsampling_conv_stride", 2)
    n = np.asarray(frames, np.int64)
    for _ in range(int(np.log2(enc.get("subsampling_factor", 8)))):
        n = (n + (k - 1) // 2 * 2 - k) // s + 1
    past = np.arange(logits.shape[1])[None, :] >= n[:, None]
    logits = logits.copy()
    logits[past] = -np.inf
    logits[past, blank] = 0.0
    return logits


def transcribe(out: Path, audio: list[np.ndarray], print_logits: Path | None = None) -> list[str]:
    """The transcriptions of the waveforms `audio` (at the feature extractor's rate) by the export in `out`."""
    from transformers import AutoFeatureExtractor, AutoTokenizer
    graph = Graph(out)
    extractor = AutoFeatureExtractor.from_pretrained(str(out))
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    prepared = extractor(audio, sampling_rate=extractor.sampling_rate, padding=True, return_tensors="np",
                         return_attention_mask="attention_mask" in graph.inputs)
    first = graph.inputs[0]
    feed = {first: prepared[first].astype(np.float32)}
    if "attention_mask" in graph.inputs:
        feed["attention_mask"] = prepared.attention_mask.astype(np.int64)
    logits = graph.run(feed)
    if print_logits:
        np.savez(print_logits, logits=logits)
    if first == "input_features":  # Parakeet: the frames past each file's subsampled length are blank
        logits = blank_past(out, logits, feed["attention_mask"].sum(-1), tokenizer.pad_token_id)
    rows = greedy_ctc(logits, tokenizer.pad_token_id)
    # the tokens as the tokenizer spells them: its word delimiter becomes a space (already merged, nothing to group)
    return [tokenizer.decode(ids, group_tokens=False) for ids in rows]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="the hfx export directory")
    p.add_argument("audio", type=Path, nargs="+", help="16-bit mono WAV files, one batch")
    p.add_argument("--print-logits", type=Path, help="save the logits [batch, frames, vocab] to this .npz")
    a = p.parse_args(argv)
    try:
        import json
        pre = a.out / "preprocessor_config.json"
        if not pre.exists():
            raise UsageError(f"{a.out}: no preprocessor_config.json (the checkpoint's feature extractor)")
        rate = int(json.loads(pre.read_text()).get("sampling_rate", 16000))
        texts = transcribe(a.out, [read_wav(f, rate) for f in a.audio], a.print_logits)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    for t in texts:
        print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
