"""The raw floor: a topology's routers and hosts as plain network namespaces, veth pairs and FRR
daemons started by hand, without ani's harness (no user namespaces, no private mount or UTS
namespaces, no memory cgroups, no run-dir tmpfs, no NETCONF / SSH server, no reaper, no state
file). What any netns + FRR lab must do at least; ``substrate.py`` sets ani's figures beside it.

Build: one ``ip -batch`` makes every namespace and veth pair (each veth directly in its two
namespaces, as ani does); then each node, in a thread of its own (as ani does), gets its
addresses (one ``ip -n NS -batch``), and a router its forwarding sysctls, its config dir
``/etc/frr/<ns>`` and run dir ``/var/run/frr/<ns>``, zebra then its other daemons (``-d -N <ns>``,
started by ``ip netns exec``) and its config (``vtysh -N <ns> -b``). Convergence is timed with the
same stopwatch as ani's labs (:func:`ani.lab.converge.pending`, which reads the daemons' vty
sockets), so that the two convergence figures compare. Teardown: SIGTERM to every daemon, SIGKILL
after 1.5 s, one ``ip -batch`` deleting the namespaces, the dirs removed.

Names: ``raw<6 hex>-<node>``, which no ani sweep touches (they remove ``ani-*`` only).
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ETC, RUN = Path("/etc/frr"), Path("/var/run/frr")


def _run(argv: list[str], input: str | None = None) -> None:
    res = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:6])}: exit {res.returncode}: {(res.stderr or res.stdout).strip()[-500:]}")


class RawLab:
    """One topology by hand. ``up()`` returns ``{"build_s", "converge_s"}``; ``down()`` ``{"down_s"}``."""

    def __init__(self, topology: Any) -> None:
        self.topology = topology
        self.id = "raw" + secrets.token_hex(3)
        self.pids: dict[str, int] = {}  # "<router>/<daemon>" -> pid
        self._made: list[str] = []

    def pathspace(self, node: str) -> str:
        return f"{self.id}-{node}"

    def daemon_pids(self) -> list[int]:
        return list(self.pids.values())

    def up(self, timeout_s: float = 60.0) -> dict[str, float]:
        t0 = time.monotonic()
        try:
            self._build()
            t1 = time.monotonic()
            self._wait_converged(timeout_s)
        except BaseException:
            self.down()
            raise
        return {"build_s": t1 - t0, "converge_s": time.monotonic() - t1}

    def _build(self) -> None:
        topo = self.topology
        lines = [f"netns add {self.pathspace(n)}" for n in topo.nodes]
        self._made = [self.pathspace(n) for n in topo.nodes]
        lines += [f"link add {lk.a.ifname} netns {self.pathspace(lk.a.node)} type veth peer name "
                  f"{lk.b.ifname} netns {self.pathspace(lk.b.node)}" for lk in topo.links]
        _run(["ip", "-batch", "-"], input="\n".join(lines) + "\n")
        with ThreadPoolExecutor(max_workers=max(1, min(16, len(topo.nodes)))) as ex:
            for f in [ex.submit(self._node, n) for n in topo.nodes]:
                f.result()

    def _node(self, n: str) -> None:
        topo, ns = self.topology, self.pathspace(n)
        lines = ["link set lo up"] + [f"link set {loc.ifname} up" for loc, _ in topo.links_of(n)]
        lines += [f"addr add {loc.address} dev {loc.ifname}" for loc, _ in topo.links_of(n) if loc.address]
        if n in topo.hosts:
            gw = topo.hosts[n].gateway
            if gw:
                lines.append(f"route add default via {gw}")
            _run(["ip", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n")
            return
        _run(["ip", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n")
        _run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
              "net.ipv4.igmp_max_memberships=1024"])
        pw = pwd.getpwnam("frr")
        for d in (ETC / ns, RUN / ns):
            d.mkdir(parents=True, exist_ok=True)
            os.chown(d, pw.pw_uid, pw.pw_gid)
        (ETC / ns / "frr.conf").write_text(topo.routers[n].config)
        (ETC / ns / "vtysh.conf").write_text("")
        daemons = topo.routers[n].daemons
        cmd = {d: f"/usr/lib/frr/{d} -d -N {ns} -F traditional -A 127.0.0.1 -P 0 -i {RUN / ns}/{d}.pid"
               for d in daemons}
        rest = [d for d in daemons if d != "zebra"]
        script = (f"{cmd['zebra']} || exit 1; " if "zebra" in daemons else "")
        script += "".join(f"{cmd[d]} & " for d in rest) + "wait"
        _run(["ip", "netns", "exec", ns, "sh", "-c", script])
        for d in daemons:
            self.pids[f"{n}/{d}"] = self._wait_pid(ns, d)
        _run(["ip", "netns", "exec", ns, "vtysh", "-N", ns, "-H", "/dev/null", "-b"])

    @staticmethod
    def _wait_pid(ns: str, daemon: str, timeout_s: float = 15.0) -> int:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                pid = int((RUN / ns / f"{daemon}.pid").read_text())
                if (RUN / ns / f"{daemon}.vty").exists():
                    return pid
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{ns}: {daemon} did not start")
            time.sleep(0.02)

    def _wait_converged(self, timeout_s: float) -> None:
        from ani.lab import converge

        deadline = time.monotonic() + timeout_s
        while True:
            left = converge.pending(self)  # type: ignore[arg-type]
            if not left:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"raw floor {self.id}: not converged after {timeout_s:g} s: {left[:3]}")
            time.sleep(0.15)

    def down(self) -> dict[str, float]:
        t0 = time.monotonic()
        pids = [p for p in self.pids.values() if self._ours(p)]
        for p in pids:
            _kill(p, signal.SIGTERM)
        deadline = time.monotonic() + 1.5
        while any(self._ours(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        for p in pids:
            if self._ours(p):
                _kill(p, signal.SIGKILL)
        if self._made:
            subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns del {ns}\n" for ns in self._made),
                           capture_output=True, text=True, timeout=60)
        for ns in self._made:
            for root in (ETC, RUN):
                shutil.rmtree(root / ns, ignore_errors=True)
        self._made, self.pids = [], {}
        return {"down_s": time.monotonic() - t0}

    def _ours(self, pid: int) -> bool:
        """``pid`` is alive and one of this lab's daemons (``-N raw<id>-...`` on its command line)."""
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z" and any(a.startswith(f"{self.id}-".encode()) for a in argv)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
