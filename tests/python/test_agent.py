"""eacgm.serve(): the node agent started in the test's own process with one call, traced
calls read back through its API and its report, a bad request refused, and the port
closed after stop()."""
import time
import urllib.error
import urllib.request

import pytest

import eacgm
from eacgm._backend import native

from test_client import wait_attached


def test_serve_traces_the_machine_and_answers_on_its_port(bin_dir, nest_config, gated):
    with eacgm.serve(config=nest_config, probes=["nest"], mode="per-call", gpus=False) as agent:
        assert agent.url.startswith("http://127.0.0.1:")
        client = agent.client(frames=False)
        prog = gated(str(bin_dir / "nest_calls"))
        wait_attached(client, prog)
        prog.go()
        assert prog.finish()[0] == 0
        deadline = time.monotonic() + 20
        while True:
            mine = [p for p in client.processes() if p["pid"] == prog.pid]
            if mine and mine[0]["calls"] == 8 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert mine and mine[0]["calls"] == 8, client.processes()
        calls = {f["function"]: f["calls"] for f in client.functions()}
        assert calls["nest_outer"] >= 3 and calls["nest_inner"] >= 5
        if native.version != "cli":  # the report is the extension's
            report = agent.report()
            assert {f["function"] for f in report["functions"]} >= {"nest_outer", "nest_inner"}
        url = agent.url
    with pytest.raises((urllib.error.URLError, OSError)):
        urllib.request.urlopen(url + "/healthz", timeout=2)


def test_a_bad_listen_address_is_a_usage_error():
    with pytest.raises(eacgm.UsageError, match="--listen"):
        eacgm.serve(listen="127.0.0.1:notaport", gpus=False)
