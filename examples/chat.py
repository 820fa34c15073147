#!/usr/bin/env python3
"""One chat turn with an exported folder in onnxruntime-genai or OpenVINO GenAI: the folder's own chat template and
tokenizer, greedy decoding, the reply streamed to stdout.

    hfx export model.gguf out-onnx --format onnx --for-generation --multi-token-decode --dynamic
    python examples/chat.py out-onnx "Write a Python function that reverses a string."

    hfx export model.gguf out-ov --format openvino --for-generation --dynamic
    python examples/chat.py out-ov "Write a Python function that reverses a string."

The runtime follows the folder: genai_config.json → onnxruntime-genai, openvino_model.xml → OpenVINO GenAI (f32
inference, as hfx's tests run it). --max-new-tokens N (default 128).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def chat_onnxruntime_genai(folder: Path, text: str, max_new_tokens: int) -> None:
    import onnxruntime_genai as og
    model = og.Model(str(folder))
    tokenizer = og.Tokenizer(model)
    prompt = tokenizer.apply_chat_template(json.dumps([{"role": "user", "content": text}]),
                                           add_generation_prompt=True)
    ids = tokenizer.encode(prompt)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(ids) + max_new_tokens)
    generator = og.Generator(model, params)
    generator.append_tokens(ids)
    stream = tokenizer.create_stream()
    while not generator.is_done():
        generator.generate_next_token()
        print(stream.decode(generator.get_next_tokens()[0]), end="", flush=True)
    print()


def chat_openvino_genai(folder: Path, text: str, max_new_tokens: int) -> None:
    import openvino_genai as ov_genai
    pipe = ov_genai.LLMPipeline(str(folder), "CPU", INFERENCE_PRECISION_HINT="f32")
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = max_new_tokens
    config.do_sample = False
    pipe.generate(text, config, lambda piece: print(piece, end="", flush=True) and False)
    print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("text")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    a = ap.parse_args()
    if (a.folder / "genai_config.json").is_file():
        chat_onnxruntime_genai(a.folder, a.text, a.max_new_tokens)
    elif (a.folder / "openvino_model.xml").is_file():
        chat_openvino_genai(a.folder, a.text, a.max_new_tokens)
    else:
        print(f"{a.folder}: neither genai_config.json (an ONNX --for-generation --multi-token-decode export) nor "
              "openvino_model.xml (an OpenVINO --for-generation export)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
