"""pytest's assertion-rewrite cache of the test files, built once before the xdist workers start
(issue 28 §4; ``tests/conftest.py``'s ``pytest_sessionstart``).

pytest rewrites the ``assert`` statements of every test module it imports and caches the result
in ``__pycache__/<name>.cpython-311-pytest-<version>.pyc`` (checked by the source's hash) --
unless ``PYTHONDONTWRITEBYTECODE`` is set, as on this machine and in many CI images. Then every
xdist worker collected the whole suite by rewriting all ~350 test files itself, all at the
start, before any test ran (``py-spy`` of four workers: 62 % of their first 150 s). Each worker
still *reads* the cache when it cannot write it, so the controller writes it once, on every
core, and the workers load it: ``pytest -n 2 --collect-only`` 31.1 CPU-s before, 15.1 with the
cache (docs/performance.md, "Sixth round"), about 7.5 CPU-s less per worker.

Nothing here changes what a test runs: a file whose cache is missing or stale (its source
changed) is rewritten by the worker as before, and any error here only skips the head start.
"""

from __future__ import annotations

import fnmatch
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

_CONFIG: Any = None  # the controller's pytest config, inherited by the forked pool


class _NoTrace:
    """What ``_write_pyc`` needs of pytest's assertion state (it only traces errors)."""

    @staticmethod
    def trace(*_args: Any) -> None:
        return None


def wanted(config: Any) -> bool:
    """Whether to build the cache: the xdist controller of a run with workers, rewriting
    asserts, where no process writes bytecode itself (``sys.dont_write_bytecode``)."""
    return (sys.dont_write_bytecode and not hasattr(config, "workerinput")
            and config.getoption("dist", "no") != "no" and config.getoption("assertmode", None) == "rewrite")


def files_to_rewrite(config: Any) -> list[Path]:
    """The files pytest rewrites when it collects this session's arguments (``testpaths`` when
    none were given): those matching ``python_files``, and the ``conftest.py`` files on the way
    from the root directory to them."""
    pats = config.getini("python_files")
    base = Path(config.invocation_params.dir)
    roots = [(base / a.split("::")[0]).resolve() for a in config.args]
    out: set[Path] = set()
    for root in roots:
        found = root.rglob("*.py") if root.is_dir() else [root]
        out.update(f for f in found if "__pycache__" not in f.parts
                   and any(fnmatch.fnmatch(f.name, p) for p in [*pats, "conftest.py"]))
        for d in [root, *root.parents]:
            if (d / "conftest.py").is_file():
                out.add(d / "conftest.py")
            if d == config.rootpath:
                break
    return sorted(out)


def _rewrite(fn: str) -> bool:
    """Rewrite one file into pytest's cache unless a valid entry is there. True if written."""
    from _pytest.assertion import rewrite

    path = Path(fn)
    pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
    if rewrite._read_pyc(path, pyc) is not None:
        return False
    source_hash, co = rewrite._rewrite_test(path, _CONFIG)
    return rewrite.try_makedirs(pyc.parent) and rewrite._write_pyc(_NoTrace(), co, source_hash, pyc)  # type: ignore[arg-type]


def build(config: Any) -> int:
    """Write the rewrite cache of every test file, one process per core (forked, so each has
    ``config``). Returns the number of files written; 0 and nothing done when not :func:`wanted`
    or on any error."""
    global _CONFIG
    if not wanted(config):
        return 0
    try:
        files = [str(f) for f in files_to_rewrite(config)]
        _CONFIG = config
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1,
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            return sum(pool.map(_rewrite, files, chunksize=8))
    except Exception:  # noqa: BLE001 - the workers rewrite for themselves, as they always did
        return 0
    finally:
        _CONFIG = None
