"""nftables ``list`` commands from inside a network namespace, with no process: libnftables (the
library the ``nft`` program is a front end of) called by a short-lived thread that entered the
namespace.

The harness reads a router's ruleset before and after every change (A0's change detection,
A1's snapshots, the device model of A2 to A4, the observer's end state): some 16 000 ``nft
list`` runs in one ``make test``. Through ``lab.exec`` each was the node's process chain
(``ip netns exec``, ``unshare --uts``, two shells, ``hostname``) and ``nft``: ~9 ms of CPU.
Here it is one library call, ~1 ms (docs/performance.md, "In-process nft reads")::

    parse(["nft", "-s", "-j", "list", "ruleset"])   # -> (STATELESS | JSON, "list ruleset"); None: not a read
    run("/run/netns/ani-ab12cd-r1", ["nft", "-s", "list", "ruleset"])
    # -> ExecResult(rc=0, stdout="table inet fw {...}\\n", stderr="", ...) as nft prints it

Taken only for ``nft [-s] [-j] [-a] list <words>`` (the words plain names: no ``;``, braces
or quotes, so that it is one ``list`` command); anything else is None and the caller runs
``nft``. The output is ``nft``'s byte for byte: the program is ``nft_run_cmd_from_buffer`` of
its arguments joined by spaces with these output flags (nftables 1.0.6, src/main.c), and its
exit status is 1 when that returns non-zero, the library's error text on stderr.
``tests/integration/test_exec_reads.py`` runs both side by side on rulesets of every kind the
harness reads, and on errors. ``ANI_NFT_FAST=0`` turns it off.

Standard library only (ctypes); the library is opened on first use. One call at a time in a
process (a lock): the library's global initialisation is not known to be thread-safe.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
import time
from collections.abc import Sequence

from ani.host.proc import ExecResult
from ani.host.threads import in_netns

__all__ = ["FAST_ENV", "parse", "run"]

#: set to ``0`` to run ``nft`` for every read
FAST_ENV = "ANI_NFT_FAST"
#: ``nft`` options taken here -> libnftables output flags (libnftables.h, enum
#: ``NFT_CTX_OUTPUT_*``): ``-s`` stateless, ``-a`` handles, ``-j`` JSON
OUTPUT_FLAGS = {"-s": 1 << 2, "--stateless": 1 << 2, "-a": 1 << 3, "--handle": 1 << 3,
                "-j": 1 << 4, "--json": 1 << 4}
#: a word of a ``list`` command taken here: a keyword, family or object name
_WORD = re.compile(r"[A-Za-z0-9_.-]+")
#: the library's soname (Debian: libnftables1)
LIBRARY = "libnftables.so.1"

_lock = threading.Lock()


def parse(argv: Sequence[str]) -> tuple[int, str] | None:
    """``(output flags, command)`` of ``argv`` if it is a read taken here (``nft`` or a path
    ending in ``/nft``; options of :data:`OUTPUT_FLAGS`; then ``list`` and plain words, joined
    by spaces as ``nft`` joins them), else None."""
    if not argv or os.path.basename(str(argv[0])) != "nft":
        return None
    flags, i = 0, 1
    while i < len(argv) and str(argv[i]).startswith("-"):
        bit = OUTPUT_FLAGS.get(str(argv[i]))
        if bit is None:
            return None
        flags |= bit
        i += 1
    words = [str(a) for a in argv[i:]]
    if len(words) < 2 or words[0] != "list" or not all(_WORD.fullmatch(w) for w in words):
        return None
    return flags, " ".join(words)


def run(netns_path: str, argv: Sequence[str]) -> ExecResult | None:
    """``argv`` (an ``nft ... list ...`` read, :func:`parse`) answered in the network namespace
    at ``netns_path`` as ``nft`` answers it there: ``ExecResult(rc 0 or 1, stdout, stderr,
    timed_out=False, elapsed_s)``. None when it is not taken here (another command,
    ``ANI_NFT_FAST=0``, no libnftables, the namespace cannot be entered): the caller runs
    ``nft``, which gives its own answer. Raises nothing."""
    parsed = parse(argv)
    if parsed is None or os.environ.get(FAST_ENV) == "0":
        return None
    lib = _library()
    if lib is None:
        return None
    flags, command = parsed
    t0 = time.monotonic()
    try:
        with _lock:
            rc, out, err = in_netns(netns_path, lambda: _call(lib, flags, command))
    except OSError:
        return None
    return ExecResult(rc=0 if rc == 0 else 1, stdout=out, stderr=err, timed_out=False,
                      elapsed_s=time.monotonic() - t0)


def _call(lib: ctypes.CDLL, flags: int, command: str) -> tuple[int, str, str]:
    ctx = lib.nft_ctx_new(0)  # NFT_CTX_DEFAULT
    if not ctx:
        raise OSError("nft_ctx_new failed")
    try:
        lib.nft_ctx_output_set_flags(ctx, flags)
        if lib.nft_ctx_buffer_output(ctx) or lib.nft_ctx_buffer_error(ctx):
            raise OSError("nft_ctx_buffer_output failed")
        rc = lib.nft_run_cmd_from_buffer(ctx, command.encode())
        out = (lib.nft_ctx_get_output_buffer(ctx) or b"").decode("utf-8", "replace")
        err = (lib.nft_ctx_get_error_buffer(ctx) or b"").decode("utf-8", "replace")
        return rc, out, err
    finally:
        lib.nft_ctx_free(ctx)


@functools.cache
def _library() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(LIBRARY)
    except OSError:
        return None
    lib.nft_ctx_new.restype = ctypes.c_void_p
    lib.nft_ctx_new.argtypes = [ctypes.c_uint32]
    lib.nft_ctx_free.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_output_set_flags.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    for name in ("nft_ctx_buffer_output", "nft_ctx_buffer_error"):
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    for name in ("nft_ctx_get_output_buffer", "nft_ctx_get_error_buffer"):
        getattr(lib, name).argtypes = [ctypes.c_void_p]
        getattr(lib, name).restype = ctypes.c_char_p
    lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lib
