#!/usr/bin/env bash
# `pip install ./python` as docs/python.md gives it: into a fresh virtual environment of
# Debian's python3, offline, from the build tree ctest runs in; then the Python API's tests
# against the installed package. Usage: pip_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
EACGM_BUILD_DIR="$build" "$tmp/venv/bin/pip" install --quiet --no-index --no-build-isolation "$src/python"

# From outside the checkout, so nothing but the installed package can be imported.
cd "$tmp"
"$tmp/venv/bin/python" - <<'PY'
import sys
import eacgm
assert eacgm.__file__.startswith(sys.prefix + "/"), f"eacgm imported from {eacgm.__file__}, not {sys.prefix}"
assert eacgm._native.__name__ == "eacgm._eacgm", f"the backend is {eacgm._native.__name__}, not the extension"
print("installed eacgm", eacgm.__version__, "at", eacgm.__file__)
PY

# The tests of the package in this process (test_examples and test_readme run the build's
# copy in subprocesses by design; python_api runs them).
EACGM_TEST_INSTALLED=1 EACGM_TEST_BIN_DIR="$build" PYTHONDONTWRITEBYTECODE=1 \
  "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$src/tests/python/test_trace.py" "$src/tests/python/test_agent.py" "$src/tests/python/test_client.py" \
  "$src/tests/python/test_compat.py" "$src/tests/python/test_bpf_text.py"
