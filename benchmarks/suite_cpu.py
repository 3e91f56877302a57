#!/usr/bin/env python3
"""The CPU each test file of ``make test`` burns, FRR's daemons and every subprocess included
(issue 28 §4: the suite is bound by the two CPUs, so CPU, not wall time, says what to cut).

Usage (root; cgroup v1's ``cpuacct`` controller at ``/sys/fs/cgroup/cpuacct``)::

    PYTHONPATH=benchmarks .venv/bin/python -m pytest -n 3 --dist loadfile -p suite_cpu
    .venv/bin/python benchmarks/suite_cpu.py [DIR] [--top 40]

As a pytest plugin (``-p suite_cpu``, on the command line, not in ``PYTEST_ADDOPTS``: a test
that starts pytest itself would inherit it without the ``PYTHONPATH``), each xdist worker moves
itself into a ``cpuacct`` cgroup of its own; the daemons, servers and commands its tests start
inherit it, detached or not. With ``--dist loadfile`` a worker runs one file at a time, so the
cgroup's ``cpuacct.usage`` read before and after each test (setup, call and teardown) adds up to
the file's CPU. Each worker writes ``DIR/cpu-<worker>.json`` (``{file: [cpu s, wall s, tests]}``;
DIR: ``$ANI_SUITE_CPU_DIR``, default ``suite-cpu`` in the working directory) when it ends and
removes its cgroup.

As a script it adds the workers' files up and prints the total CPU (seconds), the unit and
integration shares, and the files that burn the most, with their CPU per second of wall time
(below 1: the file mostly waits; two cores give the suite at most 2 CPU-seconds a second).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

CPUACCT = Path("/sys/fs/cgroup/cpuacct")

_cgroup: Path | None = None
_files: dict[str, list[float]] = {}


def _out_dir() -> Path:
    return Path(os.environ.get("ANI_SUITE_CPU_DIR", "suite-cpu"))


def _usage() -> float:
    """Seconds of CPU of this worker's cgroup so far (0.0 without one)."""
    return int((_cgroup / "cpuacct.usage").read_text()) / 1e9 if _cgroup else 0.0


def pytest_configure(config: Any) -> None:
    global _cgroup
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _cgroup = CPUACCT / f"ani-suite-cpu-{os.getpid()}-{worker}"
    _cgroup.mkdir(exist_ok=True)
    (_cgroup / "cgroup.procs").write_text(str(os.getpid()))


def pytest_runtest_protocol(item: Any, nextitem: Any):  # noqa: ANN201 - a hook wrapper
    cpu0, wall0 = _usage(), time.monotonic()
    yield
    row = _files.setdefault(item.nodeid.split("::")[0], [0.0, 0.0, 0])
    row[0] += _usage() - cpu0
    row[1] += time.monotonic() - wall0
    row[2] += 1


pytest_runtest_protocol.hookwrapper = True  # type: ignore[attr-defined]


def pytest_unconfigure(config: Any) -> None:
    if _cgroup is None:
        return
    out = _out_dir()
    out.mkdir(parents=True, exist_ok=True)
    if _files:
        (out / f"cpu-{_cgroup.name}.json").write_text(json.dumps(_files, indent=0))
    # back to the parent group with every process still in it (a daemon a test's teardown is
    # still stopping): a cgroup with a process in it cannot be removed
    for pid in [str(os.getpid()), *_cgroup.joinpath("cgroup.procs").read_text().split()]:
        try:
            (_cgroup.parent / "cgroup.procs").write_text(pid)
        except OSError:
            pass  # it ended meanwhile
    try:
        _cgroup.rmdir()
    except OSError:
        pass  # a process forked into it meanwhile: left, empty once it ends


def summary(out: Path) -> dict[str, list[float]]:
    """``{file: [cpu s, wall s, tests]}`` added up over the workers' files in ``out``. Raises
    FileNotFoundError when there are none."""
    files: dict[str, list[float]] = {}
    paths = sorted(out.glob("cpu-*.json"))
    if not paths:
        raise FileNotFoundError(f"{out}: no cpu-*.json (run pytest with -p suite_cpu first)")
    for path in paths:
        for name, (cpu, wall, n) in json.loads(path.read_text()).items():
            row = files.setdefault(name, [0.0, 0.0, 0])
            row[0] += cpu
            row[1] += wall
            row[2] += n
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", type=Path, default=_out_dir())
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    files = summary(args.dir)
    cpu = sum(r[0] for r in files.values())
    unit = sum(r[0] for name, r in files.items() if name.startswith("tests/unit/"))
    print(f"CPU {cpu:.0f} s over {len(files)} files (unit tests {unit:.0f} s, integration {cpu - unit:.0f} s); "
          f"worker wall time {sum(r[1] for r in files.values()):.0f} s")
    print(f"{'CPU s':>8} {'wall s':>8} {'CPU/wall':>8} {'tests':>6}  file")
    for name, (c, w, n) in sorted(files.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{c:8.1f} {w:8.1f} {c / w if w else 0:8.2f} {n:6d}  {name}")


if __name__ == "__main__":
    main()
