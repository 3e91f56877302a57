#!/usr/bin/env python3
"""What FRR 8.4 and this kernel allow for SRv6 and tracked static routes (issue 13 §1).

Usage (as root)::

    .venv/bin/python benchmarks/srv6_static_failover.py

One lab of ``tests/data/tri-ospf-ibgp.yaml`` (r2 and r3 directly linked, r1 the third corner,
h1 behind r2, h2 behind r3) is brought up (no NETCONF server) and always removed. Prints:

1. SRv6 in the kernel: r2 encapsulates h1 -> h2 (``encap seg6 mode encap``, two segments: r1
   ``End``, r3 ``End.DX4``); 20 pings, r1's forwarded IPv6 datagrams (the packets really went
   through r1 although the IPv4 path is r2-r3) and the mean RTT, with and without the encap;
   what zebra shows for the kernel seg6 route.
2. FRR 8.4's answer to ``ip route ... segments``, ``ipv6 route ... segments``, a zebra SRv6
   locator, ``ip route ... bfd`` / ``track 1`` (and what the running config makes of them).
3. Floating statics (primary distance 1, backup distance 200): seconds until the backup is in
   the kernel after the local link goes down, after the neighbour goes silent with its link up
   (an nftables drop-all in its namespace), for a direct and a recursive (via the neighbour's
   loopback, over OSPF with dead-interval 3 s) primary; and back.

Figures are one run each (single measurements, polled every 10 ms); docs/shared-state-classes.md
has those of the run the docs quote.
"""

from __future__ import annotations

import re
import secrets
import time

from ani.lab.lab import Lab

H2 = "198.18.2.10"
DEAD = ("table inet benchdead {\n chain i { type filter hook input priority -300; policy drop; }\n"
        " chain f { type filter hook forward priority -300; policy drop; }\n"
        " chain o { type filter hook output priority -300; policy drop; }\n}\n")


def main() -> None:
    lab = Lab("tests/data/tri-ospf-ibgp.yaml", lab_id="srv6" + secrets.token_hex(3), netconf=False)

    def sh(node: str, *argv: str) -> str:
        res = lab.exec(node, list(argv))
        if res.rc != 0:
            raise SystemExit(f"{node}: {' '.join(argv)}: rc={res.rc} {res.stderr.strip()}")
        return res.stdout

    def vt(node: str, cmds: list[str] | str) -> str:
        res = lab.vtysh(node, cmds)
        return f"rc={res.rc} {(res.stdout + res.stderr).strip()}"

    def forwarded6(node: str) -> int:
        return int(re.search(r"Ip6OutForwDatagrams\s+(\d+)", sh(node, "cat", "/proc/net/snmp6")).group(1))

    def ping(host: str) -> tuple[int, float]:
        out = lab.exec(host, ["ping", "-n", "-q", "-c", "20", "-i", "0.05", "-W", "1", H2]).stdout
        got = int(re.search(r"(\d+) received", out).group(1))
        m = re.search(r"= [\d.]+/([\d.]+)/", out)
        return got, float(m.group(1)) if m else float("nan")

    def until(node: str, prefix: str, want: str, bound: float) -> tuple[float, bool]:
        t0 = time.monotonic()
        while time.monotonic() - t0 < bound:
            if want in sh(node, "ip", "route", "show", prefix):
                return time.monotonic() - t0, True
            time.sleep(0.01)
        return bound, False

    try:
        lab.up()
        h1 = next(iter(lab.topology.hosts))
        # -- 1. SRv6 in the kernel
        for n in ("r1", "r2", "r3"):
            for k in ("all.disable_ipv6=0", "all.forwarding=1", "all.seg6_enabled=1", "default.seg6_enabled=1"):
                sh(n, "sysctl", "-qw", f"net.ipv6.conf.{k}")
        for i in ("eth-r1", "eth-r2", "eth-r3", "eth-h2"):
            for n in ("r1", "r2", "r3"):
                lab.exec(n, ["sysctl", "-qw", f"net.ipv6.conf.{i}.seg6_enabled=1"])
        sh("r1", "ip", "-6", "addr", "add", "fd00:12::1/64", "dev", "eth-r2", "nodad")
        sh("r2", "ip", "-6", "addr", "add", "fd00:12::2/64", "dev", "eth-r1", "nodad")
        sh("r1", "ip", "-6", "addr", "add", "fd00:13::1/64", "dev", "eth-r3", "nodad")
        sh("r3", "ip", "-6", "addr", "add", "fd00:13::2/64", "dev", "eth-r1", "nodad")
        sh("r2", "ip", "-6", "route", "add", "fc00:1::/64", "via", "fd00:12::1")
        sh("r1", "ip", "-6", "route", "add", "fc00:3::/64", "via", "fd00:13::2")
        sh("r1", "ip", "-6", "route", "add", "fc00:1::e/128", "encap", "seg6local", "action", "End", "dev", "eth-r2")
        sh("r3", "ip", "-6", "route", "add", "fc00:3::d4/128", "encap", "seg6local", "action", "End.DX4", "nh4", H2,
           "dev", "eth-h2")
        encap = ["ip", "route", "add", f"{H2}/32", "encap", "seg6", "mode", "encap", "segs", "fc00:1::e,fc00:3::d4",
                 "dev", "eth-r1"]
        sh("r2", *encap)
        f0 = forwarded6("r1")
        got, rtt = ping(h1)
        print(f"srv6 encap: {got}/20 answered, r1 forwarded {forwarded6('r1') - f0} IPv6 datagrams, rtt {rtt:.3f} ms")
        sh("r2", "ip", "route", "del", f"{H2}/32")
        f0 = forwarded6("r1")
        got, rtt = ping(h1)
        print(f"plain IPv4:  {got}/20 answered, r1 forwarded {forwarded6('r1') - f0} IPv6 datagrams, rtt {rtt:.3f} ms")
        sh("r2", *encap)
        time.sleep(0.5)
        print("zebra sees the seg6 route as:", " | ".join(vt("r2", f"show ip route {H2}/32").splitlines()[1:4]))
        # -- 2. FRR 8.4
        for cmd in ("ip route 198.18.2.10/32 eth-r1 segments fc00:1::e/fc00:3::d4",
                    "ipv6 route fc00:3::/64 eth-r1 segments fc00:1::e/fc00:3::d4",
                    "ip route 10.97.0.0/24 10.0.12.1 bfd", "ip route 10.96.0.0/24 10.0.12.1 track 1"):
            print(f"frr: {cmd!r}: {vt('r2', ['configure terminal', cmd]).splitlines()[0]}")
        print("frr: srv6 locator:", vt("r2", ["configure terminal", "segment-routing", "srv6", "locators",
                                               "locator L1", "prefix fc00:2::/48"]),
              "|", vt("r2", "show segment-routing srv6 locator").splitlines()[-1])
        running = lab.vtysh("r2", "show running-config").stdout
        print("frr: running config keeps:", [ln for ln in running.splitlines() if ln.startswith("ip route 10.9")])
        print("frr: installed:", vt("r2", "show ip route 10.96.0.0/24"), "/", vt("r2", "show ip route 10.97.0.0/24"))
        # -- 3. floating statics
        vt("r2", ["configure terminal", "ip route 10.99.0.0/24 10.0.12.1", "ip route 10.99.0.0/24 10.0.23.2 200",
                  "ip route 10.98.0.0/24 10.255.0.1", "ip route 10.98.0.0/24 10.0.23.2 200"])
        until("r2", "10.99.0.0/24", "10.0.12.1", 5)
        until("r2", "10.98.0.0/24", "10.0.12.1", 5)
        sh("r2", "ip", "link", "set", "eth-r1", "down")
        s, ok = until("r2", "10.99.0.0/24", "10.0.23.2", 10)
        print(f"static, local link down: backup in {s:.3f} s" if ok else "static, local link down: no failover")
        sh("r2", "ip", "link", "set", "eth-r1", "up")
        s, ok = until("r2", "10.99.0.0/24", "10.0.12.1", 10)
        print(f"static, local link up: primary back in {s:.3f} s")
        until("r2", "10.98.0.0/24", "10.0.12.1", 10)
        time.sleep(4)  # OSPF adjacency back
        lab.exec("r1", ["nft", "-f", "-"], input=DEAD)
        s, ok = until("r2", "10.98.0.0/24", "10.0.23.2", 15)
        print(f"recursive static (via r1's loopback), r1 silent: backup in {s:.3f} s" if ok else "recursive: no failover")
        s, ok = until("r2", "10.99.0.0/24", "10.0.23.2", 3)
        print(f"direct static, r1 silent, link up: backup in {s:.3f} s" if ok
              else "direct static, r1 silent, link up: still on the dead next hop after 3 s")
        sh("r1", "nft", "delete", "table", "inet", "benchdead")
        s, ok = until("r2", "10.98.0.0/24", "10.0.12.1", 15)
        print(f"recursive static, r1 back: primary in {s:.3f} s")
    finally:
        lab.down()


if __name__ == "__main__":
    main()
