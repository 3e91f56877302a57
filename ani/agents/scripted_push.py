"""The scripted agent's device-level half: read the routers' configurations and make them hold
intended ones, through the device level's own tools (A0, A1, A2).

    configs = read_configs(steps, tools, ["e1", "e2"])    # {router: DeviceConfig}
    want = {...}                                          # e.g. ani.intents.compile_changes(...)
    push_configs(steps, tools, configs, want)             # raises AgentFailed

``steps`` is the run's :class:`ani.agents.base.StepCounter` (every tool call is a step);
``tools`` the names of the adapter's tools, which say the level: ``shell`` => A0,
``update_config`` => A1, ``edit_config`` => A2 (anything else: AgentFailed).

Reading (``read_configs``), one router at a time:

- A0: one ``shell``: ``vtysh -c 'show running-config'`` and ``nft -j list ruleset`` (two, one
  each, when together they pass the adapter's output cap);
- A1: ``get_running_config`` and ``execute_validation("nft -j list ruleset")`` (two steps);
- A2: ``get_config(running)``, the YANG data of ``ani-frr`` read with
  :func:`ani.device.yang.from_xml` (one step; when it passes the output cap, one ``get_config``
  per top-level node with a subtree filter). YANG has no ``unmodelled`` lines: an A2 read has
  none, whatever the router runs (the NETCONF server refuses to commit over such a router).

The A0 / A1 texts become the device model exactly as the device layer reads a router
(:func:`ani.device.apply.model_of`: ``hostname`` = the router's name, the firewall from the
nft JSON, the lines the model cannot express in ``unmodelled``). A read cut short by the
adapter's output cap (after the fallbacks above) is refused (AgentFailed), never parsed.

Pushing (``push_configs``): every router of ``after`` whose intended configuration (canonical,
:meth:`DeviceConfig.canonical`) differs from ``before`` is changed by the difference only:

- A0 / A1: the FRR remediation lines of :mod:`ani.device.remediation` (hier-config with an
  FRR 8.4 driver: targeted ``no`` lines and additions, in an order that avoids FRR's traps) and
  the nft commands of :mod:`ani.agents.nft_changes` (set elements, rules by handle: the handles
  are read first, one more step, only when rules change). A0: one ``shell`` per router
  (one ``vtysh -c ...`` per top-level block, then one ``nft -f`` transaction; their exit
  statuses are no verdict, the read-back is: FRR 8.4's vtysh exits 1 for some lines it
  applies, and stops at the first failing line of a call). A1: ``update_config`` (all or nothing;
  the FRR lines and ``nft ...`` commands together; a list longer than the allowlist's 200 items is
  sent in several calls cut between top-level blocks). What A1's allowlist refuses (``nft add
  set``, a chain policy, ``bgp route-map delay-timer``, ...) fails the push naming the command.
- A2: one confirmed-commit transaction over all the routers that change: ``lock`` each
  candidate, ``edit_config`` with the difference as targeted operations
  (:mod:`ani.agents.yang_edit`: ``merge`` of new and changed nodes, ``delete`` of removed ones),
  ``validate`` each, ``commit`` them all confirmed (:data:`ani.agents.scripted.A2_CONFIRM_TIMEOUT_S`),
  read them back, ``confirm_commit`` (or ``cancel_commit`` if a router does not hold its intended
  configuration), ``unlock``; on any failure before the commit the candidates are discarded, and
  every lock taken is released.

Then each changed router is read back (A2: within the transaction; A1: only the part the push
changed, FRR or nftables, when it changed one: the other was read just before) and must equal its intended
configuration the way the device layer compares (:class:`DeviceConfig` equality of canonical
models; the ``unmodelled`` lines included at A0 / A1); otherwise AgentFailed names the router and
the difference (``- line`` running, ``+ line`` intended, :func:`ani.device.apply.mismatch`).

A push that fails leaves no router half changed where the level allows undoing: A2 cancels the
commit (or discards the candidates); A1 rolls every router it changed back to the snapshot taken
before its first ``update_config``; A0 pushes the reverse difference (from a fresh read) and
checks it. The error message says which routers were put back and which could not be.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ani.device.remediation import frr_units
from ani.agents.nft_changes import forward_handles, nft_commands
from ani.agents.scripted import A2_CONFIRM_TIMEOUT_S, FRR_NS, AgentFailed, _out, need
from ani.device.apply import mismatch, model_of
from ani.device.model import DeviceConfig

__all__ = ["A1_MAX_COMMANDS", "device_level", "push_configs", "read_configs"]

#: the most items one A1 ``update_config`` takes (``sanitiser.max_commands`` of adapters/frr.yaml)
A1_MAX_COMMANDS = 200
_NFT_MARK = "@@ani-nft-ruleset@@"
_NFT_JSON = "nft -j list ruleset"
_NFT_FORWARD = "nft -j list chain inet fw forward"


def device_level(tools: Iterable[str]) -> str:
    """``a0`` / ``a1`` / ``a2`` from the adapter's tool names; AgentFailed for another level."""
    names = set(tools)
    if "shell" in names:
        return "a0"
    if "update_config" in names:
        return "a1"
    if "edit_config" in names:
        return "a2"
    raise AgentFailed(f"no device-level configuration tool (tools: {', '.join(sorted(names))})")


# -- reading ---------------------------------------------------------------------------------


def _shell(steps: Any, device: str, command: str) -> tuple[int, str, dict[str, Any]]:
    res = steps.call("shell", {"device": device, "command": command})
    data = res.data or {}
    rc = data.get("exit_status")
    if rc is None:  # nothing ran, or it timed out
        need(res, f"shell on {device}")
        rc = 0
    return int(rc), _out(res), data


def _uncut(data: dict[str, Any], device: str, what: str, *keys: str) -> None:
    for k in keys or ("truncated",):
        if data.get(k):
            raise AgentFailed(f"{device}: {what} was cut at the adapter's output cap ({data.get('bytes', '?')} "
                              "bytes); cannot read the whole configuration")


def _read_a0(steps: Any, device: str) -> DeviceConfig:
    rc, out, data = _shell(steps, device, f"vtysh -c 'show running-config' && echo {_NFT_MARK} && {_NFT_JSON}")
    if data.get("stdout_truncated"):  # together too long for the output cap: one at a time
        return _model(device, _a0_out(steps, device, "vtysh -c 'show running-config'"), _a0_out(steps, device, _NFT_JSON))
    if rc != 0 or _NFT_MARK not in out:
        raise AgentFailed(f"{device}: reading the running config and ruleset exited {rc}: "
                          f"{(out + str(data.get('stderr', ''))).strip()[:200]}")
    frr, nft = out.split(_NFT_MARK, 1)
    return _model(device, frr, nft)


def _a0_out(steps: Any, device: str, command: str) -> str:
    rc, out, data = _shell(steps, device, command)
    _uncut(data, device, f"the output of {command!r}", "stdout_truncated")
    if rc != 0:
        raise AgentFailed(f"{device}: {command!r} exited {rc}: {(out + str(data.get('stderr', ''))).strip()[:200]}")
    return out


def _read_a1(steps: Any, device: str) -> DeviceConfig:
    res = need(steps.call("get_running_config", {"device": device}), f"get_running_config on {device}")
    _uncut(res, device, "the running config")
    nft = need(steps.call("execute_validation", {"device": device, "command": _NFT_JSON}), f"{_NFT_JSON} on {device}")
    _uncut(nft, device, "the nftables ruleset")
    return _model(device, str(res.get("running_config", "")), str(nft.get("output", "")))


def _model(device: str, frr: str, nft: str) -> DeviceConfig:
    try:
        return model_of(device, frr, nft.strip() or '{"nftables": []}')
    except ValueError as exc:  # ReadError is one too
        raise AgentFailed(f"{device}: cannot read its configuration: {' '.join(str(exc).split())[:300]}") from None


def _read_a2(steps: Any, device: str) -> DeviceConfig:
    from lxml import etree

    from ani.device.yang import from_xml

    res = need(steps.call("get_config", {"device": device, "source": "running"}), f"get_config on {device}")
    if res.get("truncated"):  # too long for the output cap: one top-level node at a time
        frr = _a2_by_parts(steps, device)
    else:
        frr = etree.fromstring(f"<data>{res.get('xml', '')}</data>".encode()).find(f"{{{FRR_NS}}}frr")
    try:
        return DeviceConfig(hostname=device) if frr is None else from_xml(frr, device)
    except ValueError as exc:
        raise AgentFailed(f"{device}: cannot read its configuration: {' '.join(str(exc).split())[:300]}") from None


def _a2_by_parts(steps: Any, device: str) -> Any:
    """``<frr>`` read with one subtree filter (RFC 6241 §6) per top-level node of ``ani-frr``."""
    from lxml import etree

    from ani.agents.yang_edit import _schema

    top = _schema().root.child(f"{{{FRR_NS}}}frr")
    frr = etree.Element(f"{{{FRR_NS}}}frr", nsmap={None: FRR_NS})
    for tag, node in top.children.items():
        if not node.config:
            continue
        flt = f'<frr xmlns="{FRR_NS}"><{node.name}/></frr>'
        res = need(steps.call("get_config", {"device": device, "source": "running", "filter": flt}),
                   f"get_config {node.name} on {device}")
        _uncut(res, device, f"get_config running ({node.name})")
        part = etree.fromstring(f"<data>{res.get('xml', '')}</data>".encode()).find(f"{{{FRR_NS}}}frr")
        for child in part if part is not None else ():
            frr.append(child)
    return frr


_READERS = {"a0": _read_a0, "a1": _read_a1, "a2": _read_a2}


def read_configs(steps: Any, tools: Iterable[str], routers: Iterable[str]) -> dict[str, DeviceConfig]:
    """The running configuration (FRR + nftables) of each router, read through the level's tools
    (module doc). Raises AgentFailed (a tool refused, a read was cut, FRR printed what the model
    cannot read) or BudgetExceeded."""
    read = _READERS[device_level(tools)]
    return {r: read(steps, r) for r in routers}


# -- pushing ---------------------------------------------------------------------------------


def _intended(after: dict[str, DeviceConfig]) -> dict[str, DeviceConfig]:
    out = {}
    for r, cfg in after.items():
        try:
            want = cfg.canonical()
        except ValueError as exc:
            raise AgentFailed(f"{r}: the intended configuration is not valid: {' '.join(str(exc).split())[:300]}") from None
        if want.hostname != r:
            raise AgentFailed(f"{r}: the intended configuration is for hostname {want.hostname!r}")
        out[r] = want
    return out


def _check(router: str, got: DeviceConfig, want: DeviceConfig, level: str) -> None:
    if level == "a2":  # YANG carries no unmodelled lines either way
        want = want.model_copy(update={"unmodelled": []})
    if got != want:
        diff = mismatch(got, want)
        raise AgentFailed(f"{router} does not hold its intended configuration after the push "
                          f"(running -> intended): {'; '.join(diff[:12]) or 'order of unmodelled lines'}")


def _handles(steps: Any, level: str, device: str, before: DeviceConfig, want: DeviceConfig) -> list[int] | None:
    """The forward chain's rule handles, read only when its rules change."""
    if before.firewall is None or want.firewall is None or before.firewall.forward_rules == want.firewall.forward_rules:
        return None
    if level == "a0":
        rc, out, _ = _shell(steps, device, _NFT_FORWARD)
        if rc != 0:
            raise AgentFailed(f"{device}: {_NFT_FORWARD} exited {rc}: {out.strip()[:200]}")
    else:
        out = str(need(steps.call("execute_validation", {"device": device, "command": _NFT_FORWARD}),
                       f"{_NFT_FORWARD} on {device}").get("output", ""))
    try:
        return forward_handles(out)
    except ValueError as exc:
        raise AgentFailed(f"{device}: cannot read the rule handles of chain forward: {exc}") from None


def _nft(device: str, before: DeviceConfig, want: DeviceConfig, handles: list[int] | None) -> list[str]:
    try:
        return nft_commands(before.firewall, want.firewall, handles)
    except ValueError as exc:
        raise AgentFailed(f"{device}: {exc}") from None


def _push_a0(steps: Any, device: str, before: DeviceConfig, want: DeviceConfig) -> str | None:
    """One ``shell``: one vtysh per top-level block of the FRR lines (vtysh stops at the first
    ``-c`` line that fails, so a failing block does not keep the next ones from running), then
    (whatever vtysh's exit statuses) one ``nft -f`` of the nft commands. Returns what they
    printed when one exited non-zero, or None: not a verdict (FRR 8.4's vtysh exits 1, saying
    nothing, for ``no ip address`` on an interface the kernel no longer has, e.g. a moved site's,
    and has applied it; the read-back decides), but the words the error message quotes if the
    read-back differs."""
    import shlex

    units = frr_units(before, want)
    nft = _nft(device, before, want, _handles(steps, "a0", device, before, want))
    parts = []
    for unit in units:  # one vtysh per top-level block: vtysh -c stops at the first line that fails
        parts.append("vtysh " + " ".join(f"-c {shlex.quote(ln)}" for ln in ["configure terminal", *unit, "end"])
                     + f' || {{ rc=$?; echo "vtysh exited $rc at" {shlex.quote(unit[0])}; }}')
    if nft:
        parts.append("nft -f - <<'ANI_NFT' || { rc=1; echo 'nft -f failed'; }\n" + "\n".join(nft) + "\nANI_NFT")
    # the script exits 0 (a failing vtysh is no tool error: the read-back is the verdict) and
    # says which part failed
    rc, out, data = _shell(steps, device, "rc=0; " + "\n".join(parts) + "\n[ $rc = 0 ] || echo ANI-PUSH-FAILED\nexit 0")
    if rc == 0 and "ANI-PUSH-FAILED" not in out:
        return None
    words = " ".join((out.replace("ANI-PUSH-FAILED", "") + " " + str(data.get("stderr", ""))).split())
    return f"the change on {device} exited non-zero: {words[:300]}"


def _push_a1(steps: Any, device: str, before: DeviceConfig, want: DeviceConfig) -> str | None:
    """Returns the id of A1's automatic snapshot taken before the first ``update_config``."""
    units = frr_units(before, want)
    units += [[f"nft {c}"] for c in _nft(device, before, want, _handles(steps, "a1", device, before, want))]
    batch: list[str] = []
    batches = []
    for unit in units:
        if batch and len(batch) + len(unit) > A1_MAX_COMMANDS:
            batches.append(batch)
            batch = []
        batch += unit
    if batch:
        batches.append(batch)
    first = None
    for cmds in batches:
        data = need(steps.call("update_config", {"device": device, "commands": cmds}), f"update_config on {device}")
        first = first or data.get("pre_snapshot")
    return first


def push_configs(steps: Any, tools: Iterable[str], before: dict[str, DeviceConfig],
                 after: dict[str, DeviceConfig]) -> None:
    """Make every router of ``after`` hold its intended configuration (module doc). ``before``:
    their running configurations as read (:func:`read_configs`); a router of ``after`` missing
    from it is read first. Routers whose configuration does not change are not touched.
    Raises AgentFailed naming the router (a tool refused, or a router read back differs from
    its intended configuration) or BudgetExceeded."""
    level = device_level(tools)
    want = _intended(after)
    missing = [r for r in want if r not in before]
    cur = {**before, **(read_configs(steps, tools, missing) if missing else {})}
    changed = [r for r in want if cur[r] != want[r]]
    if level == "a2":
        changed = [r for r in changed if cur[r].model_copy(update={"unmodelled": []})
                   != want[r].model_copy(update={"unmodelled": []})]
        if changed:
            _transaction(steps, {r: cur[r] for r in changed}, {r: want[r] for r in changed})
        return
    push = _push_a0 if level == "a0" else _push_a1
    touched: dict[str, str | None] = {}  # router -> A1's snapshot before its first change
    notes: dict[str, str] = {}  # router -> what A0's shell printed when it exited non-zero
    try:
        for r in changed:
            touched[r] = None
            out = push(steps, r, cur[r], want[r])
            if level == "a1":
                touched[r] = out
            elif out:
                notes[r] = out
        for r in changed:
            try:
                _check(r, _read_back(steps, level, r, cur[r], want[r]), want[r], level)
            except AgentFailed as exc:
                raise AgentFailed(f"{exc}; {notes[r]}" if r in notes else str(exc)) from None
    except AgentFailed as exc:
        raise AgentFailed(f"{exc}; {_undo(steps, level, touched, cur)}") from None


def _nft_lines(cfg: DeviceConfig) -> list[str]:
    return [u for u in cfg.unmodelled if u.startswith("nft / ")]


def _split(cfg: DeviceConfig) -> tuple[DeviceConfig, tuple[Any, list[str]]]:
    """(the FRR part, (firewall, nft's unmodelled lines)) of a configuration."""
    nft = _nft_lines(cfg)
    frr = cfg.model_copy(update={"firewall": None, "unmodelled": [u for u in cfg.unmodelled if u not in nft]})
    return frr, (cfg.firewall, nft)


def _read_back(steps: Any, level: str, device: str, cur: DeviceConfig, want: DeviceConfig) -> DeviceConfig:
    """The router's configuration after its push. A0: one ``shell`` reads both parts anyway; A1
    reads only the part the push changed (``get_running_config`` or the ruleset: one step, not
    two) and takes the other from ``cur``, read just before."""
    if level != "a1":
        return _READERS[level](steps, device)
    (cur_frr, cur_nft), (want_frr, want_nft) = _split(cur), _split(want)
    if cur_frr != want_frr and cur_nft != want_nft:
        return _read_a1(steps, device)
    from ani.device import firewall as fwmod
    from ani.device.parse import parse

    try:
        if cur_frr != want_frr:
            res = need(steps.call("get_running_config", {"device": device}), f"get_running_config on {device}")
            _uncut(res, device, "the running config")
            frr = parse(str(res.get("running_config", ""))).model_copy(update={"hostname": device})
            fw, extra = cur_nft
        else:
            out = need(steps.call("execute_validation", {"device": device, "command": _NFT_JSON}),
                       f"{_NFT_JSON} on {device}")
            _uncut(out, device, "the nftables ruleset")
            frr = cur_frr
            fw, extra = fwmod.parse_ruleset(str(out.get("output", "")).strip() or '{"nftables": []}')
    except ValueError as exc:
        raise AgentFailed(f"{device}: cannot read its configuration: {' '.join(str(exc).split())[:300]}") from None
    return frr.model_copy(update={"firewall": fw, "unmodelled": [*frr.unmodelled, *extra]})


def _undo(steps: Any, level: str, touched: dict[str, str | None], before: dict[str, DeviceConfig]) -> str:
    """Put the routers a failed push touched back to ``before`` (A1: ``rollback`` to the
    snapshot taken before their first ``update_config``; one that failed its first call was
    rolled back by A1 itself. A0: the reverse difference, from a fresh read); what was done,
    for the error message. Never raises for its own failures."""
    done, failed = [], []
    for r, snap in touched.items():
        try:
            if level == "a1":
                if snap is not None:
                    need(steps.call("rollback", {"device": r, "snapshot_id": snap}), f"rollback on {r}")
            else:
                now = _read_a0(steps, r)
                if now != before[r]:
                    _push_a0(steps, r, now, before[r])
            _check(r, _READERS[level](steps, r), before[r], level)
            done.append(r)
        except Exception as exc:  # noqa: BLE001 - report it, the original error goes on
            failed.append(f"{r} ({' '.join(str(exc).split())[:150]})")
    out = f"put back as before: {', '.join(done)}" if done else "nothing to put back"
    return out + (f"; could NOT put back: {'; '.join(failed)}" if failed else "")


def _transaction(steps: Any, before: dict[str, DeviceConfig], want: dict[str, DeviceConfig]) -> None:
    """A2: the whole change as one confirmed commit over ``want``'s routers."""
    from ani.agents.yang_edit import edit_config_xml

    routers = list(want)
    edits = {r: edit_config_xml(before[r], want[r]) for r in routers}

    def call(tool: str, args: dict[str, Any], what: str) -> dict[str, Any]:
        return need(steps.call(tool, args), what)

    locked: list[str] = []
    committed = False
    try:
        for r in routers:
            call("lock", {"device": r, "target": "candidate"}, f"lock on {r}")
            locked.append(r)
        for r in routers:
            if edits[r] is not None:
                call("edit_config", {"device": r, "config": edits[r]}, f"edit_config on {r}")
        for r in routers:
            call("validate", {"device": r}, f"validate on {r}")
        call("commit", {"devices": routers, "confirm_timeout_s": A2_CONFIRM_TIMEOUT_S}, "commit")
        committed = True
        try:
            for r in routers:
                _check(r, _read_a2(steps, r), want[r], "a2")
        except Exception:
            call("cancel_commit", {"devices": routers}, "cancel_commit")
            committed = False
            raise
        call("confirm_commit", {"devices": routers}, "confirm_commit")
    except Exception:
        if not committed:
            for r in locked:
                _quiet(steps, "discard_changes", {"device": r})
        raise
    finally:
        for r in locked:
            _quiet(steps, "unlock", {"device": r, "target": "candidate"})


def _quiet(steps: Any, tool: str, args: dict[str, Any]) -> None:
    """A clean-up call whose own failure (or the budget running out) must not hide the error
    being raised: closing the adapter releases what it could not (RFC 6241 §7.5: a session's
    locks go with it; an unconfirmed commit is rolled back)."""
    try:
        steps.call(tool, args)
    except Exception:  # noqa: BLE001 - best effort, the original error is on its way out
        pass
