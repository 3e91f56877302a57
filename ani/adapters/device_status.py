"""The operational status of one router, read only: A1's ``check_device_status``
(draft-cui-nmrg-llm-benchmark §6.3.2, "operational status of network devices including CPU,
memory, and interface metrics").

What a router's status is made of here, and where each part comes from:

- ``reachable``: a command runs inside the router's network namespace (``ip -j -s link show``,
  read by :func:`ani.device.opstate.read_links`,
  bounded by ``timeout_s``); False when the lab is gone or the namespace does not answer.
- ``daemons``: every FRR daemon the topology gives the router (``zebra``, ``staticd``, ...), with
  its ``state``: ``running`` (the lab's pid for it is alive, in the router's pathspace),
  ``frozen`` (that process is stopped: ``SIGSTOP``, state ``T``; it answers nothing) or
  ``not_running`` (killed, crashed, never started), and its ``pid`` (None when not running). The
  process state is read from the host's process table with psutil, never through vtysh: a
  frozen daemon would block vtysh, and a status check must answer.
- ``status``: ``up`` (reachable, every daemon running), ``degraded`` (reachable, some daemon
  frozen or not running), ``down`` (not reachable, or no daemon running).
- metric ``cpu``: per daemon ``cpu_s``, user + system CPU seconds used since it started;
  ``memory``: per daemon ``rss_bytes``, its resident memory (bytes); ``interface``: per kernel
  interface ``name``, ``admin_up`` (flag ``UP``), ``oper_state`` (``UP``, ``DOWN``,
  ``UNKNOWN``, ... as the kernel says), ``rx_packets``, ``tx_packets``, ``rx_errors``,
  ``tx_errors``, ``rx_dropped``, ``tx_dropped`` (counters since the interface was created).

Nothing here changes the router. Errors: :class:`ani.errors.UnknownNode` for a name that is not
a router of the lab (the adapter checks names before).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psutil

from ani.device import opstate
from ani.errors import LabError, StateReadError

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["daemon_states", "format_status", "read_status"]


def _proc(pid: int) -> tuple[str, psutil.Process | None]:
    """``(state, process)`` of ``pid``: ``running`` / ``frozen`` / ``not_running``."""
    try:
        p = psutil.Process(pid)
        st = p.status()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return "not_running", None
    if st == psutil.STATUS_ZOMBIE or st == psutil.STATUS_DEAD:
        return "not_running", None
    if st in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
        return "frozen", p
    return "running", p


def daemon_states(lab: Lab, router: str, metrics: list[str] | tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """``{daemon: {"state", "pid"[, "cpu_s"][, "rss_bytes"]}}`` for every daemon the topology
    gives ``router``, in its order (see the module doc). Raises UnknownNode."""
    expected = list(lab.topology.routers[router].daemons)
    live = lab.daemon_pids(router)  # {daemon: pid} of those the lab started that run now
    out: dict[str, dict[str, Any]] = {}
    for d in expected:
        pid = live.get(d)
        state, proc = _proc(pid) if pid else ("not_running", None)
        entry: dict[str, Any] = {"state": state, "pid": pid if proc is not None else None}
        if proc is not None:
            try:
                if "cpu" in metrics:
                    t = proc.cpu_times()
                    entry["cpu_s"] = round(t.user + t.system, 2)
                if "memory" in metrics:
                    entry["rss_bytes"] = proc.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):  # it ended between the two reads
                entry = {"state": "not_running", "pid": None}
        out[str(d)] = entry
    return out


def _interfaces(doc: Any) -> list[dict[str, Any]]:
    out = []
    for link in doc if isinstance(doc, list) else []:
        stats = link.get("stats64") or link.get("stats") or {}
        rx, tx = stats.get("rx", {}), stats.get("tx", {})
        out.append({
            "name": link.get("ifname"),
            "admin_up": "UP" in (link.get("flags") or []),
            "oper_state": link.get("operstate"),
            "rx_packets": rx.get("packets"), "tx_packets": tx.get("packets"),
            "rx_errors": rx.get("errors"), "tx_errors": tx.get("errors"),
            "rx_dropped": rx.get("dropped"), "tx_dropped": tx.get("dropped"),
        })
    return out


def read_status(lab: Lab, router: str, metrics: list[str] | tuple[str, ...] = ("interface",),
                timeout_s: float = 10.0) -> dict[str, Any]:
    """The status of ``router`` (module doc): ``{"device", "reachable", "status", "daemons",
    "interfaces"?, "detail"?}`` (``interfaces`` only with metric ``interface``; ``detail`` says
    why a router is not reachable). ``timeout_s``: bound of the one command run in the router,
    seconds. Raises UnknownNode."""
    daemons = daemon_states(lab, router, metrics)
    reachable, detail, links = True, "", None
    try:
        links = _interfaces(opstate.read_links(lab, router, stats=True, timeout=timeout_s))
    except StateReadError as exc:
        if exc.timed_out:
            reachable, detail = False, f"no answer from the router's namespace within {timeout_s:g} s"
        elif exc.rc != 0:
            reachable, detail = False, exc.detail or f"ip exited {exc.rc}"
        else:  # ip printed something that is not JSON: the namespace answered
            links = []
    except LabError as exc:
        reachable, detail = False, str(exc)
    states = [d["state"] for d in daemons.values()]
    if not reachable or not any(s == "running" for s in states):
        status = "down"
    elif all(s == "running" for s in states):
        status = "up"
    else:
        status = "degraded"
    out: dict[str, Any] = {"device": router, "reachable": reachable, "status": status, "daemons": daemons}
    if "interface" in metrics and links is not None:
        out["interfaces"] = links
    if detail:
        out["detail"] = detail
    return out


def format_status(st: dict[str, Any]) -> str:
    """The agent's text of one router's status, e.g.::

        r2: degraded (reachable); daemons: zebra running, staticd running, bgpd FROZEN (stopped)
          eth-r1 up/UP rx 120 tx 118 pkts, 0/0 errors
    """
    head = f"{st['device']}: {st['status']} ({'reachable' if st['reachable'] else 'NOT reachable'})"
    parts = []
    for name, d in st["daemons"].items():
        word = {"running": "running", "frozen": "FROZEN (stopped)", "not_running": "NOT RUNNING"}[d["state"]]
        extra = []
        if "cpu_s" in d:
            extra.append(f"cpu {d['cpu_s']:g} s")
        if "rss_bytes" in d:
            extra.append(f"rss {d['rss_bytes'] // 1024} KiB")
        parts.append(f"{name} {word}" + (f" ({', '.join(extra)})" if extra else ""))
    lines = [head + "; daemons: " + ", ".join(parts)]
    if st.get("detail"):
        lines.append(f"  {st['detail']}")
    for i in st.get("interfaces", []):
        lines.append(f"  {i['name']} {'up' if i['admin_up'] else 'down'}/{i['oper_state']} "
                     f"rx {i['rx_packets']} tx {i['tx_packets']} pkts, {i['rx_errors']}/{i['tx_errors']} errors")
    return "\n".join(lines)
