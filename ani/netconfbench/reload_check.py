"""The command score's cross-check: FRR's own ``frr-reload.py --test`` against hier-config's diff
(issue 15 §3: "frr-reload.py --test can cross-check the diff").

    crosscheck(initial, final, applied)      # {router: RouterCrosscheck(agree, only_hier, only_frr, ...)}, note

How it is computed, per router (the routers in parallel, at most :data:`WORKERS` at a time)
    1. The initial and the final configuration are written as the FRR text hier-config diffs
       (:func:`ani.device.remediation.frr_text`), with the ``exit`` / ``exit-address-family``
       lines vtysh needs to read it back (:func:`vtysh_text`), to two files in a temporary
       directory (with an empty ``vtysh.conf``).
    2. ``frr-reload.py --test --input INITIAL --confdir TMP --bindir <vtysh's> FINAL`` runs on the
       host: ``--input`` makes it read the "running" configuration from the file instead of
       asking the daemons, so no daemon, no lab namespace and no pathspace is needed (it only
       runs ``vtysh -m -f`` on both files to mark their blocks, which vtysh does offline). It
       prints FRR's difference: ``Lines To Delete`` and ``Lines To Add``, each entry the block
       headers then the line (:func:`parse_test_output`).
    3. Its entries are put in the form of :func:`ani.device.changes.config_changes`
       (:func:`reload_changes`): ``+ <block> / <line>`` for a line to add, ``- <block> /
       <line>`` for one to delete; frr-reload's ``no X`` lines are read back as what they do
       (an added ``no X`` that the final configuration holds is ``+ no X``, otherwise it deletes
       ``X``: frr-reload moves some deletions, ``ip route``, ``ip prefix-list``, into its add
       list); a whole block deleted (``no router ospf``) is its leaf lines in the initial
       configuration; a block header added with its lines is not a leaf of its own; the
       prefix-list sequence numbers are dropped as ``config_changes`` drops them.
    4. Agreement: the two multisets are equal (``nft / ...`` changes left out of hier-config's
       side: frr-reload knows FRR only). ``only_hier`` / ``only_frr``: what one side has and the
       other has not.

What it shows (measured): hier-config's difference skips every ``no ...`` line of a block that
both configurations have ("Not dealing with negations and defaults for now", hier-config 3.7
``HConfigBase._difference``): a ``no bgp ebgp-requires-policy`` added under an existing
``router bgp`` is not among the applied commands; frr-reload lists it, so the cross-check
reports it in ``only_frr``. (A ``no`` line inside a *new* block is copied with the block and
counted by both.)

If frr-reload.py (package frr-pythontools) or vtysh is missing, nothing is run and the note
says so; a router whose run fails (a file vtysh cannot read, a timeout) has ``agree`` None and
``error``. Nothing here raises for a failing frr-reload.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ani.host.threads import ContextPool

__all__ = ["WORKERS", "RouterCrosscheck", "compare", "crosscheck", "frr_reload_test",
           "parse_test_output", "reload_changes", "vtysh_text"]

#: routers cross-checked at once
WORKERS = 4
#: bound of one frr-reload --test run, seconds
TIMEOUT_S = 30.0


class RouterCrosscheck(BaseModel):
    """One router's cross-check (``CommandScore.crosscheck[router]``).

    Attributes:
        agree: hier-config's and frr-reload's changes are the same multiset (None: frr-reload
            did not give a difference, ``error`` says why).
        only_hier: changes only hier-config's diff has (``"+ <block> / <line>"``).
        only_frr: changes only frr-reload's has.
        frr: frr-reload's changes in that form (module doc, step 3).
        elapsed_s: wall time of the frr-reload run, seconds.
        error: why there is no comparison ('' otherwise).
    """

    agree: bool | None = None
    only_hier: list[str] = Field(default_factory=list)
    only_frr: list[str] = Field(default_factory=list)
    frr: list[str] = Field(default_factory=list)
    elapsed_s: float = 0.0
    error: str = ""


# -- the files -------------------------------------------------------------------------------


def vtysh_text(text: str) -> str:
    """Indented FRR text (one space per level, no block ends: :func:`frr_text`'s form) with the
    block ends vtysh reads: ``exit-address-family`` after an address family, ``exit`` after
    any other block."""
    out: list[str] = []
    stack: list[tuple[int, str]] = []

    def close(depth: int) -> None:
        while stack and stack[-1][0] >= depth:
            d, header = stack.pop()
            out.append(" " * d + ("exit-address-family" if header.startswith("address-family ") else "exit"))

    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for i, raw in enumerate(lines):
        depth = len(raw) - len(raw.lstrip(" "))
        close(depth)
        out.append(raw)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt and len(nxt) - len(nxt.lstrip(" ")) > depth:
            stack.append((depth, raw.strip()))
    close(0)
    return "\n".join(out) + "\n"


def _tree_leaves(text: str) -> list[tuple[str, ...]]:
    """The leaf lines of indented FRR text, each with its block headers."""
    out: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for i, raw in enumerate(lines):
        depth = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        path = (*(h for _, h in stack), " ".join(raw.split()))
        if nxt and len(nxt) - len(nxt.lstrip(" ")) > depth:
            stack.append((depth, path[-1]))
        else:
            out.append(path)
    return out


# -- frr-reload ------------------------------------------------------------------------------


def _programs() -> tuple[str | None, str | None, str]:
    """``(frr-reload.py path, vtysh path, '')`` or with None and why (not raising: a missing
    program here is a diagnostic left out, not a host fault of the run)."""
    from ani.host.programs import registry

    reg = registry()
    reload_p, vtysh_p = reg["frr-reload.py"], reg["vtysh"]
    fr, vt = reload_p.locate(), vtysh_p.locate()
    missing = [f"{p.shown} is missing ({p.fix})" for p, found in ((reload_p, fr), (vtysh_p, vt)) if found is None]
    return fr, vt, "; ".join(missing)


def frr_reload_test(initial_text: str, final_text: str, *, frr_reload: str, vtysh: str,
                    timeout: float = TIMEOUT_S) -> tuple[str, float]:
    """``(stdout, elapsed_s)`` of ``frr-reload.py --test`` from ``initial_text`` (as the
    running configuration) to ``final_text`` (module doc, step 2). Raises RuntimeError with
    frr-reload's own error lines when it fails (exit status not 0, an ERROR line: e.g. a line
    vtysh does not know), subprocess.TimeoutExpired after ``timeout`` seconds."""
    from ani.device.frr_reload import error_lines

    with tempfile.TemporaryDirectory(prefix="ani-frr-reload-test-") as tmp:
        d = Path(tmp)
        (d / "vtysh.conf").write_text("")
        running, target = d / "running.conf", d / "frr.conf"
        running.write_text(vtysh_text(initial_text), encoding="utf-8")
        target.write_text(vtysh_text(final_text), encoding="utf-8")
        argv = [frr_reload, "--test", "--log-level", "warning", "--input", str(running),
                "--confdir", tmp, "--rundir", tmp, "--bindir", os.path.dirname(vtysh), str(target)]
        t0 = time.monotonic()
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tmp, check=False)
        elapsed = time.monotonic() - t0
    errors = error_lines(res.stderr)
    if res.returncode != 0 or errors:
        raise RuntimeError(f"frr-reload.py --test exited {res.returncode}: " + ("; ".join(errors) or res.stderr.strip()[-300:]))
    return res.stdout, elapsed


def parse_test_output(stdout: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``(to delete, to add)`` of ``frr-reload.py --test`` output: each entry the path of a
    printed line that no deeper line follows (block headers, then the line), as printed (a
    deletion is its ``no`` form). Raises ValueError on a line outside both sections."""
    sections: dict[str, list[tuple[str, ...]]] = {"Lines To Delete": [], "Lines To Add": []}
    current: list[tuple[str, ...]] | None = None
    stack: list[tuple[int, str]] = []
    pending: tuple[int, tuple[str, ...]] | None = None
    raw_lines = stdout.splitlines()

    def flush(next_depth: int) -> None:
        nonlocal pending
        if pending is not None and current is not None and next_depth <= pending[0]:
            current.append(pending[1])
        pending = None

    for i, raw in enumerate(raw_lines):
        line = raw.rstrip()
        if not line.strip():
            continue
        if line in sections:
            flush(0)
            current, stack = sections[line], []
            continue
        if set(line) == {"="}:
            continue
        if current is None:
            raise ValueError(f"frr-reload --test output: line {i + 1} outside its sections: {line!r}")
        depth = len(line) - len(line.lstrip(" "))
        flush(depth)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        path = (*(h for _, h in stack), " ".join(line.split()))
        stack.append((depth, path[-1]))
        pending = (depth, path)
    flush(0)
    return sections["Lines To Delete"], sections["Lines To Add"]


def reload_changes(deletes: Sequence[tuple[str, ...]], adds: Sequence[tuple[str, ...]],
                   initial_text: str, final_text: str) -> list[str]:
    """frr-reload's entries (:func:`parse_test_output`) as ``config_changes`` strings (module
    doc, step 3): ``- ...`` first, then ``+ ...``, each group in frr-reload's order. Pure."""
    from ani.device.changes import _norm

    init_leaves = _tree_leaves(initial_text)
    final_paths = {p[: k + 1] for p in _tree_leaves(final_text) for k in range(len(p))}
    minus: list[tuple[str, ...]] = []
    plus: list[tuple[str, ...]] = []

    def deleted(path: tuple[str, ...]) -> None:
        under = [leaf for leaf in init_leaves if leaf[: len(path)] == path]
        minus.extend(under or [path])

    for path in deletes:
        *ctx, last = path
        deleted((*ctx, last[3:] if last.startswith("no ") else f"no {last}"))
    for path in adds:
        *ctx, last = path
        if last.startswith("no ") and path not in final_paths:
            deleted((*ctx, last[3:]))  # a deletion frr-reload sends in its add list
        else:
            plus.append(path)
    plus = [p for p in plus if not any(len(q) > len(p) and q[: len(p)] == p for q in plus)]
    return ([f"- {' / '.join(_norm(x) for x in p)}" for p in minus]
            + [f"+ {' / '.join(_norm(x) for x in p)}" for p in plus])


def compare(hier: Sequence[str], frr: Sequence[str]) -> RouterCrosscheck:
    """hier-config's changes of a router (``config_changes``; ``nft / `` ones left out) against
    frr-reload's (:func:`reload_changes`), as multisets. Pure."""
    h = Counter(c for c in hier if not c[2:].startswith("nft / "))
    f = Counter(frr)
    return RouterCrosscheck(agree=h == f, only_hier=sorted((h - f).elements()),
                            only_frr=sorted((f - h).elements()), frr=list(frr))


def _one(initial_text: str, final_text: str, hier: Sequence[str], fr: str, vt: str) -> RouterCrosscheck:
    try:
        out, elapsed = frr_reload_test(initial_text, final_text, frr_reload=fr, vtysh=vt)
        dels, adds = parse_test_output(out)
        res = compare(hier, reload_changes(dels, adds, initial_text, final_text))
    except subprocess.TimeoutExpired:
        return RouterCrosscheck(error=f"frr-reload.py --test: no result within {TIMEOUT_S:g} s")
    except (OSError, RuntimeError, ValueError) as exc:
        return RouterCrosscheck(error=str(exc))
    return res.model_copy(update={"elapsed_s": round(elapsed, 3)})


def crosscheck(initial: Mapping[str, Any], final: Mapping[str, Any],
               applied: Mapping[str, Sequence[str]]) -> tuple[dict[str, RouterCrosscheck] | None, str]:
    """``({router: RouterCrosscheck}, note)`` for the routers ``applied`` has (``initial`` /
    ``final``: ``{router: DeviceConfig}``; ``applied``: :func:`ani.netconfbench.command_score.
    applied_changes` of them); ``(None, why)`` when frr-reload.py or vtysh is missing."""
    from ani.device.remediation import frr_text

    fr, vt, missing = _programs()
    if fr is None or vt is None:
        return None, f"not cross-checked with frr-reload: {missing}"
    routers = [r for r in applied if r in initial and r in final]
    with ContextPool(max_workers=max(1, min(WORKERS, len(routers)))) as pool:
        results = list(pool.map(lambda r: _one(frr_text(initial[r]), frr_text(final[r]), applied[r], fr, vt), routers))
    out = dict(zip(routers, results, strict=True))
    bad = [r for r, c in out.items() if c.agree is None]
    differ = [r for r, c in out.items() if c.agree is False]
    note = "; ".join(x for x in (
        f"frr-reload disagrees with hier-config on {', '.join(differ)}" if differ else "",
        f"frr-reload failed on {', '.join(bad)}" if bad else "") if x)
    return out, note
