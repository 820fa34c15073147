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
if ! { [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }; then
    py=${HFX_PYTHON:-python3}
    echo "setup-venv: preparing $venv (first run downloads torch and friends; a few minutes)" >&2
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
fi

# Side virtualenvs for references with pins of their own, layered over the oracle's: a .pth file
# names its site-packages, so they reuse its torch and openvino instead of downloading them.
side() { # name requirements-file
    local side=$venv-$1 req2=$here/tests/oracle/$2
    local want2
    want2=$(cat "$req" "$req2" | sha256sum | cut -d' ' -f1)
    if [ -x "$side/bin/python" ] && [ -f "$side/.hfx-requirements.sha256" ] &&
       [ "$(cat "$side/.hfx-requirements.sha256")" = "$want2" ]; then
        return 0
    fi
    echo "setup-venv: preparing $side" >&2
    rm -rf "$side"
    local base site
    base=$("$venv/bin/python" -c 'import sys; print(sys._base_executable)')
    "$base" -m venv "$side"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$site" > "$("$side/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/zz-oracle.pth"
    "$side/bin/python" -m pip install -q --disable-pip-version-check -r "$req2"
    echo "$want2" > "$side/.hfx-requirements.sha256"
}
side nncf requirements-nncf.txt
side executorch requirements-executorch.txt
