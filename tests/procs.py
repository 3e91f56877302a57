"""Process look-ups for tests, read from /proc (never by a broad name: by lab id or parent pid).

    mcp_server_pids(lab_id) -> [pid]     ``... mcp serve ... <lab_id> ...`` processes
    vtysh_below(pid) -> [pid]            vtysh processes below ``pid`` (any depth)
    vtysh_below(pid, direct=True)        only its children (an adapter's open sessions)
    alive(pid) -> bool                   running and not a zombie

Importable from any test module (``tests/`` is on ``sys.path`` through the rootdir conftest).
"""

from __future__ import annotations

from pathlib import Path


def _procs() -> dict[int, tuple[int, bytes]]:
    """pid -> (parent pid, raw argv) of every process readable now."""
    out: dict[int, tuple[int, bytes]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            argv = (d / "cmdline").read_bytes()
        except OSError:
            continue
        out[int(d.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), argv)
    return out


def mcp_server_pids(lab_id: str) -> list[int]:
    """Pids of processes whose command line is ``... mcp serve ... <lab_id> ...``."""
    return [
        pid for pid, (_, raw) in _procs().items()
        if {b"serve", b"mcp", lab_id.encode()} <= set(raw.split(b"\0"))
    ]


def vtysh_below(pid: int, direct: bool = False) -> list[int]:
    """Pids of vtysh processes below ``pid``: its children only with ``direct``, else any depth."""
    procs = _procs()
    below, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (pp, _) in procs.items() if pp in frontier} - below
        below |= frontier
        if direct:
            break
    return sorted(p for p in below if b"vtysh" in procs[p][1])


def alive(pid: int) -> bool:
    """True if ``pid`` runs and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
