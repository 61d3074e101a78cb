"""eacgm.trace(): real eBPF on the nesting test program (tests/programs/nest_calls.c)."""
import json
import subprocess

import numpy as np
import pytest

import eacgm
from conftest import NEST_CALLS


def entry_order(calls):
    return [(c["function"], c["args"]["x"], c["ret"]) for c in sorted(calls, key=lambda c: c["ts_ns"])]


def test_dicts_have_every_call(bin_dir, nest_config):
    calls = []
    with eacgm.trace(command=[str(bin_dir / "nest_calls")], config=nest_config, probes=["nest"]) as t:
        for batch in t:
            assert isinstance(batch, list)
            calls += batch
    assert t.exit_code == 0
    assert entry_order(calls) == NEST_CALLS
    pid = t.command_pid
    assert {c["pid"] for c in calls} == {pid}
    assert {c["tid"] for c in calls} == {pid}
    assert {c["comm"] for c in calls} == {"nest_calls"}
    assert {c["domain"] for c in calls} == {"nest"}
    assert all(c["dur_ns"] > 0 and not c["nested"] for c in calls)
    # Nesting: each outer call's time holds the inner call it made.
    outer = {c["args"]["x"]: c for c in calls if c["function"] == "nest_outer"}
    for c in calls:
        if c["function"] == "nest_inner" and c["args"]["x"] in outer:
            o = outer[c["args"]["x"]]
            assert o["ts_ns"] < c["ts_ns"] and c["ts_ns"] + c["dur_ns"] < o["ts_ns"] + o["dur_ns"]


def test_numpy_batches(bin_dir, nest_config):
    arrays = []
    with eacgm.trace(command=[str(bin_dir / "nest_calls")], config=nest_config, probes=["nest"],
                     as_numpy=True) as t:
        for batch in t:
            assert isinstance(batch, np.ndarray)
            arrays.append(batch.copy())
        names = t.function_names(np.concatenate(arrays))
    records = np.concatenate(arrays)
    assert len(records) == len(NEST_CALLS)
    order = np.argsort(records["ts_ns"])
    got = [(names[i], int(records["args"][i][0]), int(records["ret"][i])) for i in order]
    assert got == NEST_CALLS
    assert set(records["pid"]) == {t.command_pid}
    assert records["has_exit"].all() and (records["dur_ns"] > 0).all()
    assert set(records["comm"]) == {b"nest_calls"}


def test_report_counts_equal_run_json(bin_dir, nest_config):
    with eacgm.trace(command=[str(bin_dir / "nest_calls")], config=nest_config, probes=["nest"]) as t:
        t.wait()
    ours = {f["function"]: f["calls"] for f in t.report()["functions"]}
    run = subprocess.run([str(bin_dir / "eacgm"), "--config", nest_config, "run", "--json", "--mode", "per-call",
                          "--probes", "nest", "--", str(bin_dir / "nest_calls")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    theirs = {f["function"]: f["calls"] for f in json.loads(run.stdout)["functions"]}
    assert ours == theirs == {"nest_outer": 3, "nest_inner": 5}


def test_pid_trace_ends_when_the_process_is_gone(bin_dir, nest_config, gated):
    prog = gated(str(bin_dir / "nest_calls"))
    calls = []
    with eacgm.trace(pid=prog.pid, config=nest_config, probes=["nest"]) as t:
        prog.go()
        for batch in t:
            calls += batch
    assert prog.finish()[0] == 0
    assert entry_order(calls) == NEST_CALLS
    assert {c["pid"] for c in calls} == {prog.pid}


def one_line(err):
    text = str(err.value)
    assert text and "\n" not in text
    return text


def test_unknown_probe_is_a_usage_error(bin_dir):
    with pytest.raises(eacgm.UsageError) as err:
        eacgm.trace(command=[str(bin_dir / "nest_calls")], catalogs=["no_such_catalog"])
    assert "no_such_catalog" in one_line(err)


def test_missing_symbol_is_a_usage_error(bin_dir, tmp_path, gated):
    prog = gated(str(bin_dir / "nest_calls"))  # maps the library, so its symbols are read
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[[probe]]\nname = "gone"\nlibrary = "libeacgm_nest.so*"\nsymbol = "nest_nowhere"\n')
    with pytest.raises(eacgm.UsageError) as err:
        eacgm.trace(pid=prog.pid, config=str(cfg), probes=["gone"])
    assert "nest_nowhere" in one_line(err)
    prog.go()
    assert prog.finish()[0] == 0


def test_bad_config_and_mode(bin_dir):
    with pytest.raises(eacgm.UsageError) as err:
        eacgm.trace(command=[str(bin_dir / "nest_calls")], config="[trace]\nno_such_key = 1\n")
    assert "no_such_key" in one_line(err)
    with pytest.raises(ValueError):
        eacgm.trace(command=[str(bin_dir / "nest_calls")], mode="sometimes")


def test_command_that_cannot_start(tmp_path):
    with pytest.raises(eacgm.LaunchError) as err:
        eacgm.trace(command=[str(tmp_path / "no_such_program")], catalogs=["cuda"])
    assert "no_such_program" in one_line(err)


def test_without_privileges(bin_dir):
    script = ("import sys, eacgm\n"
              "try:\n"
              "    eacgm.trace(command=['/bin/true'], catalogs=['cuda'])\n"
              "except eacgm.PrivilegeError as e:\n"
              "    print(type(e).__name__, '|', e); sys.exit(0)\n"
              "sys.exit(3)\n")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                        "--bounding-set=-all", "/usr/bin/python3", "-c", script],
                       capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(bin_dir / "python"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("PrivilegeError | ") and r.stdout.count("\n") == 1, r.stdout
