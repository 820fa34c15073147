#!/usr/bin/env bash
# `make demo`: export the tiny Llama checkpoint shipped in examples/ to ONNX and show what was
# written and what the graph looks like.
set -euo pipefail
hfx=${1:-build/hfx}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/hfx-demo.XXXXXX")
echo "== hfx inspect examples/tiny-llama"
"$hfx" inspect "$here/examples/tiny-llama" | head -8
echo
echo "== hfx export examples/tiny-llama $out --format onnx --dynamic"
"$hfx" export "$here/examples/tiny-llama" "$out" --format onnx --dynamic
echo
echo "== written:"
ls -l "$out"
echo
echo "== hfx inspect $out"
"$hfx" inspect "$out"
