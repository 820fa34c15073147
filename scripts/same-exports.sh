#!/usr/bin/env bash
# Prove that a change leaves every export byte-identical. Builds the binary of BASE (default HEAD)
# and of NEW (default: this work tree) in scratch worktrees, runs the oracle suite through
# scripts/hfx-twin so that every export the tests make is written by both, and prints the tally.
#   scripts/same-exports.sh [BASE [NEW]] [-- pytest args...]
# Exit 0 when no export differs; the log (build/same-exports.log) lists each export: SAME, or
# DIFF with the files that differ, or RC when the exit codes differ. test_transaction.py is left
# out: it signals, races and truncates hfx, which the stand-in binary cannot pass on.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
base=HEAD new=
[ $# -gt 0 ] && [ "$1" != -- ] && { base=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { new=$1; shift; }
[ "${1:-}" = -- ] && shift
venv=${HFX_VENV:-$HOME/.cache/hfx/venv}
work=$(mktemp -d "${TMPDIR:-/tmp}/hfx-same.XXXXXX")
cleanup() {
    for w in "$work"/base "$work"/new; do git -C "$here" worktree remove --force "$w" >/dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT
build_at() { # commit, folder → folder/build/hfx
    git -C "$here" worktree add -q --detach "$2" "$1"
    cmake -S "$2" -B "$2/build" -DCMAKE_BUILD_TYPE=Release -DHFX_BUILD_TESTS=OFF >/dev/null
    cmake --build "$2/build" -j "${JOBS:-2}" >/dev/null
}
build_at "$base" "$work/base"
if [ -n "$new" ]; then
    build_at "$new" "$work/new"
    new_bin=$work/new/build/hfx
else
    make -C "$here" --no-print-directory build >/dev/null
    new_bin=$here/build/hfx
fi
mkdir -p "$here/build"
log=${HFX_TWIN_LOG:-$here/build/same-exports.log}
: >"$log"
# the Python package's tests load the library beside the binary under test (not beside the twin)
lib=$(ls "$(dirname "$new_bin")"/libhfx.so.*.*.* 2>/dev/null | tail -n 1)
HFX_LIBRARY=$lib HFX_TWIN_OLD=$work/base/build/hfx HFX_TWIN_NEW=$new_bin HFX_TWIN_LOG=$log HFX_BIN=$here/scripts/hfx-twin \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests/oracle" \
    --ignore="$here/tests/oracle/test_transaction.py" "$@" ||
    echo "same-exports: the oracle suite failed (see above)" >&2
same=$(grep -c '^SAME' "$log" || true)
files=$(awk '/^SAME/ {n += $2} END {print n + 0}' "$log")
bad=$(grep -c '^DIFF\|^RC' "$log" || true)
skipped=$(grep -c '^SKIP' "$log" || true)
echo "same-exports: $same exports of ${new:-the work tree} byte-identical to $base ($files files); $bad differ;" \
     "$skipped not comparable (hostile output paths)"
grep '^DIFF\|^RC' "$log" | head -50 || true
[ "$bad" = 0 ]
