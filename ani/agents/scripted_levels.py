"""The scripted baseline agent carries out a task's typed changes at each level.

Called by :class:`ani.agents.scripted.ScriptedAgent` for every task class but ``onboard-site``
(whose own scripts stay as they are), and for every class when it makes mistakes (its
``transform``, :class:`Carry`: what is carried out instead of the planned changes, the same way). The changes come from
:func:`ani.agents.scripted_tasks.changes_for` on the configs read through the level's tools;
then, per level (steps are tool calls):

- **A3-T** (``plan`` + ``apply``): ``get_state(r, "config")`` and ``get_state(r, "firewall")``
  of every router; ``plan`` (must succeed and change something), ``apply``: ONE transaction.
- **A3-R** (``sot_commit``, no service tools): ``sot_list``, ``sot_read`` of every
  ``devices/<router>.json``; the changes compiled locally (``ani.intents.compile_changes``)
  against that desired state; one ``sot_patch`` per router that changes (the RFC 6902 diff of
  its document, ``jsonpatch.make_patch``), all on the same ``base_revision``; one
  ``sot_commit`` that must converge.
- **A4** (``sot_commit`` + service tools): as A3-R for the changes without a service-file form
  (a service file holds only its type's creating action, ``ani.sot.services.CREATING_ACTIONS``:
  every ``remove`` and ``move`` is compiled into the routers' device files), then one new
  ``services/<type>-<id>.json`` per creating change (``onboard``, ``add``, ``apply``), as
  ``ani.agents.scripted_a4`` writes a site; one ``sot_commit``. The device-file changes come
  first in every class's plan, so compiling the service files on top gives what compiling the
  list in order gives; a plan with a device-file change after a creating one goes wholly into
  the device files.
- **A0 / A1 / A2**: ``read_configs`` of every router, the changes compiled locally, and
  ``push_configs`` of the routers that change (``ani.agents.scripted_push``).

Then the outcome is checked through the level's own read tools before submitting: each site the
changes add, move or repair must be in the routing table of another edge, each removed site's
prefix must be gone from it (``get_state`` at A3-T / A4 / A2, ``show ip route`` at A0 / A1, at
most ``validate_tries`` looks ``validate_pause_s`` apart); at A3-R ``drift`` of the changed
routers must be empty. Any refusal or surprise raises :class:`ani.agents.scripted.AgentFailed`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Any

from ani.agents.base import AgentTask, StepCounter
from ani.agents.scripted import AgentFailed, _intent_level, need
from ani.device.model import DeviceConfig


def has_service_file_form(change: dict[str, Any]) -> bool:
    """Whether an A4 service file can hold ``change``: its action is its type's creating action
    (``ani.sot.services.CREATING_ACTIONS``, from the service-class registry)."""
    from ani.sot.services import CREATING_ACTIONS

    return CREATING_ACTIONS.get(change["type"]) == change["action"]


@dataclass
class Carry:
    """What :func:`solve` carries out: the typed ``changes`` and the intended configurations
    ``after`` of the routers that change (by default: the planned changes and what they
    compile to). ``by_configs``: ``after`` is not what ``changes`` compile to (a device-level
    edit): A4 then writes the device files as A3-R does, and A3-T (typed changes only) refuses
    it. ``times``: how many times it is carried out (2: a retry that sends it again, as it was
    computed from the first read); a refused repetition does not fail the run, its error is
    kept in ``repeat_error``."""

    changes: list[dict[str, Any]]
    after: dict[str, DeviceConfig]
    by_configs: bool = False
    times: int = 1
    repeat_error: str | None = None


#: ``transform(level, changes, before, after) -> Carry``: what :func:`solve` carries out
#: instead of the planned ``changes`` and their intended configs ``after`` (the agent that
#: makes mistakes, :mod:`ani.agents.scripted_mistakes`); ``level``: ``a0`` .. ``a4``
Transform = Callable[[str, list[dict[str, Any]], dict[str, DeviceConfig], dict[str, DeviceConfig]], Carry]


def solve(task: AgentTask, steps: StepCounter, names: set[str], *, validate_tries: int = 6,
          validate_pause_s: float = 0.5, transform: Transform | None = None) -> list[dict[str, Any]]:
    """Carry out ``task`` through the tools ``names`` (see the module doc); returns the changes
    made. ``transform`` (see :data:`Transform`, :class:`Carry`): given the level's name, the
    planned changes, the configs read and the intended ones, what to carry out instead; the
    level's way of carrying it out and the validation of what was carried out are the same.
    Raises AgentFailed."""
    level = _intent_level(names)
    routers = _routers(steps)
    docs: dict[str, dict] = {}
    head, services = "", {}
    if level == "a3t":
        before = _read_a3t(steps, routers)
    elif level in ("a3r", "a4"):
        docs, head, services = _read_sot(steps, level)
        before = _sot_configs(docs, services)
    else:
        before = _push_module().read_configs(steps, names, routers)
    from ani.agents.scripted_tasks import changes_for

    changes = changes_for(task, before)
    carry = Carry(changes, _compile(changes, before))
    if transform is not None:
        carry = transform(level or _push_module().device_level(names), changes, before, carry.after)
    for n in range(carry.times):
        try:
            _carry_out(steps, level, names, task, carry, before, (docs, head, services))
        except AgentFailed as exc:
            if n == 0:
                raise
            carry.repeat_error = str(exc)
    _validate(steps, level, names, task, before, {**before, **carry.after}, carry.after, validate_tries, validate_pause_s)
    return carry.changes


def _carry_out(steps: StepCounter, level: str | None, names: set[str], task: AgentTask, carry: Carry,
               before: dict[str, DeviceConfig], sot: tuple[dict[str, dict], str, dict[str, dict]]) -> None:
    """``carry`` the level's way (module doc); ``sot``: the source of truth read (A3-R / A4)."""
    changes, after = carry.changes, carry.after
    docs, head, services = sot
    if level == "a3t":
        if carry.by_configs:
            raise AgentFailed("A3-T takes typed changes only: a device-level edit cannot be carried out")
        _apply_a3t(steps, changes, after)
    elif level == "a3r" or (level == "a4" and carry.by_configs):
        _commit_a3r(steps, docs, head, after, _message(task, changes))
    elif level == "a4":
        _commit_a4(steps, docs, head, changes, services, _message(task, changes))
    else:
        _push_module().push_configs(steps, names, {r: before[r] for r in after}, after)


def _push_module() -> Any:
    try:
        from ani.agents import scripted_push
    except ImportError:
        raise AgentFailed("the device levels (A0 / A1 / A2) need ani.agents.scripted_push, which is not there") from None
    return scripted_push


def _routers(steps: StepCounter) -> list[str]:
    topo = need(steps.call("get_topology", {}), "get_topology").get("topology", {})
    routers = sorted(n["name"] for n in topo.get("nodes", []) if n.get("role") == "router")
    if not routers:
        raise AgentFailed("get_topology lists no router")
    return routers


def _compile(changes: list[dict[str, Any]], configs: dict[str, DeviceConfig]) -> dict[str, DeviceConfig]:
    """The intended configs of the routers that change. Raises AgentFailed naming the change."""
    from ani.intents import IntentError, compile_changes

    try:
        out = compile_changes(changes, configs).configs
    except IntentError as exc:
        raise AgentFailed(f"the changes do not compile: {exc}: {changes}") from None
    if not out:
        raise AgentFailed(f"the changes change no router: {changes}")
    return out


def _message(task: AgentTask, changes: list[dict[str, Any]]) -> str:
    ids = [f"{c['type']} {c['action']} " + " ".join(str(c[k]) for k in ("tenant", "site", "name", "prefix", "router")
                                                    if k in c) for c in changes]
    return f"{task.task_class} ({task.variant_id}): " + "; ".join(ids)


# -- A3-T ----------------------------------------------------------------------------------------


def _read_a3t(steps: StepCounter, routers: list[str]) -> dict[str, DeviceConfig]:
    """Every router's FRR running config and nftables ruleset through ``get_state``."""
    from ani.device.parse import parse
    from ani.intents.inventory import parse_nft_text

    out = {}
    for r in routers:
        text = need(steps.call("get_state", {"device": r, "what": "config"}), f"get_state {r} config").get("state")
        nft = need(steps.call("get_state", {"device": r, "what": "firewall"}), f"get_state {r} firewall").get("state")
        try:
            cfg = parse(str(text or ""))
            fw = parse_nft_text(_only_fw(str(nft or "")))
        except ValueError as exc:
            raise AgentFailed(f"{r}: cannot read its configuration: {str(exc).splitlines()[0]}") from None
        out[r] = cfg.model_copy(update={"hostname": r, "firewall": fw})
    return out


def _only_fw(text: str) -> str:
    """The ``table inet fw { ... }`` block of an ``nft list ruleset`` text ('' if none)."""
    m = re.search(r"^table inet fw \{$", text, re.M)
    if m is None:
        return ""
    depth, i = 0, m.start()
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i : j + 1] + "\n"
    return text[i:]


def _apply_a3t(steps: StepCounter, changes: list[dict[str, Any]], after: dict[str, DeviceConfig]) -> None:
    planned = need(steps.call("plan", {"changes": changes}), "plan")
    if sorted(planned.get("routers", [])) != sorted(after):
        raise AgentFailed(f"plan changes {planned.get('routers')}, the agent's compile {sorted(after)}")
    need(steps.call("apply", {"changes": changes}), "apply")


# -- A3-R / A4 -----------------------------------------------------------------------------------


def _read_sot(steps: StepCounter, level: str) -> tuple[dict[str, dict], str, dict[str, dict]]:
    """``({router: device document}, HEAD, {service path: service change})``."""
    listing = need(steps.call("sot_list", {}), "sot_list")
    docs, services = {}, {}
    for path in listing.get("files", []):
        if not (path.startswith("devices/") or (level == "a4" and path.startswith("services/"))):
            continue
        doc = need(steps.call("sot_read", {"path": path}), f"sot_read {path}")["document"]
        if path.startswith("devices/"):
            docs[path[len("devices/") : -len(".json")]] = doc
        else:
            services[path] = doc
    if not docs:
        raise AgentFailed("sot_list lists no devices/<router>.json")
    return docs, listing["revision"], services


def _sot_configs(docs: dict[str, dict], services: dict[str, dict]) -> dict[str, DeviceConfig]:
    """The desired state: the device documents, with the service files compiled on top in
    path order (A4's rule)."""
    from ani.sot.errors import DocError
    from ani.sot.format import from_doc

    try:
        configs = {r: from_doc(d, r) for r, d in docs.items()}
    except DocError as exc:
        raise AgentFailed(f"a device file is not a valid desired state: {exc}") from None
    if services:
        configs = {**configs, **_compile([services[p] for p in sorted(services)], configs)}
    return configs


def _patches(docs: dict[str, dict], after: dict[str, DeviceConfig]) -> dict[str, list[dict[str, Any]]]:
    import jsonpatch

    from ani.sot.format import to_doc

    out = {}
    for r in sorted(after):
        if r not in docs:
            raise AgentFailed(f"{r} has no devices/{r}.json in the source of truth")
        ops = jsonpatch.make_patch(docs[r], to_doc(after[r])).patch
        if ops:
            out[f"devices/{r}.json"] = ops
    return out


def _commit(steps: StepCounter, message: str) -> dict[str, Any]:
    res = steps.call("sot_commit", {"message": message})
    out = need(res, "sot_commit")
    status = (out.get("reconcile") or {}).get("status")
    if status != "converged":
        raise AgentFailed(f"sot_commit: reconcile {status}: {res.text[:300]}")
    return out


def _commit_a3r(steps: StepCounter, docs: dict[str, dict], head: str, after: dict[str, DeviceConfig], message: str) -> None:
    for path, ops in _patches(docs, after).items():
        need(steps.call("sot_patch", {"path": path, "patch": ops, "base_revision": head}), f"sot_patch {path}")
    _commit(steps, message)


def service_path(change: dict[str, Any]) -> str:
    """The service file of a creating change: ``services/tenant-site-<tenant>-<site>.json``
    for a site (as ``ani.agents.scripted_a4``), else ``services/<type>-<its id, '-' for
    anything but letters, digits, '.', '_'>.json``."""
    from ani.agents.scripted_a4 import service_path as site_path
    from ani.intents import parse_change

    if change["type"] == "tenant-site":
        return site_path(change["tenant"], change["site"])
    sid = parse_change(change).service_id()
    return f"services/{re.sub(r'[^A-Za-z0-9._]+', '-', sid)}.json"


def _commit_a4(steps: StepCounter, docs: dict[str, dict], head: str, changes: list[dict[str, Any]],
               services: dict[str, dict], message: str) -> None:
    from ani.sot.patch import pointer

    forms = [has_service_file_form(c) for c in changes]
    if any(forms[i] and not forms[j] for i in range(len(forms)) for j in range(i + 1, len(forms))):
        forms = [False] * len(forms)  # a device-file change after a service file: all the A3-R way (order kept)
    device = [c for c, f in zip(changes, forms) if not f]
    files = [c for c, f in zip(changes, forms) if f]
    if device:  # no service-file form: the A3-R way, on the device files
        base = _sot_configs(docs, {})
        for path, ops in _patches(docs, _compile(device, base)).items():
            need(steps.call("sot_patch", {"path": path, "patch": ops, "base_revision": head}), f"sot_patch {path}")
    for c in files:
        path = service_path(c)
        if path in services:
            raise AgentFailed(f"{path} exists already")
        ops = [{"op": "add", "path": pointer(k), "value": v} for k, v in c.items()]
        need(steps.call("sot_patch", {"path": path, "patch": ops, "base_revision": head}), f"sot_patch {path}")
    _commit(steps, message)


# -- validation ----------------------------------------------------------------------------------


def expectations(task: AgentTask, before: dict[str, DeviceConfig], after: dict[str, DeviceConfig]) -> list[tuple[IPv4Network, bool, str]]:
    """``[(prefix, should be routed, its edge)]``: the sites the changes add, move or change
    (and a troubleshoot's site) must be routed elsewhere; the sites they remove must not."""
    from ani.agents.scripted_tasks import request_of
    from ani.intents import Inventory

    b = {s.id: s.spec for s in Inventory(before).list_services("tenant-site")}
    a = {s.id: s.spec for s in Inventory(after).list_services("tenant-site")}
    out = [(spec.prefix, True, spec.edge) for sid, spec in sorted(a.items()) if b.get(sid) != spec]
    if task.task_class == "troubleshoot":
        req = request_of(task)
        sid = f"tenant-site/{req.get('tenant')}/{req.get('site')}"
        if sid in a and b.get(sid) == a[sid]:
            out.append((a[sid].prefix, True, a[sid].edge))
    gone = {spec.prefix for spec in a.values()}
    out += [(spec.prefix, False, spec.edge) for sid, spec in sorted(b.items()) if sid not in a and spec.prefix not in gone]
    return out


def _witness(after: dict[str, DeviceConfig], edge: str) -> str | None:
    """Another edge carrying tenant sites (else any other router with BGP)."""
    from ani.intents import Inventory

    edges = sorted({s.spec.edge for s in Inventory(after).list_services("tenant-site")} - {edge})
    return edges[0] if edges else next((r for r in sorted(after) if r != edge and after[r].bgp is not None), None)


def _routed(steps: StepCounter, level: str | None, names: set[str], router: str, prefix: IPv4Network) -> bool:
    if level in ("a3t", "a4"):
        routes = need(steps.call("get_state", {"device": router, "what": "routes"}), f"get_state {router} routes").get("state")
        return isinstance(routes, dict) and str(prefix) in routes
    from ani.agents.scripted import _A0, _A1, _A2

    if "shell" in names:
        return f"Routing entry for {prefix}" in _A0(steps).show(router, f"show ip route {prefix}")
    if "update_config" in names:
        return f"Routing entry for {prefix}" in _A1(steps).show(router, f"show ip route {prefix}")
    return _A2(steps).route_seen(router, str(prefix))


def _validate(steps: StepCounter, level: str | None, names: set[str], task: AgentTask, before: dict[str, DeviceConfig],
              after: dict[str, DeviceConfig], changed: dict[str, DeviceConfig], tries: int, pause_s: float) -> None:
    if level == "a3r":
        left = need(steps.call("drift", {"devices": sorted(changed)}), "drift").get("drift")
        if left:
            raise AgentFailed(f"drift right after the commit: {left}")
        return
    for prefix, want, edge in expectations(task, before, after):
        router = _witness(after, edge)
        if router is None:
            continue
        for i in range(tries):
            steps.check_clock()
            if _routed(steps, level, names, router, prefix) == want:
                break
            if i + 1 < tries:
                time.sleep(pause_s)
        else:
            raise AgentFailed(f"{prefix} {'never appeared in' if want else 'is still in'} {router}'s routing table")
