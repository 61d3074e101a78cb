#!/usr/bin/env python3
"""Loopback HTTP client for the `eacgm serve` benchmarks (standard library only).

  http_client.py get PORT PATH                  print the body (exit 1 unless 200)
  http_client.py wait PORT PATH SECONDS         wait until PATH answers 200
  http_client.py scrape PORT PATH SECONDS       one GET a second, on the second, on
                                                one keep-alive connection
  http_client.py scrape-close PORT PATH SECONDS as scrape, a new connection each
  http_client.py hammer PORT PID PATH [PATH..]  back-to-back GETs, cycling over the
                                                paths on one keep-alive connection,
                                                while process PID lives

scrape and hammer print one line: requests, errors, bytes per request and latency
p50/p99/max in ms (per request: from sending the request to the last body byte).
"""
import http.client
import os
import sys
import time


def get(conn, path):
    t0 = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    return resp.status, body, time.perf_counter() - t0


def nearest_rank(sorted_values, q):
    if not sorted_values:
        return float("nan")
    rank = max(1, int(-(-q * len(sorted_values) // 1)))  # ceil(q * n)
    return sorted_values[min(rank, len(sorted_values)) - 1]


def report(kind, latencies, errors, nbytes):
    lat = sorted(latencies)
    n = len(lat)
    print(
        f"{kind}: requests={n + errors} errors={errors} "
        f"bytes_per_request={nbytes / max(n, 1):.0f} "
        f"p50_ms={1e3 * nearest_rank(lat, 0.50):.2f} p99_ms={1e3 * nearest_rank(lat, 0.99):.2f} "
        f"max_ms={1e3 * (lat[-1] if lat else float('nan')):.2f}"
    )


def connect(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=10)


def main(argv):
    cmd, port = argv[1], int(argv[2])
    if cmd == "get":
        status, body, _ = get(connect(port), argv[3])
        sys.stdout.write(body.decode())
        return 0 if status == 200 else 1
    if cmd == "wait":
        deadline = time.monotonic() + float(argv[4])
        while time.monotonic() < deadline:
            try:
                if get(connect(port), argv[3])[0] == 200:
                    return 0
            except OSError:
                pass
            time.sleep(0.1)
        return 1
    latencies, errors, nbytes = [], 0, 0
    conn = connect(port)

    def one(path):
        nonlocal conn, errors, nbytes
        try:
            status, body, dt = get(conn, path)
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = connect(port)
            return
        if status != 200:
            errors += 1
            return
        latencies.append(dt)
        nbytes += len(body)

    if cmd in ("scrape", "scrape-close"):
        path, seconds = argv[3], int(argv[4])
        start = time.monotonic()
        for i in range(seconds):
            if cmd == "scrape-close":
                conn.close()
                conn = connect(port)
            one(path)
            time.sleep(max(0.0, start + i + 1 - time.monotonic()))
        conn.close()
        report(cmd, latencies, errors, nbytes)
        return 0
    if cmd == "hammer":
        pid, paths = int(argv[3]), argv[4:]
        i = 0
        while os.path.exists(f"/proc/{pid}"):
            one(paths[i % len(paths)])
            i += 1
        report("hammer", latencies, errors, nbytes)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
