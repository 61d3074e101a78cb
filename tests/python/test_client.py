"""eacgm.read_trace() on the files `eacgm trace` writes, and eacgm.Client on a real
`eacgm serve`, both over the nesting test program."""
import json
import socket
import subprocess
import time

import pytest

import eacgm


def trace_file(bin_dir, nest_config, tmp_path, *fmt):
    out = tmp_path / "trace.out"
    r = subprocess.run([str(bin_dir / "eacgm"), "--config", nest_config, "trace", "--probes", "nest", *fmt, "-o",
                        str(out), "--", str(bin_dir / "nest_calls")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out


def test_read_json_lines(bin_dir, nest_config, tmp_path):
    events = eacgm.read_trace(str(trace_file(bin_dir, nest_config, tmp_path)))
    calls = [e for e in events if e.get("domain") == "nest"]
    assert sorted((e["name"], e["args"]["x"]) for e in calls) == sorted(
        [("nest_outer", x) for x in (1, 2, 3)] + [("nest_inner", x) for x in (1, 2, 3, 10, 20)])


def test_read_perfetto_even_cut_short(bin_dir, nest_config, tmp_path):
    path = trace_file(bin_dir, nest_config, tmp_path, "--format", "perfetto")
    complete = [e for e in eacgm.read_trace(str(path)) if e["ph"] == "X"]
    assert len(complete) == 8 and {e["name"] for e in complete} == {"nest_outer", "nest_inner"}
    text = path.read_text().rstrip()
    assert text.endswith("]}")
    path.write_text(text[:-2])  # eacgm killed before it closed the array
    assert [e for e in eacgm.read_trace(str(path)) if e["ph"] == "X"] == complete


def test_read_to_perfetto_output(tmp_path):
    path = tmp_path / "cuda.json"
    path.write_text(json.dumps([{"name": "f", "ph": "B", "ts": 1.0, "pid": 1, "tid": 1},
                                {"name": "f", "ph": "E", "ts": 2.0, "pid": 1, "tid": 1}]))
    assert [e["ph"] for e in eacgm.read_trace(str(path))] == ["B", "E"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def serve(bin_dir, nest_config):
    port = free_port()
    proc = subprocess.Popen([str(bin_dir / "eacgm"), "--config", nest_config, "serve", "--listen",
                             f"127.0.0.1:{port}", "--probes", "nest", "--store", "off", "--no-gpu", "--mode",
                             "per-call"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    client = eacgm.Client(f"http://127.0.0.1:{port}", frames=False)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.functions()
            break
        except eacgm.Error:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.2)
    yield client
    proc.terminate()
    proc.wait(timeout=30)


def wait_attached(client, gated_prog):
    """The daemon attaches to a library once a process maps it: wait for that."""
    deadline = time.monotonic() + 20
    while client.counters().get("probes", 0) < 2:
        assert time.monotonic() < deadline, client.counters()
        time.sleep(0.2)


def test_client_reads_the_daemon(bin_dir, serve, gated):
    prog = gated(str(bin_dir / "nest_calls"))
    wait_attached(serve, prog)
    prog.go()
    assert prog.finish()[0] == 0
    # The daemon traces the whole machine: this process's calls are its row in processes.
    deadline = time.monotonic() + 20
    while True:
        mine = [p for p in serve.processes() if p["pid"] == prog.pid]
        if mine and mine[0]["calls"] == 8 or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert mine and mine[0]["calls"] == 8 and mine[0]["comm"] == "nest_calls"
    calls = {f["function"]: f["calls"] for f in serve.functions()}
    assert calls["nest_outer"] >= 3 and calls["nest_inner"] >= 5
    assert isinstance(serve.counters()["events"], int)


def test_client_capture_sees_live_calls(bin_dir, serve, gated):
    import threading

    prog = gated(str(bin_dir / "nest_calls"))
    wait_attached(serve, prog)
    threading.Timer(1.0, prog.go).start()
    calls = serve.capture(seconds=4)
    mine = [c for c in calls if c["pid"] == prog.pid]
    assert sorted(c["name"] for c in mine) == ["nest_inner"] * 5 + ["nest_outer"] * 3


def test_client_errors_are_one_line(serve):
    with pytest.raises(eacgm.Error) as err:
        serve.history("functions")  # --store off: no history
    assert "404" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(eacgm.Error) as err:
        eacgm.Client("http://127.0.0.1:1").functions()
    assert "\n" not in str(err.value)
