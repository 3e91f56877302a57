"""Provenance of a run and of a campaign folder (issue 26 §3): what produced the numbers, so two
campaigns can be compared honestly later.

:func:`environment` (collected once per process, cached: a few short subprocesses the first
time, nothing after)::

    {"ani_sdk": "0.1.0", "git_commit": "aaffd40...", "git_dirty": False,
     "frr": "8.4.4-1.1~deb12u2", "kernel": "6.1.0-18-amd64", "python": "3.11.2"}

``git_commit`` / ``git_dirty`` are None when ani is not installed from a git checkout (a wheel);
``frr`` is the ``frr`` package's version (dpkg), else ``zebra --version``'s, else None. Nothing
here fails: a probe that cannot answer gives None.

:func:`agent_identity` names the agent without its secrets: ``{"kind": "llm", "model":
"qwen2.5:7b", "endpoint": "127.0.0.1:11434"}`` (the base URL's host and port only: no path, no
query, no key); ``{"kind": "scripted"}`` for the scripted agent. :func:`run_provenance` is what
every :class:`~ani.campaign.results.RunRecord` carries (``provenance``); :func:`write_provenance`
appends one session to the folder's ``provenance.json`` (a ``--resume`` adds its own).
"""

from __future__ import annotations

import functools
import json
import platform
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PROVENANCE_FILE", "agent_identity", "environment", "run_provenance", "write_provenance"]

#: the campaign folder's provenance file
PROVENANCE_FILE = "provenance.json"
#: seconds a probe (git, dpkg-query, zebra --version) may take
PROBE_TIMEOUT_S = 5.0


def _out(argv: list[str], cwd: Path | None = None) -> str | None:
    """``argv``'s stripped stdout, or None (not installed, failed, timed out)."""
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, cwd=cwd,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def _source_root() -> Path:
    import ani

    return Path(ani.__file__).resolve().parent.parent


def _git() -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout ani is imported from; (None, None) if it is not one."""
    root = _source_root()
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():  # a worktree's .git is a file
        return None, None
    commit = _out([git, "-C", str(root), "rev-parse", "HEAD"])
    if not commit:
        return None, None
    status = _out([git, "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
    return commit, (None if status is None else bool(status))


def _sdk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ani-sdk")
    except PackageNotFoundError:
        from ani import __version__

        return __version__


def _frr_version() -> str | None:
    """The ``frr`` package's version (dpkg), else the version ``zebra --version`` prints."""
    dpkg = shutil.which("dpkg-query")
    if dpkg is not None:
        v = _out([dpkg, "-W", "-f=${Version}", "frr"])
        if v:
            return v
    from ani.host.programs import registry

    zebra = registry().get("zebra")
    found = zebra.locate() if zebra is not None else None
    first = (_out([found, "--version"]) or "").splitlines()[:1] if found else []
    return first[0].split()[-1] if first and first[0].split() else None


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    """The SDK, FRR, kernel and Python versions of this process's host (module doc); cached."""
    commit, dirty = _git()
    return {"ani_sdk": _sdk_version(), "git_commit": commit, "git_dirty": dirty, "frr": _frr_version(),
            "kernel": platform.release() or None, "python": platform.python_version()}


def agent_identity(agent: dict[str, Any] | None) -> dict[str, Any]:
    """``{"kind", "model", "endpoint"}`` of an agent config (``model`` / ``endpoint`` only when
    given; ``endpoint`` is ``host[:port]`` of ``base_url``, never its path, query or a key)."""
    agent = agent or {}
    out: dict[str, Any] = {"kind": str(agent.get("kind", "scripted"))}
    if agent.get("model") is not None:
        out["model"] = str(agent["model"])
    if agent.get("base_url"):
        try:
            parts = urlsplit(str(agent["base_url"]))
            host = parts.hostname
            out["endpoint"] = (f"{host}:{parts.port}" if parts.port else host) if host else None
        except ValueError:  # a malformed URL: say nothing rather than echo it
            out["endpoint"] = None
    return out


def run_provenance(agent: dict[str, Any] | None) -> dict[str, Any]:
    """What a run record carries: :func:`environment` and ``agent`` (:func:`agent_identity`)."""
    return {**environment(), "agent": agent_identity(agent)}


def write_provenance(out_dir: str | Path, agents: dict[str, dict[str, Any]]) -> Path:
    """Append this session to ``out_dir/provenance.json``: ``{"sessions": [{"started": ISO time,
    **environment(), "agents": {cell: identity}}]}`` (an unreadable file is started afresh).

    Raises OSError: the folder cannot be written.
    """
    path = Path(out_dir) / PROVENANCE_FILE
    sessions: list[Any] = []
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(old, dict) and isinstance(old.get("sessions"), list):
            sessions = old["sessions"]
    except (OSError, ValueError):
        pass
    sessions.append({"started": datetime.now(UTC).isoformat(timespec="seconds"), **environment(),
                     "agents": {cell: agent_identity(a) for cell, a in agents.items()}})
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"sessions": sessions}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
