"""``near-miss-object``: the change to a prefix-list, route-map or nftables set lands on the
similarly named object of another tenant or service (a guessed name, the draft's near-miss
trap).

The objects the correct change edits (a prefix-list, a route-map or a set of ``table inet fw``
whose content differs between the configurations read and the intended ones) are the
candidates; each one's near miss is the other object of the same type, present on every router
where it changes, nearest by edit distance (ties: by name) and similar: at most half the
name's length apart (``tenant_red`` / ``tenant_green``: 3; ``PL-EXT-IN`` / ``PL-EXT-OUT``: 3;
``PL-TENANTS`` / ``PL-EXT-IN``: 6, not similar). One candidate is drawn (the
variant's generator, candidates sorted); on every router where it changes, it keeps its content
before the change and its near miss gets the edit instead: the entries the change adds (by
sequence number: one the near miss already has is replaced, as FRR does) and removes (when the
near miss has that sequence number), or the set elements it adds and removes. A candidate whose
edit would leave its near miss empty, or add an element overlapping one of it, is left out.
Device layer: A3-T (typed intents) cannot express it.
"""

from __future__ import annotations

from typing import Any

from ani.agents.mistakes.base import DEVICE_LEVELS, Made, MistakeContext, MistakeKind, nearest, register_mistake
from ani.device.model import DeviceConfig

#: the object types and their DeviceConfig field
TYPES = {"prefix-list": "prefix_lists", "route-map": "route_maps", "set": "sets"}


def objects(cfg: DeviceConfig, kind: str) -> dict[str, Any]:
    """``{name: object}`` of one type in ``cfg`` (sets: of ``table inet fw``)."""
    if kind == "set":
        return dict(cfg.firewall.sets) if cfg.firewall is not None else {}
    return dict(getattr(cfg, TYPES[kind]))


def changed_objects(before: dict[str, DeviceConfig], after: dict[str, DeviceConfig]) -> dict[tuple[str, str], list[str]]:
    """``{(type, name): [routers where it changes]}`` between ``before`` and ``after``."""
    out: dict[tuple[str, str], list[str]] = {}
    for r in sorted(after):
        for kind in TYPES:
            old, new = objects(before[r], kind), objects(after[r], kind)
            for name in sorted(set(old) | set(new)):
                if old.get(name) != new.get(name):
                    out.setdefault((kind, name), []).append(r)
    return out


def _edit(kind: str, old: Any, new: Any, partner: Any) -> Any:
    """``partner`` with the edit from ``old`` to ``new`` applied (None: the edit would empty a
    prefix-list / route-map, or add a set element overlapping one of the set)."""
    if kind == "set":
        was = set(old.elements) if old is not None else set()
        now = set(new.elements) if new is not None else set()
        elems = [e for e in partner.elements if e not in was - now]
        for e in sorted(now - was, key=lambda n: (n.network_address, n.prefixlen)):
            if any(e.overlaps(x) for x in elems):
                return None
            elems.append(e)
        return type(partner)(elements=elems)
    was = {e.seq: e for e in old.entries} if old is not None else {}
    now = {e.seq: e for e in new.entries} if new is not None else {}
    entries = {e.seq: e for e in partner.entries}
    for seq in set(was) - set(now):
        entries.pop(seq, None)
    for seq, e in now.items():
        if was.get(seq) != e:
            entries[seq] = e
    if not entries:
        return None
    return type(partner).model_validate({"entries": [e.model_dump() for e in entries.values()]})


def _put(cfg: DeviceConfig, kind: str, name: str, obj: Any) -> DeviceConfig:
    """``cfg`` with object ``name`` set to ``obj`` (None: removed)."""
    objs = objects(cfg, kind)
    if obj is None:
        objs.pop(name, None)
    else:
        objs[name] = obj
    if kind == "set":
        assert cfg.firewall is not None
        return cfg.model_copy(update={"firewall": cfg.firewall.model_copy(update={"sets": objs})})
    return cfg.model_copy(update={TYPES[kind]: objs})


@register_mistake
class NearMissObject(MistakeKind):
    """See the module doc."""

    name = "near-miss-object"
    layer = "device"
    levels = DEVICE_LEVELS
    summary = ("the change to a prefix-list, route-map or nftables set lands on the similarly named "
               "object of another tenant or service (nearest name by edit distance)")

    def candidates(self, ctx: MistakeContext) -> list[tuple[str, str, str, int, list[str]]]:
        """``[(type, name, near miss, edit distance, routers)]`` the variant offers, sorted."""
        out = []
        for (kind, name), routers in sorted(changed_objects(ctx.before, ctx.after).items()):
            common = set.intersection(*(set(objects(ctx.before[r], kind)) for r in routers))
            near = nearest(name, sorted(common))
            if near is None or 2 * near[1] > len(name):
                continue
            partner = near[0]
            if all(self._mistaken(ctx, kind, name, partner, r) is not None for r in routers):
                out.append((kind, name, partner, near[1], routers))
        return out

    def _mistaken(self, ctx: MistakeContext, kind: str, name: str, partner: str, r: str) -> DeviceConfig | None:
        old, new = objects(ctx.before[r], kind).get(name), objects(ctx.after[r], kind).get(name)
        edited = _edit(kind, old, new, objects(ctx.after[r], kind)[partner])
        if edited is None:
            return None
        try:
            return _put(_put(ctx.after[r], kind, name, old), kind, partner, edited).canonical()
        except ValueError:  # e.g. a route-map the configuration still refers to
            return None


    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        kind, name, partner, dist, routers = ctx.rng.choice(self.candidates(ctx))
        out = dict(ctx.after)
        for r in routers:
            cfg = self._mistaken(ctx, kind, name, partner, r)
            assert cfg is not None  # candidates() checked it
            out[r] = cfg
        note = f"the change to {kind} {name} was made to {partner} instead, on {', '.join(routers)}"
        target = {"object_type": kind, "object": name, "near_miss": partner, "distance": dist, "routers": routers}
        return out, Made(kind=self.name, expressed=True, note=note, target=target)
