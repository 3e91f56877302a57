"""The device model as YANG data: module ``ani-frr`` (``yang/ani-frr.yang``), validated with yangson.

API (the XML forms use namespace :data:`NS`; error paths are XPaths with prefix ``frr``):

- :func:`data_model` -> ``yangson.DataModel`` of ``yang/`` (built once, cached).
- :func:`module_texts` -> ``{name: (revision, YANG text)}`` of every module (for get-schema).
- :func:`to_json` / :func:`from_json`: DeviceConfig <-> RFC 7951 JSON ``{"ani-frr:frr": {...}}``.
- :func:`to_xml` / :func:`from_xml`: DeviceConfig <-> ``<frr xmlns=NS>`` (RFC 7950 XML, list
  keys first).
- :func:`validate_xml` / :func:`validate_json` -> ``list[Issue]`` (errors and warnings).
- :func:`state_to_xml`: operational state (RFC 7951 JSON of ``frr-state``) -> ``<frr-state>``.

What is checked, in this order (the first error stops the checks; warnings are all reported):

1. Shape and types (RFC 7950 XML / RFC 7951 JSON): unknown elements (``unknown-element``),
   values outside their type, pattern or range (``invalid-value``), a list entry without its
   key (``missing-element``).
2. yangson validation: mandatory leaves (``missing-element``), ``min-elements``
   (``operation-failed`` / ``too-few-elements``), leafrefs that must resolve (``data-missing`` /
   ``instance-required``: a neighbor's route-map, a redistribute route-map, a peer-group, a
   firewall set), and the ``must`` statements, i.e. what FRR refuses (``operation-failed`` /
   ``frr-refuses``, or ``must-violation``).
3. The device model's own rules (pydantic, ``invalid-value`` / ``model-rule``): host bits in a
   prefix, ``ge`` below the prefix length, overlapping firewall set elements, ...
4. Warnings: a route-map entry matching a prefix-list that does not exist (FRR accepts it; the
   leafref has ``require-instance false``), ``warning`` / ``instance-missing``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from lxml import etree
from pydantic import ValidationError as PydanticError
from yangson import DataModel
from yangson.enumerations import ContentType, ValidationScope
from yangson.exceptions import (
    RawDataError,
    SchemaError,
    SemanticError,
    ValidationError,
    YangsonException,
    YangTypeError,
)
from yangson.instance import InstanceNode
from yangson.schemanode import ListNode

from ani.device.model import DeviceConfig
from ani.device.yang_map import TOP, model_to_raw, raw_to_model_dict
from ani.device.yang_xml import (
    PREFIX,
    XmlDataError,
    child_map,
    key_pred,
    raw_to_xml,
    shown,
    text,
    why_invalid,
    xml_to_raw,
)
from ani.errors import ModelError
from ani.resources import data_path

NS = "urn:ani:yang:ani-frr"
MODULE = "ani-frr"
REVISION = "2026-11-29"
STATE_TOP = "ani-frr:frr-state"

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    """One finding of a validation.

    ``severity``: ``error`` or ``warning``; ``path``: XPath of the offending node (prefix ``frr``
    = :data:`NS`); ``message``: what is wrong, naming the value; ``tag``: RFC 6241 error-tag;
    ``app_tag``: RFC 7950 §15 error-app-tag (``instance-required``, ``must-violation``,
    ``too-few-elements``, ...) or the module's own (``frr-refuses``, ``model-rule``) or None.
    """

    severity: Severity
    path: str
    message: str
    tag: str
    app_tag: str | None = None

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


class YangDataError(ModelError, ValueError):
    """Data that does not validate; ``issues`` lists the findings (at least one error)."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        errors = [i for i in issues if i.severity == "error"] or issues
        super().__init__("; ".join(str(i) for i in errors))


# -- the schema --------------------------------------------------------------------------------


def yang_dir() -> Path:
    """The folder of the YANG modules (``yang/`` in a checkout, ``ani/_data/yang`` in a wheel)."""
    return data_path("yang")


def _library() -> dict[str, Any]:
    mods = [{"name": MODULE, "revision": REVISION, "namespace": NS, "conformance-type": "implement"}]
    return {"ietf-yang-library:modules-state": {"module-set-id": f"{MODULE}@{REVISION}", "module": mods}}


@lru_cache(maxsize=1)
def data_model() -> DataModel:
    """The yangson data model of ``ani-frr`` (built on first use, then cached; read-only)."""
    return DataModel(json.dumps(_library()), [str(yang_dir())])


def module_texts() -> dict[str, tuple[str, str]]:
    """``{module name: (revision, YANG source text)}`` of the modules in ``yang/``."""
    return {MODULE: (REVISION, (yang_dir() / f"{MODULE}.yang").read_text())}


def _top(name: str) -> Any:
    return data_model().schema.get_data_child(name, MODULE)


# -- conversions -------------------------------------------------------------------------------


def to_json(cfg: DeviceConfig) -> dict[str, Any]:
    """RFC 7951 JSON ``{"ani-frr:frr": {...}}`` of ``cfg`` (without ``hostname``; ``unmodelled``
    lines have no YANG form and are left out). Defaults are not written."""
    return model_to_raw(cfg)


def to_xml(cfg: DeviceConfig) -> etree._Element:
    """``<frr xmlns="urn:ani:yang:ani-frr">`` of ``cfg`` (like :func:`to_json`), children in
    schema order, list keys first (RFC 7950 §7.8.5)."""
    return _raw_to_elem(to_json(cfg)[TOP], "frr")


def state_to_xml(raw_state: dict[str, Any]) -> etree._Element:
    """``<frr-state xmlns=NS>`` of operational state given as RFC 7951 JSON, either
    ``{"ani-frr:frr-state": {...}}`` or the inner object (``{"interface": [...], "route":
    [...], "bgp-neighbor": [...], "ospf-neighbor": [...]}``). Raises YangDataError if the
    state does not fit the schema."""
    inner = raw_state.get(STATE_TOP, raw_state)
    canonical, issues = _yangson_issues({STATE_TOP: inner}, ContentType.all)
    if canonical is None:
        raise YangDataError(issues)
    return _raw_to_elem(canonical[STATE_TOP], "frr-state")


def _raw_to_elem(inner: dict[str, Any], name: str) -> etree._Element:
    return raw_to_xml(inner, _top(name), etree.Element(f"{{{NS}}}{name}", nsmap={None: NS}), NS)


def xml_to_json(elem: etree._Element) -> dict[str, Any]:
    """RFC 7951 JSON ``{"ani-frr:frr": {...}}`` of an ``<frr xmlns=NS>`` element (shape and
    types checked, not the rest). Raises YangDataError."""
    q = etree.QName(elem)
    if q.namespace != NS or q.localname != "frr":
        raise YangDataError([Issue("error", f"/{q.localname}", f"expected element frr in namespace {NS}, "
                                   f"got {q.localname} in {q.namespace!r}", "unknown-element")])
    try:
        return {TOP: xml_to_raw(elem, _top("frr"), NS, f"/{PREFIX}:frr")}
    except XmlDataError as e:
        raise YangDataError([Issue("error", e.path, e.message, e.tag)]) from None


def from_json(raw: dict[str, Any], hostname: str) -> DeviceConfig:
    """The DeviceConfig of RFC 7951 JSON ``{"ani-frr:frr": {...}}`` (no member: the empty
    configuration). Raises YangDataError if any check of :func:`validate_json` finds an error
    (warnings do not raise)."""
    m, issues = _check(raw, hostname)
    if m is None:
        raise YangDataError(issues)
    return m


def from_xml(elem: etree._Element, hostname: str) -> DeviceConfig:
    """The DeviceConfig of ``<frr xmlns=NS>``; raises YangDataError like :func:`from_json`."""
    return from_json(xml_to_json(elem), hostname)


def validate_json(raw: dict[str, Any]) -> list[Issue]:
    """Every warning and the first error (if any) of RFC 7951 JSON ``{"ani-frr:frr": {...}}``."""
    return _check(raw, "validate")[1]


def validate_xml(elem: etree._Element) -> list[Issue]:
    """Every warning and the first error (if any) of ``<frr xmlns=NS>`` (see the module
    docstring for what is checked)."""
    try:
        raw = xml_to_json(elem)
    except YangDataError as e:
        return e.issues
    return validate_json(raw)


# -- checks ------------------------------------------------------------------------------------


def _check(raw: Any, hostname: str) -> tuple[DeviceConfig | None, list[Issue]]:
    if not isinstance(raw, dict):
        return None, [Issue("error", "/", f"expected a JSON object, got {type(raw).__name__}", "malformed-message")]
    extra = set(raw) - {TOP}
    if extra:
        name = sorted(extra)[0]
        return None, [Issue("error", f"/{name}", f"unknown top-level member {name} (expected {TOP})",
                            "unknown-element")]
    canonical, issues = _yangson_issues(raw, ContentType.config)
    if canonical is None:
        return None, issues
    data = raw_to_model_dict(canonical, hostname)
    try:
        m = DeviceConfig.model_validate(data)
    except PydanticError as e:
        return None, issues + [_model_issue(err, data) for err in e.errors()][:1]
    return m, issues


def _yangson_issues(raw: dict[str, Any], ctype: ContentType) -> tuple[dict[str, Any] | None, list[Issue]]:
    """(the data as yangson writes it back, i.e. member names without a redundant module
    prefix, or None if there is an error; the issues)."""
    try:
        inst = data_model().from_raw(raw)
    except RawDataError as e:
        return None, [_raw_issue(e, raw)]
    except YangsonException as e:  # e.g. an unknown module prefix in a member name
        return None, [Issue("error", "/", str(e), "invalid-value")]
    canonical = inst.raw_value()
    warnings = _warnings(canonical[TOP]) if TOP in canonical else []
    try:
        inst.validate(ValidationScope.all, ctype)
    except ValidationError as e:
        return None, warnings + [_validation_issue(e)]
    return canonical, warnings


def _warnings(f: dict[str, Any]) -> list[Issue]:
    """Leafrefs with ``require-instance false`` that resolve to nothing."""
    lists = {p.get("name") for p in f.get("prefix-list", [])}
    out = []
    for rm in f.get("route-map", []):
        name = rm.get("name")
        for e in rm.get("entry", []):
            pl, seq = e.get("match-prefix-list"), e.get("seq")
            if pl is not None and pl not in lists:
                path = (f"/{PREFIX}:frr/{PREFIX}:route-map{key_pred('name', name)}"
                        f"/{PREFIX}:entry{key_pred('seq', seq)}/{PREFIX}:match-prefix-list")
                out.append(Issue("warning", path, f"prefix-list {pl} does not exist (route-map {name} "
                                 f"seq {seq} matches nothing with it)", "data-missing", "instance-missing"))
    return out


def _xpath(inst: InstanceNode) -> str:
    """XPath (prefix ``frr``) of a yangson instance node, list entries by their keys."""
    steps: list[str] = []
    preds = ""
    node: InstanceNode | None = inst
    while node is not None and node.parinst is not None:
        key = node._key
        sn = node.schema_node
        if isinstance(key, int):
            if isinstance(sn, ListNode):
                preds = "".join(key_pred(k[0], node.value[k[0]]) for k in sn.keys if k[0] in node.value)
            else:
                preds = key_pred(".", node.value)
        else:
            steps.append(f"/{PREFIX}:{key.split(':')[-1]}{preds}")
            preds = ""
        node = node.parinst
    return "".join(reversed(steps)) or "/"


_SEMANTIC_TAGS = {"instance-required", "too-few-elements", "too-many-elements", "non-unique-key",
                  "repeated-leaf-list-value"}


def _validation_issue(e: ValidationError) -> Issue:
    inst = e.instance
    path = _xpath(inst)
    sn = inst.schema_node
    name = getattr(sn, "name", "?")
    detail = f": {e.message}" if e.message else ""
    if isinstance(e, YangTypeError):
        return Issue("error", path, f"invalid value {shown(text(inst.value))} for {name}: {why_invalid(sn.type, inst.value)}",
                     "invalid-value")
    if isinstance(e, SchemaError):
        if e.tag in ("missing-data", "list-key-missing"):
            return Issue("error", path, f"{name} is missing a mandatory element{detail}", "missing-element", None)
        return Issue("error", path, f"{name}: {e.tag}{detail}", "unknown-element", None)
    assert isinstance(e, SemanticError)
    if e.tag == "instance-required":
        target = str(getattr(sn.type, "path", "?")).replace(f"{MODULE}:", "")
        return Issue("error", path, f"{name} {inst.value!r} refers to nothing: no such instance of {target}"
                     + _known_targets(sn, inst), "data-missing", "instance-required")
    if e.tag in _SEMANTIC_TAGS:
        return Issue("error", path, f"{name}: {e.tag}{detail}", "operation-failed", e.tag)
    msg = " ".join((e.message or f"must condition of {name} is false").split())
    return Issue("error", path, msg, "operation-failed", e.tag or "must-violation")


def _known_targets(sn: Any, inst: InstanceNode) -> str:
    """``"; did you mean ...; known: a, b"`` of the values a leafref could refer to (its path
    evaluated on the instance, :func:`ani.names.hint`); "" when they cannot be told."""
    from ani.names import hint

    try:
        nodes = sn.type.path.evaluate(inst)
        known = sorted({str(n.value) for n in nodes})
    except Exception:  # noqa: BLE001 - a hint only: the error stands without it
        return ""
    return hint(str(inst.value), known)


def _raw_issue(e: RawDataError, raw: dict[str, Any]) -> Issue:
    """An Issue for yangson's RawMemberError / RawTypeError (JSON input); the JSON pointer is
    turned into an XPath with list keys."""
    parts = [p for p in e.path.split("/") if p]
    steps: list[str] = []
    node: Any = raw
    sn: Any = None
    for p in parts:
        if isinstance(node, list) and p.isdigit() and int(p) < len(node) and steps:
            node = node[int(p)]
            if isinstance(sn, ListNode) and isinstance(node, dict):
                steps[-1] += "".join(key_pred(k[0], node[k[0]]) for k in sn.keys if k[0] in node)
            else:
                steps[-1] += key_pred(".", node) if not isinstance(node, dict) else f"[{int(p) + 1}]"
            continue
        p, _, keys = p.partition("=")
        local = p.split(":")[-1]
        steps.append(f"/{PREFIX}:{local}")
        node = node.get(p) if isinstance(node, dict) else None
        if sn is None and len(steps) == 1:
            sn = _top(local)
        elif sn is not None and hasattr(sn, "data_children"):
            sn = child_map(sn).get(local)
        if keys and isinstance(sn, ListNode) and isinstance(node, list):
            values = keys.split(",")
            names = [k[0] for k in sn.keys]
            steps[-1] += "".join(key_pred(k, v) for k, v in zip(names, values))
            node = next((e for e in node if isinstance(e, dict)
                         and [text(e.get(k)) for k in names] == values), None)
    path = "".join(steps) or "/"
    kind = type(e).__name__
    if kind == "RawMemberError":
        return Issue("error", path, f"unknown member {parts[-1] if parts else '?'}", "unknown-element")
    value = node
    return Issue("error", path, f"invalid value {shown(value)}: {getattr(e, 'message', str(e))}", "invalid-value")


_DICT_FIELDS = {"interfaces": ("interface", "name"), "peer_groups": ("peer-group", "name"),
                "neighbors": ("neighbor", "address"), "prefix_lists": ("prefix-list", "name"),
                "route_maps": ("route-map", "name"), "sets": ("set", "name"),
                "redistribute": ("redistribute", "source"), "peers": ("peer", "name")}
_RENAME = {"static_routes": "static-route", "networks": "network", "entries": "entry",
           "forward_rules": "forward-rule", "addresses": "address", "elements": "element",
           "nexthop": "next-hop", "ipv4_unicast": "ipv4-unicast"}


def _model_issue(err: Any, data: dict[str, Any]) -> Issue:
    """An Issue for one pydantic error (the device model's own rules); ``data`` is the
    ``DeviceConfig.model_validate`` input, used to name list entries by their keys."""
    steps: list[str] = [f"/{PREFIX}:frr"]
    loc = list(err.get("loc", ()))
    node: Any = data
    i = 0
    while i < len(loc):
        part = loc[i]
        if isinstance(part, int) and isinstance(node, list) and part < len(node):
            node = node[part]
            steps[-1] += _entry_preds(node, part)
        elif part in _DICT_FIELDS and i + 1 < len(loc) and isinstance(node, dict):
            lname, key = _DICT_FIELDS[part]
            steps.append(f"/{PREFIX}:{lname}{key_pred(key, loc[i + 1])}")
            node = (node.get(part) or {}).get(loc[i + 1])
            i += 1
        elif isinstance(part, str) and isinstance(node, dict) and part in node:
            steps.append(f"/{PREFIX}:{_RENAME.get(part, part.replace('_', '-'))}")
            node = node[part]
        i += 1
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    value = err.get("input")
    if not isinstance(value, (dict, list)):
        msg = f"{msg} (value {shown(value)})"
    return Issue("error", "".join(steps), msg, "invalid-value", "model-rule")


def _entry_preds(entry: Any, index: int) -> str:
    if not isinstance(entry, dict):
        return key_pred(".", entry)
    if "seq" in entry:
        return key_pred("seq", entry["seq"])
    if "nexthop" in entry:
        return key_pred("prefix", entry.get("prefix")) + key_pred("next-hop", entry["nexthop"])
    if "prefix" in entry:
        return key_pred("prefix", entry["prefix"])
    return f"[{index + 1}]"
