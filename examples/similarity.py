#!/usr/bin/env python3
"""Sentence similarity and reranking with an `hfx export` directory, in ONNX Runtime or OpenVINO (the export's
files say which).

    python examples/similarity.py OUT_DIR --text "a cat sat" --text "a dog ran"           # similarity matrix
    python examples/similarity.py OUT_DIR --query "pets" --text "a cat sat" --text "tax law"   # ranked by the query

An export of a sentence-transformers folder (a bi-encoder: its graph ends in `sentence_embedding`) embeds each text
(and the query): the cosine similarities are printed, one JSON row per text, or each text's similarity to the query.
An export of a cross-encoder (`*ForSequenceClassification` with one label: a reranker) scores each (query, text)
pair as one input: its logit is the score; so does the export of a sentence-transformers CrossEncoder over a causal
LM (a Qwen3-Reranker-style folder: Transformer, then LogitScore), whose graph ends in `scores` (logit[true token] −
logit[false token] at the last position, before the library's activation). With --query the texts are printed best
first as JSON lines {"text", "score"}; exit code 2 for bad input.

hfx exports graphs, not tokenizers: the texts become input_ids, attention_mask (and token_type_ids where the graph
takes them) by the model's own tokenizer, read from the export (its tokenizer files are copied there). The graph's
inputs are fed by name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

PROG = "similarity"


class UsageError(Exception):
    """Bad input: the message goes to stderr, the exit code is 2."""


class Graph:
    """The export's `model` graph in ONNX Runtime (model.onnx) or OpenVINO (model.xml)."""

    def __init__(self, out: Path):
        if (out / "model.onnx").exists():
            import onnxruntime as ort
            session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
            self.inputs = [i.name for i in session.get_inputs()]
            self.outputs = [o.name for o in session.get_outputs()]
            self.run = lambda feed, name: session.run([name], feed)[0]
        elif (out / "model.xml").exists():
            import openvino as ov
            compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            self.inputs = [i.get_any_name() for i in compiled.inputs]
            self.outputs = [o.get_any_name() for o in compiled.outputs]
            self.run = lambda feed, name: np.array(compiled(feed)[compiled.output(name)])
        else:
            raise UsageError(f"{out}: no model.onnx or model.xml (export with --format onnx or openvino)")


def _feed(graph: Graph, encoded) -> dict:
    missing = [n for n in graph.inputs if n not in encoded]
    if missing:
        raise UsageError(f"the graph takes {missing}, which the tokenizer does not give")
    return {n: np.asarray(encoded[n], dtype=np.int64) for n in graph.inputs}


def embed(out: Path, texts: list[str]) -> np.ndarray:
    """The sentence embeddings [n, dim] of `texts` by a bi-encoder export."""
    from transformers import AutoTokenizer
    graph = Graph(out)
    if "sentence_embedding" not in graph.outputs:
        raise UsageError(f"{out}: the graph has no sentence_embedding output (a sentence-transformers folder's export "
                         f"has; it has {graph.outputs})")
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    return graph.run(_feed(graph, tokenizer(texts, padding=True, return_tensors="np")), "sentence_embedding")


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities [len(a), len(b)] (sentence-transformers' default similarity)."""
    a = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
    return a @ b.T


def rerank_scores(out: Path, query: str, texts: list[str]) -> np.ndarray:
    """Each (query, text) pair's logit [n] by a one-label cross-encoder export, or its score (logit[true] −
    logit[false] at the last position) by a sentence-transformers CrossEncoder over a causal LM (its LogitScore),
    whose pairs are padded on the left as the library pads them."""
    from transformers import AutoTokenizer
    graph = Graph(out)
    if graph.outputs == ["scores"]:
        st_config = out / "config_sentence_transformers.json"
        st = json.loads(st_config.read_text()) if st_config.is_file() else {}
        if st.get("prompts") or st.get("default_prompt_name"):
            raise UsageError(f"{st_config}: the folder's prompts are not applied by this example")
        tokenizer = AutoTokenizer.from_pretrained(str(out), padding_side="left")
        scores = graph.run(_feed(graph, tokenizer([query] * len(texts), texts, padding=True, return_tensors="np")),
                           "scores")
        return scores[:, 0]
    if graph.outputs != ["logits"]:
        raise UsageError(f"{out}: a cross-encoder's export has one output, logits or scores (it has {graph.outputs})")
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    logits = graph.run(_feed(graph, tokenizer([query] * len(texts), texts, padding=True, return_tensors="np")),
                       "logits")
    if logits.ndim != 2 or logits.shape[1] != 1:
        raise UsageError(f"{out}: a reranker scores with one label; its logits are {list(logits.shape)}")
    return logits[:, 0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="the hfx export directory")
    p.add_argument("--text", action="append", required=True, help="a text (repeat for more)")
    p.add_argument("--query", help="rank the texts by this query")
    a = p.parse_args(argv)
    try:
        outputs = Graph(a.out).outputs
        if "sentence_embedding" in outputs:
            if a.query is None:
                for row in cosine(*(2 * [embed(a.out, a.text)])):
                    print(json.dumps([round(float(v), 6) for v in row]))
                return 0
            e = embed(a.out, [a.query] + a.text)
            scores = cosine(e[:1], e[1:])[0]
        else:
            if a.query is None:
                raise UsageError("a cross-encoder scores pairs: give --query")
            scores = rerank_scores(a.out, a.query, a.text)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    for i in np.argsort(-scores, kind="stable"):
        print(json.dumps({"text": a.text[i], "score": round(float(scores[i]), 6)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
