#!/usr/bin/env python3
"""/metrics latency of a running `eacgm serve` with and without hostile clients (standard
library only).

  slow_clients.py PORT [SCRAPES] [HOSTILE]

Two phases of SCRAPES (default 400) scrapes of /metrics, one every 25 ms, each on a new
connection (a request and its whole body timed). The first phase alone; in the second
HOSTILE (default 64) connections are held open throughout, in five states in turn:
silent after connect, half a request line, headers dripped a byte every 300 ms and
never ended, a POST body promised and never sent, idle keep-alive after one request. A
connection the server closes (at its deadline) is opened again in the same state, so
HOSTILE stay open. Prints one line per phase: scrapes, errors (not 200, or no answer
within 10 s), p50/p99/max in ms; and how many hostile connections the server closed.
"""
import http.client
import select
import socket
import sys
import threading
import time

KINDS = ("silent", "partial", "dripping", "nobody", "idle")


def nearest_rank(sorted_values, q):
    if not sorted_values:
        return float("nan")
    rank = max(1, int(-(-q * len(sorted_values) // 1)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def scrape_phase(port, n):
    lat, errors = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            resp.read()
            conn.close()
            if resp.status != 200:
                errors += 1
            else:
                lat.append(time.perf_counter() - t0)
        except OSError:
            errors += 1
        time.sleep(max(0.0, 0.025 - (time.perf_counter() - t0)))
    return lat, errors


def open_hostile(port, kind):
    s = socket.create_connection(("127.0.0.1", port))
    if kind == "partial":
        s.sendall(b"GET /metr")
    elif kind == "dripping":
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    elif kind == "nobody":
        s.sendall(b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: 64\r\n\r\n{\"tok")
    elif kind == "idle":
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while not got.endswith(b"ok\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    return s


class Hostile:
    def __init__(self, port, count):
        self.port = port
        self.conns = [(KINDS[i % len(KINDS)], open_hostile(port, KINDS[i % len(KINDS)])) for i in range(count)]
        self.closed_by_server = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        last_drip = 0.0
        while not self.stop:
            now = time.monotonic()
            drip = now - last_drip >= 0.3
            if drip:
                last_drip = now
            for i, (kind, s) in enumerate(self.conns):
                readable, _, _ = select.select([s], [], [], 0)
                if readable:
                    try:
                        data = s.recv(4096)
                    except OSError:
                        data = b""
                    if not data:  # the server closed it: hold another in its place
                        s.close()
                        self.closed_by_server += 1
                        self.conns[i] = (kind, open_hostile(self.port, kind))
                        continue
                if drip and kind == "dripping":
                    try:
                        s.send(b"a")
                    except OSError:
                        pass
            time.sleep(0.05)

    def close(self):
        self.stop = True
        self.thread.join()
        for _, s in self.conns:
            s.close()


def line(name, lat, errors):
    lat = sorted(lat)
    ms = lambda v: v * 1000
    print(f"{name}: {len(lat) + errors} scrapes, {errors} errors, "
          f"p50 {ms(nearest_rank(lat, 0.5)):.2f} ms, p99 {ms(nearest_rank(lat, 0.99)):.2f} ms, "
          f"max {ms(lat[-1]) if lat else float('nan'):.2f} ms")


def main():
    port = int(sys.argv[1])
    scrapes = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    lat, errors = scrape_phase(port, scrapes)
    line("alone", lat, errors)
    hostile = Hostile(port, count)
    lat, errors = scrape_phase(port, scrapes)
    hostile.close()
    line(f"with {count} hostile connections", lat, errors)
    print(f"hostile connections closed by the server during the phase: {hostile.closed_by_server}")
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
