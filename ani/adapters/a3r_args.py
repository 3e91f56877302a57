"""Argument models and the workflow text of the A3-R tools (:mod:`ani.adapters.a3r`), and the
adapter's option checking."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ani.adapters.a3t_args import BUSY_TIMEOUT_DESCRIPTION, BUSY_TIMEOUT_S
from ani.adapters.base import Args
from ani.adapters.options import Options
from ani.sot.bounds import MAX_MESSAGE_BYTES, MAX_OPS, MAX_REVISION_CHARS, REVISION_FORM

#: the longest path argument (devices/<router>.json: a name of at most 200 bytes)
MAX_PATH_CHARS = 256
#: the longest router name in drift(devices=...), and how many
MAX_NAME_CHARS, MAX_NAMES = 200, 1000

WORKFLOW = (
    "The desired state of every router is a JSON file devices/<router>.json in a git repository "
    "(the source of truth); a reconciler makes the routers match its HEAD. Workflow: sot_list; "
    "sot_read(path) (note the revision it reports); sot_patch(path, patch, base_revision) with an "
    "RFC 6902 JSON Patch (edits the working tree only; validated and atomic; refused as a conflict "
    "when the file changed since base_revision); sot_diff to review; sot_commit(message) commits and "
    "reconciles (the result says converged / non-convergent / failed and what was sent to which "
    "router); drift() shows desired vs actual per router; reconcile() reverts out-of-band changes; "
    "sot_log and sot_revert(revision) work on the history. Paths name things: "
    "/interfaces/eth0/addresses, /bgp/neighbors/198.51.100.2/remote_as, "
    "/prefix_lists/PL/entries/10, /route_maps/RM/entries/10/set_local_preference, "
    "/static_routes/192.0.2.0~124 ('/' inside a key is written ~1, '~' is ~0), "
    "/firewall/sets/tenant_a/elements/- (append to an array)."
)

class A3ROptions(Options):
    """Options of the A3-R adapter (also A4's)."""

    max_tries: int = Field(2, ge=1, description="applies per reconcile before non-convergent")
    keep_repo: bool = Field(False, description="keep the repository in the lab's dir after close()")
    busy_timeout_s: float = Field(BUSY_TIMEOUT_S, gt=0, description=BUSY_TIMEOUT_DESCRIPTION)


class PathArgs(Args):
    path: str = Field(max_length=MAX_PATH_CHARS,
                      description="File in the source of truth, e.g. devices/e1.json (see sot_list)")


class ReadArgs(PathArgs):
    revision: str | None = Field(
        default=None, max_length=MAX_REVISION_CHARS,
        description="Read the file as committed at this revision (full or abbreviated sha, HEAD, HEAD~N); "
        "omit for the working tree. " + REVISION_FORM,
    )


class PatchArgs(PathArgs):
    patch: list[dict[str, Any]] = Field(
        min_length=1, max_length=MAX_OPS,
        description=(
            "RFC 6902 JSON Patch: a list of operations, e.g. "
            '[{"op": "add", "path": "/prefix_lists/PL-TENANTS/entries/30", '
            '"value": {"action": "permit", "prefix": "10.1.3.0/24"}}]; ops: add, remove, replace, '
            "move, copy, test. Applied atomically: if one operation fails, nothing changes. At most "
            f"{MAX_OPS} operations; the file may not grow past 1 MiB (checked after each operation)."
        ),
    )
    base_revision: str = Field(
        max_length=40,
        description="The revision (HEAD) your edit is based on, as reported by sot_read / sot_list / sot_log; "
        "(7 to 40 hex digits); refused with a conflict error when the file changed since"
    )


class CommitArgs(Args):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_BYTES,
                         description=f"Commit message: what and why (at most {MAX_MESSAGE_BYTES} bytes; "
                         "no control characters but newline and tab)")


class LogArgs(Args):
    n: int = Field(default=10, ge=1, le=200, description="How many commits, newest first")


class RevertArgs(Args):
    revision: str = Field(max_length=MAX_REVISION_CHARS,
                          description="The commit to undo (full or abbreviated sha from sot_log, or HEAD~N). "
                          + REVISION_FORM)


class DriftArgs(Args):
    devices: list[Annotated[str, Field(max_length=MAX_NAME_CHARS)]] = Field(
        default_factory=list, max_length=MAX_NAMES, description="Routers to check; empty for all")
