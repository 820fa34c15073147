#!/usr/bin/env bash
# `make fuzz`: build every libFuzzer harness in tests/fuzz (clang, ASan + UBSan), seed each corpus
# from the project's own files, and run each for FUZZ_SECONDS (default 60) on FUZZ_JOBS cores
# (default 1). Prints every harness's final stats; exits non-zero on any finding (the crashing
# input is kept under build-fuzz/<harness>.crashes/). Corpora live in build-fuzz/ and grow from run
# to run; nothing of them is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
hfx=${HFX_BIN:-build/hfx}
out=build-fuzz
mkdir -p "$out"
src=$(ls src/*/*.c src/*/*/*.c)

# seeds: the example checkpoint, an export of it in each format, export configs
seed=$(mktemp -d)
trap 'rm -rf "$seed"' EXIT
"$hfx" export examples/tiny-llama "$seed/onnx" --format onnx --dynamic --quiet
"$hfx" export examples/tiny-llama "$seed/ov" --format openvino --dynamic --quiet
printf '{"export_format": "executorch", "dynamic_shapes": {"input_ids": {"0": {"name": "b", "max": 2}, "1": {"name": "s", "max": 8}}}}' \
    >"$seed/et.json"
"$hfx" export examples/tiny-llama "$seed/et" --config "$seed/et.json" --quiet
seed_into() { # harness, name, selector byte (or ""), file
    mkdir -p "$out/$1.corpus"
    { [ -n "$3" ] && printf "\\x$3"; cat "$4"; } >"$out/$1.corpus/seed-$2"
}
seed_into fuzz_safetensors example "" examples/tiny-llama/model.safetensors
for f in tests/fuzz/seeds/*.gguf; do # a small GGUF file: metadata, plain and block tensors
    seed_into fuzz_gguf "$(basename "$f" .gguf)" "" "$f"
done
# pre-quantized weights (safetensors written with torch): the selector byte picks the quantization_config
seed_into fuzz_prequant fp8 00 tests/fuzz/seeds/prequant-fp8.safetensors
seed_into fuzz_prequant mxfp4 02 tests/fuzz/seeds/prequant-mxfp4.safetensors
seed_into fuzz_prequant ct4 03 tests/fuzz/seeds/prequant-ct4.safetensors
for f in "$seed/onnx/export_config.json" "$seed/ov/export_config.json"; do
    seed_into fuzz_export_config "$(basename "$(dirname "$f")")" "" "$f"
done
printf '{"prefill": {"export_format": "onnx", "dynamic": true}, "decode": {"export_format": "onnx", "dynamic": true, "dynamic_shapes": {"input_ids": {"0": {"name": "b", "min": 1, "max": 8}}}}}' \
    >"$seed/percomp.json"
seed_into fuzz_export_config percomp "" "$seed/percomp.json"
seed_into fuzz_checkpoint config 00 examples/tiny-llama/config.json
for f in tests/fuzz/seeds/config-*.json; do # families whose configs have keys of their own, nested configs
    seed_into fuzz_checkpoint "$(basename "$f" .json)" 00 "$f"
done
seed_into fuzz_checkpoint generation 01 examples/tiny-llama/generation_config.json
printf '{"metadata": {"total_size": 1}, "weight_map": {"model.embed_tokens.weight": "model.safetensors"}}' >"$seed/index.json"
seed_into fuzz_checkpoint index 02 "$seed/index.json"
for f in tests/fuzz/seeds/tokenizer-*.json; do # tokenizers the oracle tests build, one per kind
    seed_into fuzz_tokenizer "$(basename "$f" .json)" 00 "$f"
done
seed_into fuzz_tokenizer config 01 tests/fuzz/seeds/tokenizer_config-l3.json
seed_into fuzz_inspect onnx 00 "$seed/onnx/model.onnx"
seed_into fuzz_inspect xml 01 "$seed/ov/model.xml"
seed_into fuzz_inspect pte 02 "$seed/et/model.pte"

export HFX_FUZZ_WEIGHTS=$here/examples/tiny-llama/model.safetensors
status=0
for h in tests/fuzz/fuzz_*.c; do
    n=$(basename "$h" .c)
    extra=""
    [ "$n" = fuzz_inspect ] && extra="tools/inspect.c tools/inspect_pte.c"
    # shellcheck disable=SC2086
    clang -std=c11 -D_POSIX_C_SOURCE=200809L -D_FILE_OFFSET_BITS=64 -g -O1 \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -Iinclude -Isrc $src $extra "$h" -ljansson -lpcre2-8 -lz -lm -lpthread -o "$out/$n"
    mkdir -p "$out/$n.corpus" "$out/$n.crashes"
    dict=""  # the JSON harnesses: tokens and the keys hfx reads, so mutations stay parseable
    case $n in fuzz_checkpoint | fuzz_export_config | fuzz_tokenizer) dict=-dict=tests/fuzz/json.dict ;; esac
    echo "fuzz: $n for ${seconds}s on $jobs job(s)"
    # shellcheck disable=SC2086
    if ! "$out/$n" $dict -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" -print_final_stats=1 \
            -artifact_prefix="$out/$n.crashes/" "$out/$n.corpus" >"$out/$n.log" 2>&1; then
        status=1
        echo "fuzz: $n FOUND A PROBLEM (see $out/$n.log and $out/$n.crashes/)"
    fi
    cat fuzz-*.log >>"$out/$n.log" 2>/dev/null || true  # the workers' logs, with -jobs > 1
    rm -f fuzz-*.log
    grep -h "DONE" "$out/$n.log" | tail -"$jobs" || true
done
rm -rf /tmp/hfx-fuzz-ckpt-* /tmp/hfx-fuzz-inspect-*
exit $status
