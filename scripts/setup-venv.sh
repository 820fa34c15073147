#!/usr/bin/env bash
# Create (or bring up to date) the Python oracle virtualenv at ${HFX_VENV:-$HOME/.cache/hfx/venv}
# from tests/oracle/requirements.txt. A present, up-to-date venv is reused untouched: a stamp file
# records the hash of the requirements it was built from.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${HFX_VENV:-$HOME/.cache/hfx/venv}
req=$here/tests/oracle/requirements.txt
want=$(sha256sum "$req" | cut -d' ' -f1)
stamp=$venv/.hfx-requirements.sha256
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
py=${HFX_PYTHON:-python3}
echo "setup-venv: preparing $venv (first run downloads torch and friends; a few minutes)" >&2
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
