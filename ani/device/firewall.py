"""The firewall part of the device model <-> nftables.

``render(fw)`` writes a :class:`~ani.device.model.Firewall` as an nft script (``nft -f``)::

    table inet fw {
      set tenant_blue {
        type ipv4_addr
        flags interval
        elements = { 198.18.11.0/24, 198.18.12.0/24 }
      }
      chain forward {
        type filter hook forward priority 0; policy accept;
        ip saddr @tenant_blue ip daddr @tenant_red drop
      }
    }

``replace_script(fw)`` wraps it so that ONE ``nft -f`` replaces ``table inet fw`` atomically
(nft applies a file as one transaction): ``table inet fw`` (creates it if missing),
``delete table inet fw``, then the new table (none when ``fw`` is None).

``parse_ruleset(doc)`` reads ``nft -j list ruleset`` (JSON, libnftables schema 1) back into a
Firewall plus the list of what the model cannot express, as lines ``"nft / ..."`` (like
``DeviceConfig.unmodelled``): any other table, other chains or objects in ``inet fw``, a
``forward`` chain with another type / hook / priority, sets of another type or with other flags
or options, elements that are not prefixes (ranges), and rules other than
``[ip saddr @A] [ip daddr @B] accept|drop``. Nothing is silently dropped.

The chain: a table without a ``forward`` chain reads as policy accept with no rules (what such a
chain does); ``render`` always writes the chain.

``diff(a, b)`` lists the changes between two firewalls as ``+ nft / ...`` / ``- nft / ...`` lines.
"""

from __future__ import annotations

import json
from ipaddress import IPv4Network
from typing import Any

from ani.device.model import Firewall, FirewallRule, FirewallSet

FAMILY = "inet"
TABLE = "fw"
CHAIN = "forward"
#: the name prefix of the nftables tables the harness's faults own (the ``packet_loss`` kind's
#: ``netdev`` drop table, :mod:`ani.faults.kinds.packet_loss`): the substrate below the router, a
#: lossy cable, not the router's configuration: :func:`parse_ruleset` leaves them out, so no
#: level's view of the configuration (A2's running datastore, A1 / A0 reads through the device
#: model, the observer's change diff) holds them or sees running change when they come and go
SUBSTRATE_TABLE_PREFIX = "ani_fault_"

#: the start of every unmodelled line about ``table inet fw`` (the table ``replace_script`` owns)
TABLE_PREFIX = f"nft / table {FAMILY} {TABLE}"
_PREFIX = TABLE_PREFIX


# -- rendering ---------------------------------------------------------------------------------


def rule_text(r: FirewallRule) -> str:
    """``ip saddr @A ip daddr @B drop`` (a missing match is left out)."""
    parts = []
    if r.saddr_set is not None:
        parts.append(f"ip saddr @{r.saddr_set}")
    if r.daddr_set is not None:
        parts.append(f"ip daddr @{r.daddr_set}")
    return " ".join([*parts, r.action])


def render(fw: Firewall) -> str:
    """The nft script of ``fw`` (``table inet fw { ... }``), sets in the model's order, the
    ``forward`` chain last. The model only holds set names nft accepts
    (:mod:`ani.device.nft_names`), so the script parses."""
    out = [f"table {FAMILY} {TABLE} {{"]
    for name, s in fw.sets.items():
        out += [f"  set {name} {{", "    type ipv4_addr", "    flags interval"]
        if s.elements:
            out.append("    elements = { " + ", ".join(_elem(e) for e in s.elements) + " }")
        out.append("  }")
    out += [f"  chain {CHAIN} {{", f"    type filter hook forward priority 0; policy {fw.forward_policy};"]
    out += [f"    {rule_text(r)}" for r in fw.forward_rules]
    out += ["  }", "}"]
    return "\n".join(out) + "\n"


def replace_script(fw: Firewall | None) -> str:
    """An ``nft -f`` script that makes ``table inet fw`` equal ``fw`` in one transaction (or
    removes the table when ``fw`` is None); other tables are not touched."""
    head = f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"
    return head if fw is None else head + render(fw)


def about_table(line: str) -> bool:
    """An unmodelled line about ``table inet fw`` itself (which ``replace_script`` rewrites),
    not about another table."""
    return line == TABLE_PREFIX or line.startswith(TABLE_PREFIX + " / ")


def _elem(n: IPv4Network) -> str:
    return str(n.network_address) if n.prefixlen == 32 else str(n)


# -- parsing -----------------------------------------------------------------------------------


def parse_ruleset(doc: dict[str, Any] | str) -> tuple[Firewall | None, list[str]]:
    """``nft -j list ruleset`` output (text or parsed) -> (Firewall or None if there is no
    ``table inet fw``, unmodelled lines ``"nft / ..."``). Tables named
    ``SUBSTRATE_TABLE_PREFIX*`` (a fault's, not the router's) are left out entirely.

    Raises ValueError (json.JSONDecodeError included) if ``doc`` is not an nft JSON ruleset.
    """
    if isinstance(doc, str):
        doc = json.loads(doc)
    if not isinstance(doc, dict) or not isinstance(doc.get("nftables"), list):
        raise ValueError("not an nft JSON ruleset (no 'nftables' list)")
    unmodelled: list[str] = []
    found = False
    ours: list[tuple[str, dict[str, Any]]] = []
    for item in doc["nftables"]:
        if not isinstance(item, dict) or len(item) != 1 or not isinstance(next(iter(item.values())), dict):
            unmodelled.append("nft / " + _compact(item))
            continue
        (kind, obj), = item.items()
        if kind == "metainfo":
            continue
        if str(obj.get("table", obj.get("name") if kind == "table" else "")).startswith(SUBSTRATE_TABLE_PREFIX):
            continue  # the substrate's (a fault's table and everything in it): not configuration
        mine = obj.get("family") == FAMILY and obj.get("table", obj.get("name")) == TABLE
        if kind == "table":
            found = found or mine
            if not mine:
                unmodelled.append(f"nft / table {obj.get('family')} {obj.get('name')}")
        elif mine:
            ours.append((kind, obj))
        # else: part of a table already listed as unmodelled
    if not found:
        return None, unmodelled

    sets: dict[str, FirewallSet] = {}
    policy = "accept"
    chain_ok = True
    for kind, obj in ours:
        if kind == "set":
            s, why = _parse_set(obj)
            if s is None:
                unmodelled.append(f"{_PREFIX} / set {obj.get('name')} / {why}")
            else:
                sets[obj["name"]] = s
        elif kind == "chain" and obj.get("name") == CHAIN:
            want = {"type": "filter", "hook": "forward", "prio": 0}
            got = {k: obj.get(k) for k in want}
            if got != want or obj.get("policy") not in ("accept", "drop"):
                chain_ok = False
                unmodelled.append(
                    f"{_PREFIX} / chain {CHAIN} / type {got['type']} hook {got['hook']} "
                    f"priority {got['prio']}; policy {obj.get('policy')}"
                )
            else:
                policy = obj["policy"]
        elif kind == "chain":
            unmodelled.append(f"{_PREFIX} / chain {obj.get('name')}")
        elif kind != "rule":
            unmodelled.append(f"{_PREFIX} / {kind} {obj.get('name', '')}".rstrip())
    rules: list[FirewallRule] = []
    for kind, obj in ours:
        if kind != "rule" or obj.get("chain") != CHAIN:
            continue  # rules of other chains: their chain is listed as unmodelled
        r = _parse_rule(obj) if chain_ok else None
        if r is None or any(x is not None and x not in sets for x in (r.saddr_set, r.daddr_set)):
            # not of the modelled form, in an unmodelled chain, or naming an unmodelled set
            unmodelled.append(f"{_PREFIX} / chain {CHAIN} / rule {_rule_words(obj)}")
        else:
            rules.append(r)
    return Firewall(sets=sets, forward_policy=policy, forward_rules=rules), unmodelled


def _parse_set(obj: dict[str, Any]) -> tuple[FirewallSet | None, str]:
    """A set of the modelled kind, or (None, what the model cannot express)."""
    extra = sorted(set(obj) - {"family", "name", "table", "type", "handle", "flags", "elem"})
    if obj.get("type") != "ipv4_addr":
        return None, f"type {_value(obj.get('type'))}"
    if obj.get("flags") != ["interval"]:
        return None, "flags " + ",".join(obj.get("flags") or ["(none)"])
    if extra:
        return None, " ".join(f"{k} {_compact(obj[k])}" for k in extra)
    elems: list[IPv4Network] = []
    for e in obj.get("elem", []):
        if isinstance(e, str):
            elems.append(IPv4Network(e))
        elif isinstance(e, dict) and set(e) == {"prefix"}:
            elems.append(IPv4Network(f"{e['prefix']['addr']}/{e['prefix']['len']}"))
        else:
            return None, f"element {_value(e)}"
    try:
        s = FirewallSet(elements=elems)
        Firewall(sets={obj["name"]: s})  # the model's rules for the name
    except ValueError as exc:
        return None, " ".join(str(exc).split())[:200]
    return s, ""


def _parse_rule(obj: dict[str, Any]) -> FirewallRule | None:
    if set(obj) - {"family", "table", "chain", "handle", "expr"}:
        return None  # e.g. a comment
    expr = obj.get("expr") or []
    if not expr or not isinstance(expr[-1], dict) or set(expr[-1]) not in ({"accept"}, {"drop"}):
        return None
    matches: dict[str, str] = {}
    for e in expr[:-1]:
        m = e.get("match") if isinstance(e, dict) and len(e) == 1 else None
        if not m or m.get("op") != "==":
            return None
        left, right = m.get("left"), m.get("right")
        payload = left.get("payload") if isinstance(left, dict) else None
        if (
            not payload
            or payload.get("protocol") != "ip"
            or payload.get("field") not in ("saddr", "daddr")
            or not isinstance(right, str)
            or not right.startswith("@")
            or payload["field"] in matches
        ):
            return None
        matches[payload["field"]] = right[1:]
    if list(matches) not in ([], ["saddr"], ["daddr"], ["saddr", "daddr"]):
        return None  # daddr before saddr: nft keeps that order, the model does not
    (action,) = expr[-1]
    return FirewallRule(saddr_set=matches.get("saddr"), daddr_set=matches.get("daddr"), action=action)


def _rule_words(obj: dict[str, Any]) -> str:
    """A readable form of a rule nft listed in JSON (nft syntax for the common expressions,
    compact JSON for the rest); a comment is kept."""
    words = [_expr(e) for e in obj.get("expr") or []]
    if "comment" in obj:
        words.append(f'comment "{obj["comment"]}"')
    return " ".join(words)


def _expr(e: Any) -> str:
    if not isinstance(e, dict) or len(e) != 1:
        return _compact(e)
    (k, v), = e.items()
    if v is None:
        return k  # accept, drop, masquerade, ...
    if k == "match" and isinstance(v, dict):
        op = "" if v.get("op") in ("==", "in") else f"{v.get('op')} "
        return f"{_value(v.get('left'))} {op}{_value(v.get('right'))}"
    if k == "counter":
        return "counter"
    return _compact(e)


def _value(v: Any) -> str:
    if isinstance(v, dict) and len(v) == 1:
        (k, x), = v.items()
        if k == "payload" and isinstance(x, dict) and "protocol" in x:
            return f"{x['protocol']} {x.get('field')}"
        if k == "meta" and isinstance(x, dict):
            return f"meta {x.get('key')}"
        if k == "prefix" and isinstance(x, dict):
            return f"{x.get('addr')}/{x.get('len')}"
        if k == "range" and isinstance(x, list) and len(x) == 2:
            return f"{_value(x[0])}-{_value(x[1])}"
        if k == "set" and isinstance(x, list):
            return "{ " + ", ".join(_value(i) for i in x) + " }"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return str(v)
    return _compact(v)


def _compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


# -- differences -------------------------------------------------------------------------------


def diff(a: Firewall | None, b: Firewall | None) -> list[str]:
    """What changes from ``a`` to ``b``, as ``- nft / ...`` and ``+ nft / ...`` lines (sets,
    their elements, the policy, the rules in order); empty if equal."""
    if a == b:
        return []
    if a is None or b is None:
        sign, fw = ("+", b) if a is None else ("-", a)
        assert fw is not None
        return [f"{sign} {_PREFIX}", *(f"{sign} {ln}" for ln in _lines(fw))]
    out: list[str] = []
    for name in a.sets.keys() - b.sets.keys():
        out.append(f"- {_PREFIX} / set {name}")
    for name, s in b.sets.items():
        if name not in a.sets:
            out.append(f"+ {_PREFIX} / set {name}")
            out += [f"+ {_PREFIX} / set {name} / element {_elem(e)}" for e in s.elements]
            continue
        old = set(a.sets[name].elements)
        out += [f"- {_PREFIX} / set {name} / element {_elem(e)}" for e in a.sets[name].elements if e not in s.elements]
        out += [f"+ {_PREFIX} / set {name} / element {_elem(e)}" for e in s.elements if e not in old]
    if a.forward_policy != b.forward_policy:
        out.append(f"- {_PREFIX} / chain {CHAIN} / policy {a.forward_policy}")
        out.append(f"+ {_PREFIX} / chain {CHAIN} / policy {b.forward_policy}")
    if a.forward_rules != b.forward_rules:
        out += [f"- {_PREFIX} / chain {CHAIN} / rule {i + 1}: {rule_text(r)}" for i, r in enumerate(a.forward_rules)]
        out += [f"+ {_PREFIX} / chain {CHAIN} / rule {i + 1}: {rule_text(r)}" for i, r in enumerate(b.forward_rules)]
    return out


def _lines(fw: Firewall) -> list[str]:
    out = []
    for name, s in fw.sets.items():
        out.append(f"{_PREFIX} / set {name}")
        out += [f"{_PREFIX} / set {name} / element {_elem(e)}" for e in s.elements]
    out.append(f"{_PREFIX} / chain {CHAIN} / policy {fw.forward_policy}")
    out += [f"{_PREFIX} / chain {CHAIN} / rule {i + 1}: {rule_text(r)}" for i, r in enumerate(fw.forward_rules)]
    return out
