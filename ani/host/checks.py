"""Everything the SDK needs from this machine, checked: ``ani doctor``, the lab's up-front check
and the host check of ``ani run`` / ``ani campaign run``.

A check gives a :class:`Finding`: what was checked, whether it is there, what was found, the fix
and which levels it breaks when missing. Three kinds:

- ``program``: every line of ``ani/host/packages.txt`` (:mod:`ani.host.programs`);
- ``package``: the packages of that file that provide no program (``scripts/setup.sh``'s own,
  e.g. ``python3-venv``), asked of dpkg; they break no level;
- ``kernel``: features probed for real in a throw-away network namespace (``unshare --net``,
  gone when the probe exits): network namespaces, private mount and UTS namespaces, veth links
  (the only link type labs create), nftables, and the A0 sandbox (bubblewrap's PID, mount, UTS
  and IPC namespaces); each probe runs once per process (kernel features do not come and go);
- ``privilege`` / ``account``: root; FRR's user ``frr`` and group ``frrvty``.

::

    findings(daemons={"bgpd"})                -> [Finding, ...]   # every check
    unfit(["a1", "a3t"], daemons)             -> {"a1": [Finding], ...}   # only levels with a problem
    check_lab(daemons)                        # raises CapabilityMissing (Lab.up)

FRR daemons other than zebra and staticd are needed where a topology runs them: pass the
daemons of the topologies in question (``ani doctor``: those of the shipped scenarios).
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from ani.errors import CapabilityMissing
from ani.host.programs import LEVELS, entries, levels_of, registry

#: bound on one kernel probe, seconds
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Finding:
    """One check of the host.

    Attributes:
        name: what was checked (``/usr/lib/frr/frr-reload.py``, ``veth links``, ``root``).
        kind: ``program``, ``package``, ``kernel``, ``privilege`` or ``account``.
        ok: it is there (for a probe: the probe succeeded).
        detail: what was found: the program's path, the probe's error, ``not tested: ...``.
        fix: what to do when it is missing (``apt-get install frr-pythontools``).
        needed_by: the needed-by words (``lab``, ``observer``, ``daemon``, levels; see
            ``ani/host/packages.txt``).
        used_for: what the SDK does with it.
        package: the Debian package, for programs and accounts.
    """

    name: str
    kind: str
    ok: bool
    detail: str
    fix: str
    needed_by: tuple[str, ...]
    used_for: str = ""
    package: str | None = None

    def breaks(self, daemons: Iterable[str] = ()) -> tuple[str, ...]:
        """The levels that cannot work without it, if it is missing (() when it is there).
        An FRR daemon breaks every level when it is in ``daemons`` (a topology runs it)."""
        if self.ok:
            return ()
        if "daemon" in self.needed_by and os.path.basename(self.name) in set(daemons):
            return LEVELS
        return levels_of(self.needed_by)

    def line(self) -> str:
        """``/usr/lib/frr/frr-reload.py is missing (apt-get install frr-pythontools)``."""
        if self.kind == "program":
            return f"{self.name} is missing ({self.fix})"
        if self.kind == "package":
            return f"package {self.name} is {self.detail} ({self.fix})"
        return f"{self.name}: {self.detail} ({self.fix})"


# --- programs ------------------------------------------------------------------------------------


def program_findings() -> list[Finding]:
    """One finding per program of the data file (packages without a program are left out)."""
    out = []
    for p in entries():
        if p.name == "-":
            continue
        found = p.locate()
        out.append(Finding(
            name=p.shown, kind="program", ok=found is not None,
            detail=found or "not found" + ("" if p.path else " on PATH, /usr/sbin or /sbin"),
            fix=p.fix, needed_by=p.needed_by, used_for=p.used_for, package=p.package,
        ))
    return out


def setup_findings() -> list[Finding]:
    """One finding per package of the data file that provides no program the code runs (what
    ``scripts/setup.sh`` alone needs, e.g. ``python3-venv`` for the virtualenv), asked of dpkg.
    Such a package breaks no level (the code never runs it); on a machine without dpkg they are
    not checked (no finding)."""
    dpkg = shutil.which("dpkg-query")
    out = []
    for p in entries():
        if p.name != "-" or dpkg is None:
            continue
        try:
            res = subprocess.run([dpkg, "-W", "-f=${Status}", p.package], capture_output=True, text=True,
                                 timeout=PROBE_TIMEOUT_S)
            ok = res.returncode == 0 and res.stdout.strip().endswith("installed") and "not-installed" not in res.stdout
            detail = "installed" if ok else "not installed"
        except (OSError, subprocess.SubprocessError) as exc:
            ok, detail = False, f"dpkg-query failed: {exc}"
        out.append(Finding(name=p.package, kind="package", ok=ok, detail=detail, fix=p.fix,
                           needed_by=p.needed_by, used_for=p.used_for, package=p.package))
    return out


# --- privilege and accounts ----------------------------------------------------------------------


def privilege_findings() -> list[Finding]:
    """Root, and FRR's user ``frr`` (owns the routers' files, runs the A0 sandbox) and group
    ``frrvty`` (the vty sockets, for the A0 sandbox); the ``frr`` package creates both."""
    root = os.geteuid() == 0
    out = [Finding(
        name="root", kind="privilege", ok=root,
        detail="euid 0" if root else f"euid {os.geteuid()}",
        fix="run as root (sudo)", needed_by=("lab",),
        used_for="network namespaces, veth links, FRR daemons, the A0 sandbox",
    )]
    for name, kind, lookup, needed, used in (
        ("frr", "user", pwd.getpwnam, ("lab",), "owns each router's FRR files; the A0 sandbox runs as it"),
        ("frrvty", "group", grp.getgrnam, ("a0",), "the A0 sandbox reaches vtysh's sockets through it"),
    ):
        try:
            lookup(name)
            ok, detail = True, "present"
        except KeyError:
            ok, detail = False, f"no {kind} {name!r}"
        out.append(Finding(name=f"{kind} {name}", kind="account", ok=ok, detail=detail,
                           fix="apt-get install frr", needed_by=needed, used_for=used, package="frr"))
    return out


# --- kernel features -----------------------------------------------------------------------------

#: (name, programs the probe runs, argv after ``unshare --net``, needed-by, fix, used-for)
_PROBES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], str, str], ...] = (
    ("network namespaces", ("unshare", "ip"), ("{ip}", "link", "set", "lo", "up"), ("lab",),
     "a kernel with network namespaces (CONFIG_NET_NS), and CAP_SYS_ADMIN", "one namespace per node"),
    ("mount and UTS namespaces", ("unshare",), ("{unshare}", "--mount", "--uts", "--propagation", "private", "true"),
     ("lab",), "a kernel with mount and UTS namespaces", "node commands and FRR daemons"),
    ("veth links", ("unshare", "ip"),
     ("{ip}", "link", "add", "anicap0", "type", "veth", "peer", "name", "anicap1"), ("lab",),
     "load the veth module (modprobe veth)", "every link of a lab"),
    ("nftables", ("unshare", "nft"), ("{nft}", "add", "table", "inet", "anicap"), ("lab",),
     "load the nf_tables module (modprobe nf_tables)", "scenario rulesets, A1 nft statements"),
    ("user namespaces", ("unshare",), ("{unshare}", "--user", "true"), ("lab",),
     "a kernel with user namespaces (CONFIG_USER_NS) and sysctl user.max_user_namespaces > 0",
     "each node's network namespace is owned by a user namespace of its own (A0 isolation)"),
    ("memory cgroup controller", ("unshare", "sh"),
     ("{sh}", "-c", "ls /sys/fs/cgroup/memory/cgroup.procs >/dev/null 2>&1 || "
                    "grep -qw memory /sys/fs/cgroup/cgroup.controllers"), ("lab",),
     "mount the cgroup v1 memory controller at /sys/fs/cgroup/memory (or use cgroup v2 with memory)",
     "each router's memory bound: its FRR daemons and the vtysh runs on it (ani.lab.memcg)"),
    ("cgroup v1 memory and pids controllers", ("unshare", "sh"),
     ("{sh}", "-c", "ls /sys/fs/cgroup/memory/cgroup.procs /sys/fs/cgroup/pids/cgroup.procs >/dev/null"), ("a0",),
     "mount the cgroup v1 memory and pids controllers at /sys/fs/cgroup/memory and /sys/fs/cgroup/pids",
     "the per-call memory and task bounds of every A0 shell command"),
    ("A0 sandbox (bwrap)", ("unshare", "bwrap", "sh"),
     ("{bwrap}", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
      "--unshare-uts", "--unshare-ipc", "--die-with-parent", "--", "{sh}", "-c", ":"), ("a0",),
     "a kernel with PID/IPC namespaces, run as root", "every A0 shell command"),
    # faults (issue 14): no level needs it; without it the latency fault is unavailable
    ("netem (the latency fault)", ("unshare", "tc"),
     ("{tc}", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"), ("faults",),
     "a kernel with sch_netem (CONFIG_NET_SCH_NETEM; modprobe sch_netem)",
     "the latency fault (docs/faults.md); without it that kind is unavailable, never faked"),
)


@functools.lru_cache(maxsize=None)
def _probe(argv: tuple[str, ...]) -> str | None:
    """None if ``unshare --net ARGV`` succeeds (in a throw-away netns), else why not."""
    from ani.host import proc

    try:
        res = proc.run(list(argv), timeout=PROBE_TIMEOUT_S)
    except OSError as exc:
        return str(exc)
    if res.timed_out:
        return f"timed out after {PROBE_TIMEOUT_S:g} s"
    return None if res.ok else (res.stderr.strip().splitlines() or [f"exit {res.rc}"])[-1]


def kernel_findings(levels: Iterable[str] | None = None, *, lab_only: bool = False) -> list[Finding]:
    """The kernel probes that some level in ``levels`` needs (default: all probes); with
    ``lab_only`` only those every lab needs."""
    want = set(LEVELS if levels is None else levels)
    reg = registry()
    out = []
    root = os.geteuid() == 0
    for name, progs, argv, needed, fix, used in _PROBES:
        if (lab_only and "lab" not in needed) or not want & set(levels_of(needed)):
            if not (levels is None and not lab_only and "faults" in needed):  # faults: listed in full
                continue
        paths = {p: reg[p].locate() for p in progs}
        lacking = [reg[p].shown for p, path in paths.items() if path is None]
        if not root:
            err: str | None = "not tested: needs root"
        elif lacking:
            err = f"not tested: {', '.join(lacking)} missing"
        else:
            full = (paths["unshare"], "--net", *(a.format(**paths) for a in argv))
            err = _probe(tuple(str(a) for a in full))
        out.append(Finding(name=name, kind="kernel", ok=err is None, detail=err or "works",
                           fix=fix, needed_by=needed, used_for=used))
    return out


# --- all of it -----------------------------------------------------------------------------------


def findings(levels: Iterable[str] | None = None) -> list[Finding]:
    """Every check: programs, set-up packages, privilege and accounts, kernel probes (those of
    ``levels``)."""
    return program_findings() + setup_findings() + privilege_findings() + kernel_findings(levels)


def problems(levels: Iterable[str], daemons: Iterable[str] = (), found: list[Finding] | None = None) -> list[Finding]:
    """The missing items that break at least one of ``levels`` (``daemons``: the FRR daemons the
    topologies run)."""
    want = set(levels)
    daemons = set(daemons)
    found = findings(want) if found is None else found
    return [f for f in found if want & set(f.breaks(daemons))]


def unfit(levels: Iterable[str], daemons: Iterable[str] = ()) -> dict[str, list[Finding]]:
    """``{level: [missing items that break it]}`` for the levels of ``levels`` that cannot run
    here; {} when all of them can."""
    levels = list(dict.fromkeys(levels))
    daemons = set(daemons)
    out: dict[str, list[Finding]] = {}
    for f in problems(levels, daemons):
        for lv in f.breaks(daemons):
            if lv in levels:
                out.setdefault(lv, []).append(f)
    return {lv: out[lv] for lv in levels if lv in out}


def follows_from(f: Finding, missing: Iterable[Finding]) -> bool:
    """Whether ``f`` is a kernel probe that was not tested because of something else in
    ``missing`` (a program it runs, or root): naming that cause says it all."""
    if f.kind != "kernel" or not f.detail.startswith("not tested"):
        return False
    return any(m.kind == "program" or (m.kind == "privilege" and m.name == "root") for m in missing)


def describe_unfit(cells: dict[str, str], bad: dict[str, list[Finding]], noun: str = "cell") -> str:
    """One line for cells that cannot run: ``cells a2, a3t cannot run on this machine:
    /usr/lib/frr/frr-reload.py is missing (apt-get install frr-pythontools); see 'ani doctor'``.

    The programs of one package are named together (``frr: zebra, staticd, vtysh are missing
    (apt-get install frr)``); a kernel probe that was not tested because one of those programs is
    missing, or because the command does not run as root, is left out (it follows from them);
    the cells an item concerns are named in
    ``[...]`` when it is not all of them; with several packages the line ends with one
    ``apt-get install`` for all.

    Args:
        cells: ``{cell name: level}`` of the cells in question.
        bad: :func:`unfit` of their levels.
        noun: what the names are (``cell``; ``level`` for ``ani mcp serve``).
    """
    names = [c for c, lv in cells.items() if lv in bad]
    users: dict[Finding, set[str]] = {}
    for c in names:
        for f in bad[cells[c]]:
            users.setdefault(f, set()).add(c)
    groups: dict[tuple[str, frozenset[str]], list[Finding]] = {}
    for f, who in users.items():
        if follows_from(f, users):
            continue
        key = (f.package if f.kind == "program" and f.package else f"\0{f.name}", frozenset(who))
        groups.setdefault(key, []).append(f)
    parts, packages = [], []
    for (_, who), fs in groups.items():
        if len(fs) == 1:
            text = fs[0].line()
        else:
            shown = ", ".join(os.path.basename(f.name) for f in fs)
            text = f"{fs[0].package}: {shown} are missing ({fs[0].fix})"
        if len(who) < len(names):  # say which cells when it is not all of them
            text += f" [{', '.join(c for c in names if c in who)}]"
        parts.append(text)
        pkg = fs[0].package if fs[0].kind == "program" else None
        if pkg and pkg not in packages:
            packages.append(pkg)
    if len(packages) > 1:
        parts.append(f"to install them all: apt-get install {' '.join(sorted(packages))}")
    who = f"{noun}{'' if len(names) == 1 else 's'} " + ", ".join(names)
    return f"{who} cannot run on this machine: {'; '.join(parts)}; see 'ani doctor'"


def check_lab(daemons: Iterable[str] = ()) -> None:
    """Raise CapabilityMissing naming everything missing that a lab needs (root, the lab's
    programs, the FRR daemons in ``daemons``, the kernel features), each with its fix."""
    daemons = set(daemons) | {"zebra", "staticd"}
    found = program_findings() + privilege_findings() + kernel_findings(lab_only=True)
    lab_needs = [f for f in found if not f.ok and ("lab" in f.needed_by or (
        "daemon" in f.needed_by and os.path.basename(f.name) in daemons))]
    lab_needs = [f for f in lab_needs if not follows_from(f, lab_needs)]
    if lab_needs:
        raise CapabilityMissing("cannot start a lab here: " + "; ".join(f.line() for f in lab_needs))
