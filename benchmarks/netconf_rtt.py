#!/usr/bin/env python3
"""NETCONF round trip and confirmed-commit cycle against a lab's real NETCONF server.

Usage (as root)::

    .venv/bin/python benchmarks/netconf_rtt.py [FILE] [--router e1] [-n 200] [-c 10]

FILE is a scenario or topology file (default ``scenarios/brownfield-small.yaml``); the router
is an edge of it (default ``e1``). One lab is brought up (and always removed), then:

1. ``get-config running`` (whole datastore, no filter) over one ncclient session, ``-n`` times
   after 5 warm-up calls: median / p95 / min / max, in milliseconds; the same through the A2
   adapter's ``get_config`` tool (adds argument checking, reply checking and pretty printing);
   and ``get`` of ``frr-state`` (operational state read from FRR on each call).
2. The full confirmed-commit cycle, ``-c`` times, through the A2 adapter as an agent runs it:
   ``lock``, ``edit_config`` (a prefix-list entry, added and removed on alternate cycles so that
   every commit changes FRR), ``validate``, ``commit`` (confirmed, 120 s), ``confirm_commit``,
   ``unlock``: per step and total, median / p95 / min / max in milliseconds.

``--tick S`` sets ncclient's send-queue poll interval (``ncclient.transport.session.TICK``;
ncclient's own default 0.1 s, the A2 client's 0.01 s) for the raw ncclient figures.

p95 is the nearest-rank 95th percentile.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402

DEFAULT = ROOT / "scenarios" / "brownfield-small.yaml"
NS = "urn:ani:yang:ani-frr"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def row(name: str, xs: list[float]) -> str:
    ms = [x * 1000 for x in xs]
    return (f"{name:28s} {statistics.median(ms):9.1f} {p95(ms):9.1f} {min(ms):9.1f} {max(ms):9.1f}"
            f"   (n={len(ms)})")


def header() -> str:
    return f"{'operation':28s} {'median':>9s} {'p95':>9s} {'min':>9s} {'max':>9s}   (milliseconds)"


def edit(seq: int, add: bool) -> str:
    """Add prefix-list PL-BENCH (one entry), or delete the whole list (a list needs an entry)."""
    if add:
        return (f'<frr xmlns="{NS}"><prefix-list><name>PL-BENCH</name><entry><seq>{seq}</seq>'
                "<action>permit</action><prefix>192.0.2.0/24</prefix></entry></prefix-list></frr>")
    return (f'<frr xmlns="{NS}" xmlns:nc="{NC}"><prefix-list nc:operation="delete"><name>PL-BENCH</name>'
            "</prefix-list></frr>")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--router", default="e1")
    ap.add_argument("-n", "--rtt", type=int, default=200, help="get-config round trips")
    ap.add_argument("-c", "--cycles", type=int, default=10, help="confirmed-commit cycles")
    ap.add_argument("--tick", type=float, default=None, help="ncclient TICK for the raw figures (seconds)")
    args = ap.parse_args()

    from ani.adapters.a2 import A2Adapter
    from ani.netconf.client import NCCLIENT_TICK_S, check_reply, ncclient_connect
    from ani.adapters.netconf_xml import filter_element
    from ani.lab import Lab

    print(machine())
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    lab = Lab(args.file)
    try:
        t0 = time.monotonic()
        lab.up()
        print(f"{args.file.name}: lab up in {time.monotonic() - t0:.2f} s; router {args.router}")
        ep = lab.netconf_endpoint(args.router)
        m = ncclient_connect(ep, connect_timeout_s=10, rpc_timeout_s=60)
        if args.tick is not None:
            import ncclient.transport.session as nc_session

            nc_session.TICK = args.tick
        print(f"ncclient TICK: {__import__('ncclient.transport.session').transport.session.TICK} s")
        size = len(m.get_config(source="running").xml)
        print(f"get-config running reply: {size} bytes")
        for _ in range(5):
            check_reply("get-config", m.get_config(source="running").xml)
        raw = []
        for _ in range(args.rtt):
            t = time.perf_counter()
            check_reply("get-config", m.get_config(source="running").xml)
            raw.append(time.perf_counter() - t)
        state_flt = filter_element(f'<frr-state xmlns="{NS}"/>')
        state = []
        for _ in range(max(10, args.rtt // 4)):
            t = time.perf_counter()
            check_reply("get", m.get(filter=state_flt).xml)
            state.append(time.perf_counter() - t)
        m.close_session()
        if args.tick is not None:
            import ncclient.transport.session as nc_session

            nc_session.TICK = NCCLIENT_TICK_S  # the adapter's setting for the rest

        adapter = A2Adapter(lab)
        tool = []
        try:
            for _ in range(5):
                adapter.call("get_config", {"device": args.router})
            for _ in range(args.rtt):
                t = time.perf_counter()
                r = adapter.call("get_config", {"device": args.router})
                tool.append(time.perf_counter() - t)
                assert r.ok, r.text
            steps: dict[str, list[float]] = {k: [] for k in
                                             ("lock", "edit_config", "validate", "commit", "confirm_commit", "unlock")}
            total = []
            for i in range(args.cycles):
                calls = [
                    ("lock", {"device": args.router}),
                    ("edit_config", {"device": args.router, "config": edit(5, add=i % 2 == 0)}),
                    ("validate", {"device": args.router}),
                    ("commit", {"devices": [args.router], "confirm_timeout_s": 120}),
                    ("confirm_commit", {"devices": [args.router]}),
                    ("unlock", {"device": args.router}),
                ]
                tc = time.perf_counter()
                for name, a in calls:
                    t = time.perf_counter()
                    r = adapter.call(name, a)
                    steps[name].append(time.perf_counter() - t)
                    assert r.ok, (name, r.text)
                    if name == "commit":
                        assert r.changed, "every benchmark commit must change FRR"
                total.append(time.perf_counter() - tc)
        finally:
            adapter.close()
    finally:
        lab.down()

    print()
    print(header())
    print(row("get-config running (ncclient)", raw))
    print(row("get_config tool (A2 adapter)", tool))
    print(row("get frr-state (ncclient)", state))
    print()
    print(header())
    for k, v in steps.items():
        print(row(k, v))
    print(row("confirmed-commit cycle", total))
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
