"""Fixtures of the Python API's tests: the build's binaries, test programs and probes.

Run by ctest (python_api) as `/usr/bin/python3 -m pytest tests/python` with
PYTHONPATH=build/python and EACGM_TEST_BIN_DIR=build; they need root (real eBPF). With
EACGM_TEST_INSTALLED=1 (python_pip_install) they test the package installed in the running
Python instead of build/python."""
import os
import pathlib
import subprocess
import sys

import pytest

BIN_DIR = pathlib.Path(os.environ.get("EACGM_TEST_BIN_DIR", pathlib.Path(__file__).parents[2] / "build"))
if not os.environ.get("EACGM_TEST_INSTALLED"):
    sys.path.insert(0, str(BIN_DIR / "python"))

NEST_TOML = """
[[probe]]
name = "nest_outer"
domain = "nest"
library = "libeacgm_nest.so*"
symbol = "nest_outer"
ret = "int64"
args = [{ name = "x", reg = 0, kind = "u32" }]

[[probe]]
name = "nest_inner"
domain = "nest"
library = "libeacgm_nest.so*"
symbol = "nest_inner"
ret = "int64"
args = [{ name = "x", reg = 0, kind = "u32" }]
"""

# nest_calls: outer(1) -> inner(1), inner(10), outer(2) -> inner(2), outer(3) -> inner(3),
# inner(20); each returns 2x (inner) or 2x + 1 (outer). Calls in order of entry:
NEST_CALLS = [("nest_outer", 1, 3), ("nest_inner", 1, 2), ("nest_inner", 10, 20), ("nest_outer", 2, 5),
              ("nest_inner", 2, 4), ("nest_outer", 3, 7), ("nest_inner", 3, 6), ("nest_inner", 20, 40)]


@pytest.fixture
def bin_dir():
    return BIN_DIR


@pytest.fixture
def nest_config(tmp_path):
    path = tmp_path / "nest.toml"
    path.write_text(NEST_TOML)
    return str(path)


class GatedProgram:
    """A test program started with --wait-file: it waits, having printed `ready PID`,
    until go() creates the file."""

    def __init__(self, argv, tmp_path):
        self.gate = tmp_path / "go"
        self.proc = subprocess.Popen(list(argv) + ["--wait-file", str(self.gate)], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = self.proc.pid

    def go(self):
        self.gate.write_text("1")

    def finish(self, timeout=30):
        out, _ = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out


@pytest.fixture
def gated(tmp_path):
    started = []

    def start(*argv):
        p = GatedProgram(argv, tmp_path)
        started.append(p)
        return p

    yield start
    for p in started:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.wait()
