#!/usr/bin/env bash
# Prove that a change leaves every export byte-identical: build the binary of a base commit
# (default HEAD, i.e. the work tree's own base) in a scratch worktree, run the oracle suite
# through scripts/hfx-twin so every export the tests make is written by both binaries, and print
# the tally. Usage: scripts/same-exports.sh [BASE_COMMIT] [pytest args...]
# Exit 0 when no export differs; the log lists each one (SAME / DIFF / RC lines).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-HEAD}
shift || true
venv=${HFX_VENV:-$HOME/.cache/hfx/venv}
work=$(mktemp -d "${TMPDIR:-/tmp}/hfx-same.XXXXXX")
trap 'git -C "$here" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$here" worktree add -q --detach "$work/base" "$base"
cmake -S "$work/base" -B "$work/base/build" -DCMAKE_BUILD_TYPE=Release -DHFX_BUILD_TESTS=OFF >/dev/null
cmake --build "$work/base/build" -j "${JOBS:-2}" >/dev/null
make -C "$here" --no-print-directory build >/dev/null
log=${HFX_TWIN_LOG:-$here/build/same-exports.log}
: >"$log"
HFX_TWIN_OLD=$work/base/build/hfx HFX_TWIN_NEW=$here/build/hfx HFX_TWIN_LOG=$log HFX_BIN=$here/scripts/hfx-twin \
    "$venv/bin/python" -m pytest -q "$here/tests/oracle" "$@" || echo "same-exports: the oracle suite failed (see above)" >&2
same=$(grep -c '^SAME' "$log" || true)
files=$(awk '/^SAME/ {n += $2} END {print n + 0}' "$log")
bad=$(grep -vc '^SAME' "$log" || true)
echo "same-exports: $same exports byte-identical to $base ($files files); $bad differ:"
grep -v '^SAME' "$log" || true
[ "$bad" = 0 ]
