"""Service class ``prefix-list-entry``: ``ip prefix-list NAME seq SEQ ACTION PREFIX [ge] [le]``.

::

    {"type": "prefix-list-entry", "action": "add", "routers": ["e1", "e2"], "name": "PL-A", "prefix": "192.0.2.0/24"}
    # -> e1, e2: ip prefix-list PL-A seq <one free seq on both> permit 192.0.2.0/24

- changes: :class:`PrefixListEntryAdd`, :class:`PrefixListEntryRemove`; service id
  ``prefix-list-entry/<list>/<prefix or any>``.
- allocate (at apply): no ``seq``: one seq for every router, the largest of what each router's
  seq pool of the list offers (``Pools.seq``), recorded as ``changes.<i>.seq``.
- check: ``seq-conflict`` naming the owner of a taken seq (a tenant's site prefix names the tenant).
- discover: identical entries (list, prefix, seq, action, ge, le) grouped over routers; the same
  prefix at different seqs on different routers is one service with ``seq`` None.
- shares: the list (a tenant site's entries live in the edge's tenant prefix-list too) and its seqs.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ani.device.model import PrefixList, PrefixListEntry
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import (
    MAX_LIST_ITEMS,
    Int,
    Intent,
    IntentAdd,
    IntentRemove,
    Name,
    RouterName,
    Service,
    add_entry,
    drop_entries,
    is_remove,
    router,
    tenant_of,
)

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools

__all__ = ["PrefixListEntryAdd", "PrefixListEntryRemove", "PrefixListEntryService"]


class _PrefixListEntry(Intent):
    """``ip prefix-list NAME seq SEQ ACTION PREFIX [ge] [le]`` on each of ``routers``."""

    type: Literal["prefix-list-entry"] = "prefix-list-entry"
    routers: list[RouterName] = Field(min_length=1, max_length=MAX_LIST_ITEMS)
    name: Name
    seq: Int | None = Field(default=None, ge=1, le=4294967295, description="None: allocated from the list's pool")
    entry_action: Literal["permit", "deny"] = "permit"
    prefix: IPv4Network | None = Field(default=None, description="None means 'any'")
    ge: Int | None = Field(default=None, ge=1, le=32)
    le: Int | None = Field(default=None, ge=1, le=32)

    def service_id(self) -> str:
        return f"prefix-list-entry/{self.name}/{self.prefix if self.prefix is not None else 'any'}"


class PrefixListEntryAdd(IntentAdd, _PrefixListEntry):
    pass


class PrefixListEntryRemove(IntentRemove, _PrefixListEntry):
    pass


def _seq_owner(state: dict[str, DeviceConfig], router_name: str, plist: str, seq: int) -> str:
    cfg = state[router_name]
    entry = next(e for e in cfg.prefix_lists[plist].entries if e.seq == seq)
    if entry.prefix is not None:
        t = tenant_of(state, entry.prefix)
        if t is not None:
            return f"tenant {t} ({entry.prefix})"
    return f"{entry.action} {entry.prefix or 'any'}"


@register
class PrefixListEntryService(ServiceClass):
    """Prefix-list entries (see the module doc)."""

    name = "prefix-list-entry"
    changes = (PrefixListEntryAdd, PrefixListEntryRemove)
    id_format = "prefix-list-entry/<list>/<prefix or any>"
    description = ("ip prefix-list NAME seq SEQ permit|deny PREFIX on a set of routers (seq allocated when "
                   "omitted). add, remove.")
    pinned = {"add": ("seq",)}
    shares = ("prefix-lists (PL-TENANTS holds every tenant site's entry) and their seqs",)

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        for i, r in enumerate(ch.routers):
            cfg = router(state, r, f"{path}.routers.{i}")
            lst = cfg.prefix_lists.get(ch.name)
            entries = lst.entries if lst else []
            has = any(e.prefix == ch.prefix for e in entries)
            if is_remove(ch, has, path, f"{r}: no entry {ch.prefix or 'any'} in prefix-list {ch.name}",
                         f"{r}: prefix-list {ch.name} already has {ch.prefix or 'any'}", f"{path}.prefix"):
                continue
            if ch.seq is not None and any(e.seq == ch.seq for e in entries):
                raise IntentError("seq-conflict", f"{r}: seq {ch.seq} of prefix-list {ch.name} is used by {_seq_owner(state, r, ch.name, ch.seq)}", f"{path}.seq")

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        return [ch.prefix] if ch.prefix is not None else []

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        if ch.action == "remove":
            for r in ch.routers:
                drop_entries(state[r].prefix_lists, ch.name, lambda e: e.prefix != ch.prefix, PrefixList)
            return
        seq = ch.seq
        if seq is None:  # one seq for every router: the largest of what each router's pool offers
            seq = max(pools.seq(r, ch.name).allocate() for r in ch.routers)
            alloc[f"{path}.seq"] = seq
        for r in ch.routers:
            pools.seq(r, ch.name).used.add(seq)
            entry = PrefixListEntry(seq=seq, action=ch.entry_action, prefix=ch.prefix, ge=ch.ge, le=ch.le)
            add_entry(state[r].prefix_lists, ch.name, entry, PrefixList)

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        pl: dict[tuple, list[str]] = {}
        for r, cfg in configs.items():
            for name, lst in cfg.prefix_lists.items():
                for e in lst.entries:
                    pl.setdefault((name, e.prefix, e.seq, e.action, e.ge, e.le), []).append(r)
        by_id: dict[str, Service] = {}
        for (name, prefix, seq, action, ge, le), routers in pl.items():
            spec = PrefixListEntryAdd(routers=routers, name=name, seq=seq, entry_action=action, prefix=prefix, ge=ge, le=le)
            sid = spec.service_id()
            if sid in by_id:  # the same prefix at different seqs on different routers: one service
                old = by_id[sid]
                old.routers = old.routers + routers
                old.spec = old.spec.model_copy(update={"routers": old.routers, "seq": None})
                continue
            by_id[sid] = Service(sid, "prefix-list-entry", spec, routers)
        return list(by_id.values())
