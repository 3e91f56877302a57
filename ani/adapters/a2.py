# size: the A2 adapter's NETCONF tools are one class sharing its per-router sessions and locks
"""A2: model-driven configuration over NETCONF (RFC 6241) with the YANG module ``ani-frr``
(namespace ``urn:ani:yang:ani-frr``), a candidate datastore and confirmed commit (NMAA level A2).

Each router runs its own NETCONF server (``ani.netconf``, started by the lab; endpoint from
``lab.netconf_endpoint(router)``). The adapter keeps one ncclient session per router, opened on
the router's first use, re-opened if it dropped, closed by :meth:`A2Adapter.close`.

Tools (``data`` keys in brackets):

- ``get_topology(devices=[])`` (inherited)
- ``get_config(device, source="running"|"candidate", filter=None)`` [xml, truncated, warnings]; a filter
  selecting a list entry by a key that matches nothing (``<route-map><name>NOPE</name></route-map>``)
  -> ``not_found`` naming the keys that exist (``data``: list, key, name, suggestion, known)
- ``get_state(device, filter=None)`` — ``<get>``; by default only ``frr-state`` [xml, ...]
- ``edit_config(device, config, default_operation="merge", error_option="rollback-on-error")``
  — edits the **candidate**; ``config`` is XML or RFC 7951 JSON [warnings]
- ``validate(device)`` — ``<validate>`` of the candidate [warnings]
- ``compare(device, format="cli"|"xml")`` — unified diff running -> candidate [diff, changes]
- ``commit(devices, confirmed=True, confirm_timeout_s=None)`` [devices, cancelled, ...]
- ``confirm_commit(devices)``, ``cancel_commit(devices)`` [devices]
- ``discard_changes(device)``, ``lock(device, target)``, ``unlock(device, target)``
- ``get_schema(identifier="ani-frr", version=None, device=None)`` — RFC 6022 [schema]

The device's hello (RFC 6241 §8.1) is read when its session opens (:mod:`ani.netconf.hello`) and
every RPC is checked against it before it is sent (:func:`ani.adapters.a2_support.needs`): one the device cannot do
(``:candidate``, ``:confirmed-commit:1.1``, ``:validate``, ``ietf-netconf-monitoring``) is
``unsupported``, not retriable, naming what is missing and what works there (:mod:`ani.adapters.a2_support`),
and nothing is sent; reads keep working. A device that does not announce ``ani-frr`` gets a note
on its reads, ``get_state`` without a filter reads the whole ``<get>``, and ``compare`` shows XML
(docs/real-devices.md). ``compare`` diffs the whole datastores, every module's data.

Reply checking: every ``<rpc-error>`` of a reply is read (ncclient 0.7.1 looks at the first
only; see :mod:`ani.netconf.client`). Any error-severity one fails the call with
``command_failed`` (``lock-denied``, ``in-use``, ``resource-denied``: retriable), the message
naming each error's tag, type, path, message and info, and ``data.errors`` /
``data.warnings`` listing them; warnings alone never fail a call and are returned in
``data.warnings`` (and the text).

``confirm_timeout_s``: an integer number of seconds, 1..4294967295, sent as a decimal string
(ncclient 0.7.1 puts the value into an lxml text node: an int raises TypeError there); 0,
negative, fractional, boolean or other values are refused with ``invalid_arguments`` before
anything is sent; omitted means the server's default, 600 s (RFC 6241 §8.4.5.1).

Multi-device ``commit`` commits the devices in the order given; if one fails, the confirmed
commits already made by this call are cancelled (``cancel-commit``, running restored, RFC
6241 §8.4.4.1) and the result says which; plain (unconfirmed) commits cannot be undone and
the result says that too.

Confirmed commits are not persistent (no ``persist``): if the adapter's session to a router
drops, the lab's NETCONF server stops or restarts, or :meth:`close` runs before
``confirm_commit``, the server rolls the change back (RFC 6241 §8.4.1). The adapter notices a re-opened session and reports the lost locks and
rolled-back commit in the next result (``data.notes``); ``confirm_commit`` then refuses, as it
does after the confirm timeout has passed (a plain commit would commit the candidate instead
of confirming anything).

``changed`` is measured: ``commit``, ``confirm_commit`` and ``cancel_commit`` compare
``get-config running`` before and after; the other tools never change the running datastore
(``edit_config`` and ``discard_changes`` change only the candidate).

Concurrency: each router has one NETCONF session, so calls on one router run one at a time and
calls on different routers in parallel; a call naming several routers (``commit``,
``confirm_commit``, ``cancel_commit``) holds all of them. A call waits for its routers at most
``rpc_timeout_s``, counted from its start, then answers ``timeout`` (retriable) naming the call
that holds them. A note about a re-opened session goes to the call that noticed it.

Options (the strict model :class:`ani.adapters.a2_args.A2Options`): ``connect_timeout_s`` (10),
``rpc_timeout_s`` (120), ``max_output_bytes`` (65536); an unknown key or a bad value raises
ConfigError naming it and the known options.

Modules: argument models in :mod:`ani.adapters.a2_args`, sessions and reply checking in
:mod:`ani.netconf.client`, XML / JSON arguments in :mod:`ani.adapters.netconf_xml`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from lxml import etree

from ani.adapters.a2_args import (
    DEFAULT_CONFIRM_TIMEOUT_S,
    WORKFLOW,
    A2DeviceArgs,
    A2Options,
    CommitArgs,
    CompareArgs,
    DevicesArgs,
    EditConfigArgs,
    GetConfigArgs,
    GetStateArgs,
    LockArgs,
    SchemaArgs,
    check_confirm_timeout,
    commit_kwargs,
)
from ani.adapters.base import BaseAdapter, tool
from ani.adapters.error_map import error_result
from ani.adapters.netconf_xml import FRR_NS, XmlArgError, as_lines, config_element, filter_element, pretty
from ani.adapters.objects import unmatched_keys
from ani.adapters.sandbox import CappedOutput
from ani.adapters.options import parse_options
from ani.errors import AniTimeout, ErrorCode
from ani.names import suggest, unknown
from ani.netconf.client import (
    MONITORING_NS,
    NetconfSession,
    ReplyError,
    RpcFailed,
    SessionLost,
    Unsupported,
    warning_lines,
)
from ani.adapters.a2_support import (
    MODEL,
    SHORT_MODULES,
    TOOL_NEEDS,
    needs,
    support,
    support_text,
    unsupported_message,
)
from ani.netconf.hello import YANG_LIBRARY_NS, ServerHello
from ani.protocol import Level, ToolResult
from ani.device.changes import unified

from ani.lab.protocol import NetconfCapable

if TYPE_CHECKING:
    from ani.lab.protocol import Devices

__all__ = ["A2Adapter", "check_confirm_timeout", "commit_kwargs"]

#: seconds a commit's reply is awaited beyond the server's announced commit bound (the rollback
#: after the bound, and the reply's way back)
COMMIT_REPLY_SLACK_S = 15.0

#: what an RPC may raise that a tool turns into a failed result
_FAILS = (RpcFailed, AniTimeout, SessionLost, Unsupported)
# -- the adapter ---------------------------------------------------------------------------


#: what an agent must do after a confirmed commit was rolled back: the commit had emptied the
#: candidate into running, so the edits are gone from both
_REDO = "the edits left the candidate at that commit: lock, edit_config and commit again"


class A2Adapter(BaseAdapter):
    """NETCONF/YANG over ncclient, one session per router (see the module doc).

    Args:
        lab: a running :class:`ani.lab.Lab` with NETCONF servers (``lab.netconf_endpoint``).
        trajectory: where calls are logged.
        options: see the module doc.
        connect: session factory for tests: ``(endpoint, connect_timeout_s=, rpc_timeout_s=)
            -> ncclient-like manager``.
    """

    level: ClassVar[Level] = Level.A2
    needs: ClassVar[tuple[type, ...] | None] = (NetconfCapable,)  # its sessions: lab.netconf_endpoint

    def __init__(
        self,
        lab: Devices | None,
        *,
        trajectory: Any = None,
        options: dict | None = None,
        connect: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.settings = parse_options(A2Options, self.options, str(self.level))
        self.connect_timeout_s = self.settings.connect_timeout_s
        self.rpc_timeout_s = self.settings.rpc_timeout_s
        self.max_output = self.settings.max_output_bytes
        self._connect = connect
        self._sessions: dict[str, NetconfSession] = {}
        self._gen: dict[str, int] = {}  # session generation the state below belongs to
        self._locks: dict[str, set[str]] = {}
        self._pending: dict[str, tuple[float, int]] = {}  # device -> (deadline monotonic, timeout s)
        self._lost: dict[str, str] = {}  # device -> why a pending confirmed commit is gone
        self._library: dict[str, tuple[int, bool]] = {}  # device -> (generation, serves ani-frr)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session (``close-session``). The server releases their locks and rolls
        back any confirmed commit not yet confirmed (RFC 6241 §8.4.1). Waits (at most
        ``CLOSE_WAIT_S``) for calls in flight and leaves the sessions they still use alone."""
        with self._drain() as busy:
            for dev, s in list(self._sessions.items()):
                if dev in busy:
                    continue
                s.close()
                del self._sessions[dev]
                for state in (self._gen, self._locks, self._pending, self._library):
                    state.pop(dev, None)
        super().close()

    def call_keys(self, name: str, args: Any) -> list[str]:
        """The routers the call names (get_schema without one: the router it asks); see the
        module doc."""
        devices = self._devices_named(args)
        if not devices and name == "get_schema" and self.devices:
            devices = [self.devices[0]]
        return devices or super().call_keys(name, args)

    def call_bound_s(self, name: str, args: Any) -> float:
        return self.rpc_timeout_s

    def session(self, device: str) -> NetconfSession:
        s = self._sessions.get(device)
        if s is None:
            s = NetconfSession(
                device,
                lambda: self.lab.netconf_endpoint(device),
                connect_timeout_s=self.connect_timeout_s,
                rpc_timeout_s=self.rpc_timeout_s,
                connect=self._connect,
                require=(),  # each RPC's own needs are checked (_rpc), not the whole level's
            )
            self._sessions[device] = s
        return s

    def hello(self, device: str) -> ServerHello | None:
        """``device``'s hello (:class:`~ani.netconf.hello.ServerHello`), opening its session if
        needed; None when the session reports no capabilities (a stand-in). Raises SessionLost."""
        s = self.session(device)
        s.ensure()
        return s.hello

    def support_notes(self) -> list[str]:
        """One line per device that lacks something A2's tools use (the ``ani-frr`` module, a
        capability): what works there and what does not (:func:`~ani.adapters.a2_support.support_text`); for a device
        whose session cannot be opened, why (``r1: hello not checked: ...``). Opens every
        device's session, in parallel (each bounded by ``connect_timeout_s``). For ``ani mcp
        serve --inventory``, which prints them and gives them to the agent."""
        from ani.host.threads import ContextPool

        def one(d: str) -> str | None:
            try:
                h = self.hello(d)
            except _FAILS as exc:
                return f"{d}: hello not checked: {exc}"
            if h is None:
                return None
            served = self.serves_model(d)
            s = support(h, served)
            return None if s["serves_model"] and not s["lacks"] else support_text(d, h, served)

        devices = list(self.devices)
        with ContextPool(max_workers=max(1, min(8, len(devices)))) as ex:
            return [n for n in ex.map(one, devices) if n]

    def serves_model(self, device: str) -> bool:
        """Whether ``device`` serves ``ani-frr``: its hello says so, or (a server with a YANG
        library, where YANG 1.1 modules are listed instead, RFC 7950 §5.6.4) its
        ``/modules-state`` does, asked once per session. True when not known (no session yet,
        a stand-in without capabilities, the library could not be read)."""
        s = self._sessions.get(device)
        if s is None or s.hello is None:
            return True
        known = s.hello.serves(MODEL)
        if known is not None:
            return known
        cached = self._library.get(device)
        if cached is None or cached[0] != s.generation:
            cached = self._library[device] = (s.generation, self._library_has(s, MODEL))
        return cached[1]

    @staticmethod
    def _library_has(s: NetconfSession, module: str) -> bool:
        flt = filter_element(f'<modules-state xmlns="{YANG_LIBRARY_NS}"><module><name>{module}</name>'
                             "</module></modules-state>")
        try:
            data = s.call("get", safe_to_repeat=True, filter=flt).data
        except _FAILS:
            return True  # not known: not claimed missing
        return data is not None and any(n.text == module for n in data.iter(f"{{{YANG_LIBRARY_NS}}}name"))

    def netconf_session_ids(self) -> dict[str, str]:
        """``{device: NETCONF session-id}`` of this adapter's open sessions (RFC 6241 §8.1
        ``<session-id>``), to tell its own locks from another session's
        (:func:`ani.campaign.outcomes.locks_left`)."""
        out = {}
        for dev, s in list(self._sessions.items()):
            sid = s.session_id
            if sid:
                out[dev] = sid
        return out

    def _dispatch(self, name: str, arguments: Any) -> ToolResult:
        self._call_ctx.notes = []  # per thread: the notes of this call (see _check_generation)
        res = super()._dispatch(name, arguments)
        notes, self._call_ctx.notes = self._call_ctx.notes, []
        if notes:
            res.text = (res.text + "\n" if res.text else "") + "\n".join(f"note: {n}" for n in notes)
            res.data = {**(res.data or {}), "notes": notes}
        return res

    # -- RPC plumbing ------------------------------------------------------------------------

    def _rpc(self, device: str, op: str, *, safe: bool = False, **kw: Any) -> Any:
        """One operation on ``device``'s session; notices a re-opened session (see module doc).
        Raises RpcFailed, AniTimeout, SessionLost."""
        s = self.session(device)
        try:
            self._require(device, op, needs(op, kw))
            return s.call(op, safe_to_repeat=safe, wait_s=self._commit_wait_s(s, op), **kw)
        finally:
            self._check_generation(device, s)

    @staticmethod
    def _commit_wait_s(s: NetconfSession, op: str) -> float | None:
        """Seconds to wait for a ``commit`` reply from a server that bounds its commits (ani's
        own announces it in its hello): its bound plus :data:`COMMIT_REPLY_SLACK_S`, so the agent
        is never told ``timeout`` while the server may still land the commit (issue 23: an
        ``rpc_timeout_s`` below the bound saw its commit land a minute later). None: other
        operations, other servers (``rpc_timeout_s``)."""
        bound = s.hello.commit_bound_s if op == "commit" and s.hello is not None else None
        return None if bound is None else bound + COMMIT_REPLY_SLACK_S

    def _require(self, device: str, op: str, features: tuple[str, ...]) -> None:
        """Open ``device``'s session if needed and raise Unsupported (nothing sent) if its hello
        lacks one of ``features``. Raises SessionLost."""
        s = self.session(device)
        s.ensure()
        if s.hello is not None and (missing := s.hello.missing(features)):
            served = self.serves_model(device)
            raise Unsupported(unsupported_message(device, op, missing, s.hello, served), missing,
                              support(s.hello, served, SHORT_MODULES))

    def _check_generation(self, device: str, s: NetconfSession) -> None:
        old = self._gen.get(device)
        if old == s.generation:
            return
        self._gen[device] = s.generation
        if old is None or old == 0:
            return
        lost = []
        locks = self._locks.pop(device, set())
        if locks:
            lost.append(f"its lock(s) on {', '.join(sorted(locks))} were released")
        if device in self._pending:
            self._pending.pop(device)
            self._lost[device] = "the session that made it dropped, so the server rolled it back"
            lost.append("its unconfirmed confirmed commit was rolled back by the server")
        msg = f"the NETCONF session to {device} dropped and was re-opened (session-id {s.session_id})"
        notes = getattr(self._call_ctx, "notes", None)
        if notes is None:  # outside a call (a test driving a tool method directly)
            notes = self._call_ctx.notes = []
        notes.append(msg + (": " + "; ".join(lost) if lost else ""))

    def _fail(self, device: str, exc: Exception, what: str) -> ToolResult:
        """The ToolResult of an RPC exception (:func:`ani.adapters.error_map.error_result`):
        ``command_failed`` naming every rpc-error, ``timeout`` (``data.outcome_unknown``: the
        operation may have been applied), ``device_unreachable``, ``invalid_arguments``."""
        extra = {"device": device, "outcome_unknown": True} if isinstance(exc, AniTimeout) else None
        return error_result(exc, device=device, what=what, data=extra)

    def _simple(self, device: str, op: str, what: str, done: str, **kw: Any) -> ToolResult:
        """One RPC whose reply is ``<ok/>`` (or warnings): ``"<device>: <done>"`` plus the
        warnings, data ``{device, warnings}``; a failure as :meth:`_fail` reports it."""
        try:
            reply = self._rpc(device, op, **kw)
        except _FAILS as exc:
            return self._fail(device, exc, what)
        return ToolResult.success(f"{device}: {done}" + warning_lines(reply.warnings),
                                  {"device": device,
                                   "warnings": [w.to_dict() for w in reply.warnings]})

    def _capped(self, text: str) -> tuple[str, bool, int]:
        capped = CappedOutput(self.max_output)
        capped.feed(text.encode("utf-8", errors="replace"))
        return capped.text(), capped.truncated, capped.total

    def _running(self, device: str) -> bytes:
        """Canonical bytes of ``get-config running`` (for measuring ``changed``)."""
        reply = self._rpc(device, "get_config", safe=True, source="running")
        data = reply.data
        return b"" if data is None else etree.tostring(data, method="c14n")

    def _candidate(self, device: str) -> bytes:
        """Canonical bytes of ``get-config candidate``."""
        reply = self._rpc(device, "get_config", safe=True, source="candidate")
        data = reply.data
        return b"" if data is None else etree.tostring(data, method="c14n")

    # -- read-only tools ---------------------------------------------------------------------

    @tool(
        args=GetConfigArgs,
        read_only=True,
        description=(
            "Read a device's configuration datastore (NETCONF get-config) as XML in the YANG "
            "module ani-frr (namespace urn:ani:yang:ani-frr): <frr> with interface, static-route, "
            "ospf, bgp, prefix-list, route-map and firewall (nftables sets and forward rules). "
            "source=running is what is in effect; source=candidate is what a commit would apply."
        ),
    )
    def get_config(self, args: GetConfigArgs) -> ToolResult:
        try:
            flt = filter_element(args.filter) if args.filter else None
            reply = self._rpc(args.device, "get_config", safe=True, source=args.source, filter=flt)
        except (*_FAILS, XmlArgError) as exc:
            return self._fail(args.device, exc, f"get-config {args.source}")
        if flt is not None and reply.data is not None and len(reply.data) == 0:
            missing = self._unmatched(args.device, args.source, flt)
            if missing is not None:
                return missing
        return self._xml_result(reply, f"{args.device} {args.source}", args.device)

    def _unmatched(self, device: str, source: str, flt: Any) -> ToolResult | None:
        """For a filter that selected nothing: ``not_found`` naming the list entry it asked for
        by key and the keys that exist (:func:`ani.adapters.objects.unmatched_keys`), e.g.
        ``e1 running: unknown route-map 'NOPE' (by name); known: RM-A, RM-B``; None when no
        content-match leaf is to blame (or the unfiltered datastore cannot be read)."""
        try:
            full = self._rpc(device, "get_config", safe=True, source=source)
        except _FAILS:
            return None
        found = unmatched_keys(flt, full.data)
        if not found:
            return None
        u = found[0]
        return ToolResult.failure(
            ErrorCode.NOT_FOUND,
            f"{device} {source}: " + unknown(u.list, u.value, u.known) + f" (the filter's {u.key}; nothing selected)",
            data={"device": device, "source": source, "list": u.list, "key": u.key, "name": u.value,
                  "suggestion": suggest(u.value, u.known), "known": u.known, "xml": ""})

    @tool(
        args=GetStateArgs,
        read_only=True,
        description=(
            "Read a device's operational state (NETCONF get) as XML: <frr-state "
            "xmlns=\"urn:ani:yang:ani-frr\"> with interface (admin/oper status, addresses), route "
            "(the RIB: prefix, protocol, selected, next-hop), bgp-neighbor (state, "
            "prefixes-received) and ospf-neighbor. Use it to verify a change took effect."
        ),
    )
    def get_state(self, args: GetStateArgs) -> ToolResult:
        try:
            default = None
            if not args.filter:  # frr-state; a device without ani-frr: everything it has
                self.session(args.device).ensure()
                default = f'<frr-state xmlns="{FRR_NS}"/>' if self.serves_model(args.device) else None
            flt = filter_element(args.filter or default) if (args.filter or default) else None
            reply = self._rpc(args.device, "get", safe=True, filter=flt)
        except (*_FAILS, XmlArgError) as exc:
            return self._fail(args.device, exc, "get")
        return self._xml_result(reply, f"{args.device} state", args.device)

    def _xml_result(self, reply: Any, what: str, device: str = "") -> ToolResult:
        data = reply.data
        xml = pretty(list(data)) if data is not None else ""
        text, truncated, total = self._capped(xml)
        out = {"xml": text, "truncated": truncated, "bytes": total,
               "warnings": [w.to_dict() for w in reply.warnings]}
        shown = text if text.strip() else f"(no data: {what} is empty or the filter selected nothing)"
        if device and not self.serves_model(device):
            note = self._foreign_note(device)
            out["note"] = note
            shown += "\nnote: " + note
        return ToolResult.success(shown + warning_lines(reply.warnings), out)

    def _foreign_note(self, device: str) -> str:
        hello = self._sessions[device].hello
        assert hello is not None
        return (f"{device} does not serve the YANG module {MODEL} (its hello announces: "
                f"{hello.module_list()}): its data is in those modules, not in <frr>; "
                "write filters and edits in their namespaces")

    @tool(
        args=SchemaArgs,
        read_only=True,
        description=(
            "Read a YANG module from the device (NETCONF get-schema, RFC 6022): identifier "
            "ani-frr is the data model of every router (namespace urn:ani:yang:ani-frr)."
        ),
    )
    def get_schema(self, args: SchemaArgs) -> ToolResult:
        device = args.device or (self.devices[0] if self.devices else "")
        kw: dict[str, Any] = {"identifier": args.identifier}
        if args.version:
            kw["version"] = args.version
        try:
            reply = self._rpc(device, "get_schema", safe=True, **kw)
        except _FAILS as exc:
            return self._fail(device, exc, f"get-schema {args.identifier}")
        d = reply.root.find(f"{{{MONITORING_NS}}}data")
        text = (d.text or "") if d is not None else ""
        capped, truncated, total = self._capped(text)
        return ToolResult.success(capped, {"identifier": args.identifier, "schema": capped,
                                           "truncated": truncated, "bytes": total})

    @tool(
        args=CompareArgs,
        read_only=True,
        description=(
            "Show what a commit would change on a device: a unified diff from the running to "
            "the candidate datastore (format cli: FRR configuration lines and nftables firewall "
            "lines; xml: the XML). Empty when the candidate equals running."
        ),
    )
    def compare(self, args: CompareArgs) -> ToolResult:
        try:
            run = self._rpc(args.device, "get_config", safe=True, source="running").data
            cand = self._rpc(args.device, "get_config", safe=True, source="candidate").data
        except _FAILS as exc:
            return self._fail(args.device, exc, "get-config")
        fmt = args.format
        note = ""
        if fmt == "cli" and not self.serves_model(args.device):
            note = f"(shown as XML: {args.device} does not serve {MODEL}, whose FRR text format cli shows)\n"
            fmt = "xml"
        if fmt == "cli":
            try:
                a, b = as_lines(args.device, run), as_lines(args.device, cand)
            except Exception as exc:  # noqa: BLE001 - fall back to the XML diff, say why
                note = f"(shown as XML: the datastore could not be rendered as FRR text: {exc})\n"
                fmt = "xml"
        if fmt == "xml":
            a = pretty(list(run)).splitlines() if run is not None else []
            b = pretty(list(cand)).splitlines() if cand is not None else []
        diff = unified(a, b, f"{args.device} running", f"{args.device} candidate")
        changes = sum(1 for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
        text, truncated, _ = self._capped(diff)
        shown = note + (text if diff else f"no difference: the candidate of {args.device} equals running")
        return ToolResult.success(shown, {"diff": text, "truncated": truncated, "changes": changes, "format": fmt})

    # -- candidate tools ---------------------------------------------------------------------

    @tool(
        args=EditConfigArgs,
        description=(
            "Edit the candidate datastore of a device (NETCONF edit-config, target candidate); "
            "running is untouched until commit. " + WORKFLOW
        ),
    )
    def edit_config(self, args: EditConfigArgs) -> ToolResult:
        try:
            cfg = config_element(args.config)
        except XmlArgError as exc:
            return error_result(exc, what="edit_config")
        return self._simple(args.device, "edit_config", "edit-config",
                            "candidate edited (running unchanged until commit)", config=cfg,
                            target="candidate", default_operation=args.default_operation,
                            error_option=args.error_option)

    @tool(
        args=A2DeviceArgs,
        read_only=True,
        description=(
            "Validate the candidate datastore of a device (NETCONF validate): YANG types, "
            "mandatory nodes, references (leafrefs), and the rules FRR enforces. Errors fail "
            "the call; warnings are returned."
        ),
    )
    def validate(self, args: A2DeviceArgs) -> ToolResult:
        return self._simple(args.device, "validate", "validate", "candidate is valid",
                            source="candidate")

    @tool(
        args=A2DeviceArgs,
        description="Throw away uncommitted edits: the candidate becomes a copy of running (NETCONF discard-changes).",
    )
    def discard_changes(self, args: A2DeviceArgs) -> ToolResult:
        return self._simple(args.device, "discard_changes", "discard-changes",
                            "candidate reset to running")

    @tool(
        args=LockArgs,
        description=(
            "Lock a datastore of a device (NETCONF lock) so no other session can change it; "
            "refused (lock-denied, naming the holder's session-id) if another session holds it "
            "or has uncommitted candidate edits. Lock the candidate before editing it."
        ),
    )
    def lock(self, args: LockArgs) -> ToolResult:
        res = self._simple(args.device, "lock", f"lock {args.target}", f"{args.target} locked",
                           target=args.target)
        if res.ok:
            self._locks.setdefault(args.device, set()).add(args.target)
            assert res.data is not None
            res.data.update(target=args.target, session_id=self.session(args.device).session_id)
        return res

    @tool(args=LockArgs, description="Release a lock taken with lock (NETCONF unlock).")
    def unlock(self, args: LockArgs) -> ToolResult:
        res = self._simple(args.device, "unlock", f"unlock {args.target}",
                           f"{args.target} unlocked", target=args.target)
        if res.ok:
            self._locks.get(args.device, set()).discard(args.target)
            assert res.data is not None
            res.data["target"] = args.target
        return res

    # -- commit tools ------------------------------------------------------------------------

    @tool(
        args=CommitArgs,
        destructive=True,
        description=(
            "Commit the candidate of each device to running (NETCONF commit), in order. "
            "confirmed=true (default): a confirmed commit that reverts by itself after "
            "confirm_timeout_s seconds (default 600) unless confirm_commit follows; a "
            "follow-up confirmed commit restarts the timer. If one device fails, the confirmed "
            "commits this call already made are cancelled. " + WORKFLOW
        ),
    )
    def commit(self, args: CommitArgs) -> ToolResult:
        kw = commit_kwargs(args.confirmed, args.confirm_timeout_s)
        timeout = (args.confirm_timeout_s or DEFAULT_CONFIRM_TIMEOUT_S) if args.confirmed else None
        per: dict[str, dict[str, Any]] = {}
        done: list[str] = []
        failed: tuple[str, Exception] | None = None
        for d in _unique(args.devices):
            try:
                before = self._running(d)
                t0 = time.monotonic()
                gen = self.session(d).generation
                reply = self._rpc(d, "commit", **kw)
            except _FAILS as exc:
                failed = (d, exc)
                break
            # committed: record it before reading running again, so that a session drop during
            # that read (the server then rolls a confirmed commit back) is accounted for
            if args.confirmed:
                self._pending[d] = (t0 + float(timeout or 0), int(timeout or 0))
                self._lost.pop(d, None)
            else:
                self._pending.pop(d, None)
            try:
                changed: bool | None = before != self._running(d)
            except _FAILS:
                changed = None  # committed; whether running changed is not known
            if args.confirmed and self.session(d).generation != gen:
                self._pending.pop(d, None)
                self._lost[d] = "the session that made it dropped, so the server rolled it back"
                failed = (d, SessionLost(
                    f"{d}: the confirmed commit was made, then the NETCONF session dropped, so "
                    "the server rolled it back (RFC 6241 §8.4.1); " + _REDO))
                break
            per[d] = {"ok": True, "changed": changed is not False,
                      "warnings": [w.to_dict() for w in reply.warnings]}
            if changed is None:
                per[d]["changed_unknown"] = True
            done.append(d)
        kind = f"confirmed commit (reverts in {timeout} s unless confirmed)" if args.confirmed else "commit"
        data: dict[str, Any] = {"devices": per, "confirmed": args.confirmed, "confirm_timeout_s": timeout}
        if failed is None:
            lines = [f"{d}: {kind}" + ("" if per[d]["changed"] else " - running unchanged")
                     + warning_lines([_rebuild(w) for w in per[d]["warnings"]]) for d in done]
            return ToolResult.success("\n".join(lines), data, changed=any(p["changed"] for p in per.values()))

        d, exc = failed
        res = self._fail(d, exc, "commit")
        per[d] = {"ok": False, "error": res.error.message if res.error else str(exc), **(res.data or {})}
        msg = res.error.message if res.error else str(exc)
        cancelled, stuck, emptied = [], [], []
        if done and args.confirmed:
            for x in done:
                try:
                    b = self._running(x)
                    self._rpc(x, "cancel_commit")
                    a = self._running(x)
                    self._pending.pop(x, None)
                    cancelled.append(x)
                    per[x]["cancelled"] = True
                    per[x]["changed"] = per[x]["changed"] and a == b  # changed, then restored -> False
                    per[x]["candidate_equals_running"] = self._candidate(x) == a
                    if per[x]["candidate_equals_running"]:
                        emptied.append(x)
                except _FAILS as cexc:
                    stuck.append(f"{x} ({cexc})")
            if cancelled:
                msg += (f"; the confirmed commit(s) already made on {', '.join(cancelled)} were cancelled "
                        "(running restored to before the first confirmed commit)")
            if emptied:
                msg += (f"; the candidate of {', '.join(emptied)} equals running again (its edits are gone: "
                        "edit again before committing)")
            if stuck:
                msg += f"; cancelling failed on {', '.join(stuck)}: they revert at the confirm timeout"
        elif done:
            msg += f"; {', '.join(done)} were already committed (plain commit: not undone)"
        data.update({"failed_device": d, "cancelled": cancelled})
        changed = any(p.get("changed") for x, p in per.items() if x != d)
        return ToolResult.failure(
            res.error.code if res.error else ErrorCode.COMMAND_FAILED, msg,
            retriable=bool(res.error and res.error.retriable), data=data, changed=changed,
        )

    @tool(
        args=DevicesArgs,
        destructive=True,
        description=(
            "Confirm the pending confirmed commit on each device (a NETCONF commit without "
            "<confirmed>): the change becomes permanent. Refused for a device with no confirmed "
            "commit pending from this session (expired, cancelled, or its session dropped)."
        ),
    )
    def confirm_commit(self, args: DevicesArgs) -> ToolResult:
        per: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        codes: list[ErrorCode] = []
        retriable = True
        for d in _unique(args.devices):
            try:
                self._require(d, "confirm_commit", TOOL_NEEDS["confirm_commit"])
                why = self._not_pending(d)
                if why is None:
                    before = self._running(d)
                    # that read re-opens a dropped session (and so forgets its pending commit,
                    # which the server rolled back): a plain commit on the new session would
                    # confirm nothing
                    why = self._not_pending(d)
                if why is None:
                    reply = self._rpc(d, "commit")
                    after = self._running(d)
            except _FAILS as exc:
                r = self._fail(d, exc, "confirming commit")
                per[d] = {"ok": False, "error": r.error.message if r.error else str(exc), **(r.data or {})}
                problems.append(per[d]["error"])
                codes.append(r.error.code if r.error else ErrorCode.COMMAND_FAILED)
                retriable = retriable and bool(r.error and r.error.retriable)
                continue
            if why is not None:
                per[d] = {"ok": False, "error": why}
                problems.append(f"{d}: {why}")
                codes.append(ErrorCode.COMMAND_FAILED)
                retriable = False
                continue
            self._pending.pop(d, None)
            per[d] = {"ok": True, "changed": before != after, "warnings": [w.to_dict() for w in reply.warnings]}
        changed = any(p.get("changed") for p in per.values())
        ok = [d for d, p in per.items() if p["ok"]]
        if problems:
            msg = "; ".join(problems) + (f" (confirmed: {', '.join(ok)})" if ok else "")
            return ToolResult.failure(_one_code(codes), msg, retriable=retriable and not ok,
                                      data={"devices": per}, changed=changed)
        return ToolResult.success("\n".join(f"{d}: commit confirmed" for d in ok), {"devices": per}, changed=changed)

    def _not_pending(self, d: str) -> str | None:
        if d in self._lost:
            return f"no confirmed commit to confirm: {self._lost[d]}; {_REDO}"
        p = self._pending.get(d)
        if p is None:
            return "no confirmed commit of this session is pending (commit with confirmed=true first)"
        deadline, timeout = p
        if time.monotonic() > deadline:
            self._pending.pop(d, None)
            return (f"the confirm timeout ({timeout} s) has passed: the server has reverted the commit; "
                    + _REDO)
        return None

    @tool(
        args=DevicesArgs,
        destructive=True,
        description=(
            "Cancel the pending confirmed commit on each device now (NETCONF cancel-commit): "
            "running goes back to what it was before the first confirmed commit."
        ),
    )
    def cancel_commit(self, args: DevicesArgs) -> ToolResult:
        per: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        codes: list[ErrorCode] = []
        for d in _unique(args.devices):
            try:
                before = self._running(d)
                reply = self._rpc(d, "cancel_commit")
                after = self._running(d)
            except _FAILS as exc:
                r = self._fail(d, exc, "cancel-commit")
                per[d] = {"ok": False, "error": r.error.message if r.error else str(exc), **(r.data or {})}
                problems.append(per[d]["error"])
                codes.append(r.error.code if r.error else ErrorCode.COMMAND_FAILED)
                continue
            self._pending.pop(d, None)
            self._lost.pop(d, None)
            per[d] = {"ok": True, "changed": before != after, "warnings": [w.to_dict() for w in reply.warnings]}
        changed = any(p.get("changed") for p in per.values())
        if problems:
            return ToolResult.failure(_one_code(codes), "; ".join(problems), data={"devices": per}, changed=changed)
        return ToolResult.success("\n".join(f"{d}: confirmed commit cancelled, running restored" for d in per),
                                  {"devices": per}, changed=changed)


# -- helpers --------------------------------------------------------------------------------


def _one_code(codes: list[ErrorCode]) -> ErrorCode:
    """The code of a call that failed on several devices: theirs when they agree (``unsupported``
    on every one), else ``command_failed``."""
    return codes[0] if codes and len(set(codes)) == 1 else ErrorCode.COMMAND_FAILED


def _unique(xs: list[str]) -> list[str]:
    return list(dict.fromkeys(xs))


def _rebuild(d: dict[str, Any]) -> ReplyError:
    return ReplyError(severity=d.get("severity", "warning"), tag=d.get("tag", ""), type=d.get("type", ""),
                      message=d.get("message", ""), path=d.get("path"), app_tag=d.get("app_tag"),
                      info=d.get("info") or {})

