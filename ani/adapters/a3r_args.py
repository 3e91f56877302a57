"""Argument models and the workflow text of the A3-R tools (:mod:`ani.adapters.a3r`), and the
adapter's option checking."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ani.adapters.base import Args
from ani.errors import ConfigError

WORKFLOW = (
    "The desired state of every router is a JSON file devices/<router>.json in a git repository "
    "(the source of truth); a reconciler makes the routers match its HEAD. Workflow: sot_list; "
    "sot_read(path) (note the revision it reports); sot_patch(path, patch, base_revision) with an "
    "RFC 6902 JSON Patch (edits the working tree only; validated and atomic; refused as a conflict "
    "when HEAD moved since base_revision); sot_diff to review; sot_commit(message) commits and "
    "reconciles (the result says converged / non-convergent / failed and what was sent to which "
    "router); drift() shows desired vs actual per router; reconcile() reverts out-of-band changes; "
    "sot_log and sot_revert(revision) work on the history. Paths name things: "
    "/interfaces/eth0/addresses, /bgp/neighbors/198.51.100.2/remote_as, "
    "/prefix_lists/PL/entries/10, /route_maps/RM/entries/10/set_local_preference, "
    "/static_routes/192.0.2.0~124 ('/' inside a key is written ~1, '~' is ~0), "
    "/firewall/sets/tenant_a/elements/- (append to an array)."
)

#: options of the adapter: name -> (type, default)
OPTIONS: dict[str, tuple[type, Any]] = {
    "max_tries": (int, 2),
    "keep_repo": (bool, False),
}


def check_options(options: dict[str, Any], level: str = "a3r", extra: dict[str, tuple[type, Any]] | None = None) -> dict[str, Any]:
    """The options with defaults filled in. Raises ConfigError for an unknown key or a value of
    the wrong type (a bool is not an int; an int is not a bool) or ``max_tries`` < 1."""
    known = {**OPTIONS, **(extra or {})}
    unknown = set(options) - set(known)
    if unknown:
        raise ConfigError(f"{level} options: unknown {sorted(unknown)}; known: {sorted(known)}")
    out: dict[str, Any] = {}
    for key, (kind, default) in known.items():
        v = options.get(key, default)
        ok = isinstance(v, kind) and not (kind is int and isinstance(v, bool))
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            v, ok = float(v), True
        if not ok and not (v is None and default is None):
            raise ConfigError(f"{level} options.{key} must be {kind.__name__}, got {v!r}")
        out[key] = v
    if out["max_tries"] < 1:
        raise ConfigError(f"{level} options.max_tries must be >= 1, got {out['max_tries']}")
    return out


class PathArgs(Args):
    path: str = Field(description="File in the source of truth, e.g. devices/e1.json (see sot_list)")


class ReadArgs(PathArgs):
    revision: str | None = Field(
        default=None,
        description="Read the file as committed at this revision (full or abbreviated sha); omit for the working tree",
    )


class PatchArgs(PathArgs):
    patch: list[dict[str, Any]] = Field(
        min_length=1,
        description=(
            "RFC 6902 JSON Patch: a list of operations, e.g. "
            '[{"op": "add", "path": "/prefix_lists/PL-TENANTS/entries/30", '
            '"value": {"action": "permit", "prefix": "10.1.3.0/24"}}]; ops: add, remove, replace, '
            "move, copy, test. Applied atomically: if one operation fails, nothing changes."
        ),
    )
    base_revision: str = Field(
        description="The revision (HEAD) your edit is based on, as reported by sot_read / sot_list / sot_log; "
        "a stale one is refused with a conflict error"
    )


class CommitArgs(Args):
    message: str = Field(min_length=1, description="Commit message: what and why")


class LogArgs(Args):
    n: int = Field(default=10, ge=1, le=200, description="How many commits, newest first")


class RevertArgs(Args):
    revision: str = Field(description="The commit to undo (full or abbreviated sha, from sot_log)")


class DriftArgs(Args):
    devices: list[str] = Field(default_factory=list, description="Routers to check; empty for all")
