"""``<edit-config>`` on lxml trees, driven by a YANG schema (RFC 6241 §7.2, RFC 7950 §7).

The engine is generic: :class:`Schema` is built from any yangson ``DataModel`` (containers,
lists with their keys, leaf-lists, leaves, choices; ``config false`` nodes are not editable),
and :func:`edit` applies the ``<config>`` of a request to a datastore tree::

    schema = Schema.from_datamodel(dm)
    result = edit(schema, datastore, config, default_operation="merge",
                  error_option="stop-on-error")
    result.tree      # the new datastore (a copy; ``datastore`` is never modified)
    result.errors    # [RpcError], in document order (empty on success)
    result.changed   # the tree differs from ``datastore``

``datastore`` is an element (e.g. ``<data>``) whose children are the top-level data nodes;
``config`` is the request's ``<config>`` element (or any element whose children are top-level
data nodes). Leaf values are stored in their YANG canonical form; new nodes are inserted with
list keys first and otherwise in schema order.

Semantics (RFC 6241 §7.2):

- ``operation`` is an attribute in the base namespace ``urn:ietf:params:xml:ns:netconf:base:1.0``
  (``merge | replace | create | delete | remove``); it is inherited by descendants.
  An ``operation`` attribute without that namespace, or any other attribute, is
  ``unknown-attribute`` (error-info ``bad-attribute``, ``bad-element``); a bad value is
  ``bad-attribute``.
- Existence is decided on the datastore tree: ``delete`` of a missing node is ``data-missing``,
  ``create`` of an existing one ``data-exists``, ``remove`` of a missing one does nothing.
  Under ``default-operation none`` a container or list entry of the request that does not exist
  in the datastore is ``data-missing`` (a nested ``replace`` below it is never reached).
- The request is checked against the schema before anything changes: an element of an unknown
  namespace is ``unknown-namespace`` (error-info ``bad-element``, ``bad-namespace``), an unknown
  or ``config false`` element ``unknown-element``, a list entry without one of its keys
  ``missing-element`` (``bad-element`` = the key), a value that is not of the leaf's type
  ``invalid-value``; a leaf given two different values in one request (e.g. the same list
  entry written twice), or text inside a container / list entry, ``bad-element``. Such errors
  leave the datastore unchanged whatever the error-option.
- ``error_option`` (RFC 6241 §7.2): ``rollback-on-error`` stops at the first error and returns
  the datastore unchanged (the edit is atomic); ``stop-on-error`` stops at the first error and
  returns the datastore with the edits *before* it applied (a ``replace`` or ``create`` whose
  subtree holds the error is not applied: it never completed); ``continue-on-error`` skips the
  failing node, applies the rest and returns every error.
- Creating a node of one ``case`` of a ``choice`` removes the nodes of the other cases
  (RFC 7950 §7.9.6).

Every error has an ``error-path`` into the data tree with the modules' prefixes, e.g.
``/frr:frr/frr:prefix-list[frr:name='PL-A']/frr:entry[frr:seq='10']``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from ani.device.yang_xml import key_pred
from ani.errors import NetconfError
from ani.netconf.errors import BASE_NS, RpcError

OPERATIONS = ("merge", "replace", "create", "delete", "remove")
DEFAULT_OPERATIONS = ("merge", "replace", "none")
ERROR_OPTIONS = ("stop-on-error", "continue-on-error", "rollback-on-error")
_OP_ATTR = f"{{{BASE_NS}}}operation"


# -- schema ------------------------------------------------------------------------------------


@dataclass(eq=False)
class SNode:
    """One data node of the schema.

    ``kind``: ``root | container | list | leaf | leaf-list``; ``ns``: XML namespace URI;
    ``prefix``: the module's prefix (for error-paths); ``keys``: a list's key leaf names;
    ``cases``: the ``(choice id, case name)`` pairs between this node and its data parent,
    outermost first; ``type``: the yangson type of a leaf / leaf-list (None otherwise).
    """

    name: str
    ns: str
    prefix: str
    kind: str
    config: bool = True
    keys: tuple[str, ...] = ()
    cases: tuple[tuple[int, str], ...] = ()
    type: Any = None
    children: dict[str, SNode] = field(default_factory=dict)  # by Clark name {ns}name
    parent: SNode | None = None

    @property
    def tag(self) -> str:
        """The Clark name ``{ns}name`` of the node's XML element."""
        return f"{{{self.ns}}}{self.name}"

    def child(self, tag: str) -> SNode | None:
        return self.children.get(tag)

    def order(self, tag: str) -> int:
        """Position of a child in the XML encoding: keys first, then schema order."""
        names = list(self.children)
        key_tags = [f"{{{self.ns}}}{k}" for k in self.keys]
        if tag in key_tags:
            return key_tags.index(tag) - len(key_tags)
        return names.index(tag) if tag in names else len(names)

    def key_nodes(self) -> list[SNode]:
        return [self.children[f"{{{self.ns}}}{k}"] for k in self.keys]


class Schema:
    """The data-node tree of a YANG data model, keyed by XML Clark names.

    Build it with :meth:`from_datamodel` (yangson ``DataModel``). ``root.children`` are the
    top-level data nodes; ``namespaces`` maps each module's XML namespace to its prefix.
    """

    def __init__(self, root: SNode, namespaces: dict[str, str]) -> None:
        self.root = root
        self.namespaces = namespaces

    @classmethod
    def from_datamodel(cls, dm: Any) -> Schema:
        namespaces: dict[str, str] = {}  # XML namespace -> prefix
        by_module: dict[str, tuple[str, str]] = {}  # module name -> (XML ns, prefix)
        for (name, _rev), mod in dm.schema_data.modules.items():
            if mod.xml_namespace is None:
                continue  # a submodule
            prefix = mod.statement.find1("prefix").argument
            by_module[name] = (mod.xml_namespace, prefix)
            namespaces[mod.xml_namespace] = prefix
        root = SNode(name="", ns="", prefix="", kind="root")
        _add_children(root, dm.schema, by_module, ())
        return cls(root, namespaces)


def _add_children(parent: SNode, ynode: Any, by_module: dict[str, tuple[str, str]],
                  cases: tuple[tuple[int, str], ...]) -> None:
    from yangson import schemanode as sn

    for ych in ynode.children:
        if isinstance(ych, sn.ChoiceNode):
            for case in ych.children:
                _add_children(parent, case, by_module, cases + ((id(ych), case.name),))
            continue
        if isinstance(ych, (sn.RpcActionNode, sn.NotificationNode)):
            continue
        if isinstance(ych, sn.ListNode):
            kind = "list"
        elif isinstance(ych, sn.ContainerNode):
            kind = "container"
        elif isinstance(ych, sn.LeafListNode):
            kind = "leaf-list"
        elif isinstance(ych, sn.LeafNode):
            kind = "leaf"
        else:  # anydata / anyxml: not editable here
            continue
        ns, prefix = by_module[ych.ns]
        node = SNode(
            name=ych.name, ns=ns, prefix=prefix, kind=kind, config=ych.config,
            keys=tuple(k[0] for k in getattr(ych, "keys", []) or ()) if kind == "list" else (),
            cases=cases, type=getattr(ych, "type", None), parent=parent,
        )
        parent.children[node.tag] = node
        if kind in ("list", "container"):
            _add_children(node, ych, by_module, ())


def canonical(node: SNode, text: str | None) -> str | None:
    """The YANG canonical form of a leaf value, or None if it is not a value of the type."""
    text = text or ""
    if node.type is None:
        return text
    try:
        val = node.type.parse_value(text)
        if val is None or val not in node.type:
            return None
        out = node.type.canonical_string(val)
    except Exception:  # noqa: BLE001 - yangson raises assorted errors for odd input
        return None
    return text if out is None else out


def _shown(text: str) -> str:
    from ani.device.yang_xml import shown

    return shown(text)


def _why(node: SNode, text: str) -> str:
    """What the leaf's type accepts (its range, length, pattern message), for a message."""
    from ani.device.yang_xml import why_invalid

    try:
        return why_invalid(node.type, text)
    except Exception:  # noqa: BLE001 - a type the describer does not know: its name then
        return str(node.type)


def _localname(tag: str) -> str:
    return etree.QName(tag).localname


def _ns(tag: str) -> str | None:
    return etree.QName(tag).namespace


def elements(parent: etree._Element) -> list[etree._Element]:
    """The element children (no comments / processing instructions)."""
    return [c for c in parent if isinstance(c.tag, str)]


# -- paths -------------------------------------------------------------------------------------


def _step(node: SNode, elem: etree._Element | None) -> str:
    s = f"/{node.prefix}:{node.name}"
    if node.kind == "list" and elem is not None:
        for k in node.keys:
            ke = elem.find(f"{{{node.ns}}}{k}")
            if ke is not None:
                s += key_pred(k, ke.text or "", node.prefix)
    elif node.kind == "leaf-list" and elem is not None:
        s += key_pred(".", elem.text or "")
    return s


# -- request checking ------------------------------------------------------------------------


def check(schema: Schema, config: etree._Element, default_operation: str = "merge") -> list[RpcError]:
    """Check a ``<config>`` against the schema before any change (unknown namespaces, elements
    and attributes, bad operation values, missing list keys, values not of their type).
    Returns the errors in document order (empty if the request is well-formed)."""
    errors: list[RpcError] = []
    _check_children(schema, config, schema.root, "", default_operation, errors, (), {})
    return errors


def _check_children(schema: Schema, req_parent: etree._Element, sparent: SNode, path: str,
                    op: str, errors: list[RpcError], dpath: tuple,
                    leaves: dict[tuple, str]) -> None:
    """``dpath``: the data path of ``req_parent`` (tags and canonical list keys); ``leaves``:
    the value set for each leaf so far in the request, by data path."""
    for req in elements(req_parent):
        ns, name = _ns(req.tag), _localname(req.tag)
        snode = sparent.child(req.tag)
        if snode is None:
            if ns not in schema.namespaces:
                known = sorted({c.ns for c in sparent.children.values() if c.name == name})
                hint = (f" ({name!r} is in namespace {known[0]!r}: write xmlns=\"{known[0]}\")"
                        if known else "")
                errors.append(RpcError(
                    "unknown-namespace",
                    f"element {name!r} has an unknown namespace {ns or ''!r}" + hint,
                    type="protocol", path=path or "/",
                    info={"bad-element": name, "bad-namespace": ns or ""}))
            else:
                errors.append(RpcError(
                    "unknown-element", f"unknown element {name!r} here", type="application",
                    path=f"{path}/{schema.namespaces[ns]}:{name}", info={"bad-element": name}))
            continue
        here = path + _step(snode, req)
        if not snode.config:
            errors.append(RpcError(
                "unknown-element", f"{name!r} is state data (config false), not configuration",
                path=here, info={"bad-element": name}))
            continue
        own = _check_attributes(req, name, here, errors)
        eff = own or op
        if snode.kind in ("container", "list") and (req.text or "").strip():
            errors.append(RpcError(
                "bad-element", f"{name!r} is a {snode.kind}: it holds elements, not text "
                f"({req.text.strip()[:40]!r})", path=here, info={"bad-element": name}))
            continue
        if snode.kind in ("leaf", "leaf-list"):
            if elements(req):
                errors.append(RpcError("bad-element", f"leaf {name!r} cannot have child elements",
                                       path=here, info={"bad-element": name}))
            elif (eff not in ("delete", "remove") or snode.kind == "leaf-list") and \
                    canonical(snode, req.text) is None:
                errors.append(RpcError(
                    "invalid-value", f"{_shown(req.text or '')} is not a valid value of {name!r} "
                    f"({_why(snode, req.text or '')})", path=here, info={"bad-element": name}))
            elif snode.kind == "leaf" and eff not in ("delete", "remove"):
                _one_value(leaves, dpath + (snode.tag,), canonical(snode, req.text) or "", name,
                           here, errors)
            continue
        if snode.kind == "list":
            for key in snode.key_nodes():
                found = req.findall(key.tag)
                if len(found) != 1:
                    errors.append(RpcError(
                        "missing-element", f"list entry {name!r} needs exactly one key {key.name!r}",
                        path=here, info={"bad-element": key.name}))
                    break
                if canonical(key, found[0].text) is None:
                    errors.append(RpcError(
                        "invalid-value", f"{_shown(found[0].text or '')} is not a valid value of key "
                        f"{key.name!r} ({_why(key, found[0].text or '')})", path=f"{here}/{key.prefix}:{key.name}",
                        info={"bad-element": key.name}))
                    break
                if found[0].get(_OP_ATTR) in ("delete", "remove", "create", "replace"):
                    errors.append(RpcError(
                        "bad-attribute", f"key {key.name!r} cannot have its own operation",
                        path=f"{here}/{key.prefix}:{key.name}",
                        info={"bad-attribute": "operation", "bad-element": key.name}))
                    break
            else:
                _check_children(schema, req, snode, here, eff, errors,
                                dpath + ((snode.tag, instance_key(snode, req)),), leaves)
            continue
        _check_children(schema, req, snode, here, eff, errors, dpath + (snode.tag,), leaves)


def _one_value(leaves: dict[tuple, str], key: tuple, value: str, name: str, path: str,
               errors: list[RpcError]) -> None:
    """A request may name a leaf more than once (a list entry or container written twice
    merges), but not with two different values: the later one would silently win (e.g. two
    prefix-list entries with the same seq), so that is ``bad-element``."""
    prev = leaves.setdefault(key, value)
    if prev != value:
        errors.append(RpcError(
            "bad-element", f"{name!r} is given twice in the request with different values "
            f"({prev!r}, then {value!r}); the same list entry (same keys) written twice?",
            path=path, info={"bad-element": name}))


def _check_attributes(req: etree._Element, name: str, path: str, errors: list[RpcError]) -> str | None:
    own = None
    for attr, value in req.attrib.items():
        if attr == _OP_ATTR:
            if value not in OPERATIONS:
                errors.append(RpcError(
                    "bad-attribute", f"operation {value!r} is not one of {', '.join(OPERATIONS)}",
                    type="protocol", path=path, info={"bad-attribute": "operation", "bad-element": name}))
            else:
                own = value
            continue
        local, ans = _localname(attr), _ns(attr)
        hint = (" (it counts only in the NETCONF base namespace "
                f"{BASE_NS}: bind a prefix to it, e.g. nc:operation)") if local == "operation" else ""
        errors.append(RpcError(
            "unknown-attribute",
            f"unexpected attribute {local!r}" + (f" in namespace {ans!r}" if ans else " (no namespace)") + hint,
            type="protocol", path=path, info={"bad-attribute": local, "bad-element": name}))
    return own


# -- applying --------------------------------------------------------------------------------


@dataclass
class EditResult:
    """``tree``: the resulting datastore (a new element); ``errors``: RpcErrors in document
    order; ``changed``: ``tree`` differs from the input datastore."""

    tree: etree._Element
    errors: list[RpcError]
    changed: bool


class _Stop(NetconfError):
    """stop-on-error: the first error ends the edit (never leaves this module)."""


def edit(schema: Schema, datastore: etree._Element, config: etree._Element,
         default_operation: str = "merge", error_option: str = "stop-on-error") -> EditResult:
    """Apply ``config`` to a copy of ``datastore`` (see the module docstring).

    Raises ValueError for a ``default_operation`` / ``error_option`` outside RFC 6241's values
    (the caller maps that to ``invalid-value`` / ``bad-element``)."""
    if default_operation not in DEFAULT_OPERATIONS:
        raise ValueError(f"default-operation must be one of {DEFAULT_OPERATIONS}")
    if error_option not in ERROR_OPTIONS:
        raise ValueError(f"error-option must be one of {ERROR_OPTIONS}")
    errors = check(schema, config, default_operation)
    if errors:
        return EditResult(datastore, errors if error_option == "continue-on-error" else errors[:1], False)
    tree = copy.deepcopy(datastore)
    ed = _Editor(error_option)
    try:
        ed.children(tree, config, schema.root, "", default_operation)
    except _Stop:
        if error_option == "rollback-on-error":
            return EditResult(datastore, ed.errors, False)
    changed = _c14n(tree) != _c14n(datastore)
    return EditResult(tree, ed.errors, changed)


def _c14n(e: etree._Element) -> bytes:
    return etree.tostring(e, method="c14n")


class _Editor:
    """Applies one request. List entries and leaf-list values are looked up through an index
    per (parent element, node) built on first use and kept up to date by every change made
    here, so a request of n entries costs O(n) lookups, not O(n * entries already there)."""

    def __init__(self, error_option: str) -> None:
        self.continue_ = error_option == "continue-on-error"
        self.errors: list[RpcError] = []
        # (id(parent), node tag) -> (parent, {instance key: element}); holding the parent keeps
        # its lxml proxy (and so its id) alive for the lifetime of the edit
        self._index: dict[tuple[int, str], tuple[etree._Element, dict[tuple, etree._Element]]] = {}

    def _instances(self, ds: etree._Element, snode: SNode) -> dict[tuple, etree._Element]:
        k = (id(ds), snode.tag)
        hit = self._index.get(k)
        if hit is None:
            idx: dict[tuple, etree._Element] = {}
            for cand in ds.iterfind(snode.tag):
                idx.setdefault(instance_key(snode, cand), cand)
            hit = self._index[k] = (ds, idx)
        return hit[1]

    def find(self, ds: etree._Element, snode: SNode, req: etree._Element) -> etree._Element | None:
        if snode.kind in ("list", "leaf-list"):
            return self._instances(ds, snode).get(instance_key(snode, req))
        return find(ds, snode, req)

    def _added(self, ds: etree._Element, snode: SNode, elem: etree._Element) -> None:
        if snode.cases:  # insert() may have removed the nodes of other cases: rebuild lazily
            for k in [k for k in self._index if k[0] == id(ds)]:
                del self._index[k]
        if snode.kind in ("list", "leaf-list"):
            self._instances(ds, snode)[instance_key(snode, elem)] = elem

    def _removed(self, ds: etree._Element, snode: SNode, elem: etree._Element) -> None:
        if snode.kind in ("list", "leaf-list"):
            self._instances(ds, snode).pop(instance_key(snode, elem), None)

    def fail(self, err: RpcError) -> None:
        self.errors.append(err)
        if not self.continue_:
            raise _Stop

    def children(self, ds: etree._Element, req_parent: etree._Element, sparent: SNode,
                 path: str, op: str, skip_keys: bool = False) -> None:
        keys = {f"{{{sparent.ns}}}{k}" for k in sparent.keys} if skip_keys else set()
        for req in elements(req_parent):
            if req.tag in keys:
                continue
            snode = sparent.child(req.tag)
            assert snode is not None  # check() ran
            self.node(ds, req, snode, path, req.get(_OP_ATTR) or op)

    def node(self, ds: etree._Element, req: etree._Element, snode: SNode, path: str, op: str) -> None:
        here = path + _step(snode, req)
        existing = self.find(ds, snode, req)
        if op in ("delete", "remove"):
            if existing is None:
                if op == "delete":
                    self.fail(RpcError("data-missing", f"cannot delete {snode.name!r}: it does not exist",
                                       path=here, info={"bad-element": snode.name}))
                return
            self._removed(ds, snode, existing)
            ds.remove(existing)
            return
        if op == "create" and existing is not None:
            self.fail(RpcError("data-exists", f"cannot create {snode.name!r}: it already exists",
                               path=here, info={"bad-element": snode.name}))
            return
        if op == "none":
            if snode.kind in ("leaf", "leaf-list"):
                return
            if existing is None:
                self.fail(RpcError(
                    "data-missing", f"{snode.name!r} does not exist (default-operation none creates "
                    "nothing; give an operation attribute to create it)", path=here,
                    info={"bad-element": snode.name}))
                return
            self.children(existing, req, snode, here, "none", skip_keys=snode.kind == "list")
            return
        # merge, replace, create
        if snode.kind in ("leaf", "leaf-list"):
            value = canonical(snode, req.text)
            if existing is None:
                new = _new(snode, ds)
                new.text = value
                insert(ds, new, snode)
                self._added(ds, snode, new)
            elif snode.kind == "leaf":
                existing.text = value
            return
        if existing is not None and op == "merge":
            self.children(existing, req, snode, here, "merge", skip_keys=snode.kind == "list")
            return
        new = _new(snode, ds)
        for key in snode.key_nodes():
            etree.SubElement(new, key.tag).text = canonical(key, req.find(key.tag).text)
        # children of a new / replaced node: create and replace act like merge on the empty node
        self.children(new, req, snode, here, "merge" if op == "create" else op,
                      skip_keys=snode.kind == "list")
        if existing is not None:  # replace in place
            self._removed(ds, snode, existing)
            ds.replace(existing, new)
        else:
            insert(ds, new, snode)
        self._added(ds, snode, new)


def _new(snode: SNode, ds: etree._Element) -> etree._Element:
    """A new element for ``snode``, declaring its namespace as the default one if ``ds``
    is in another namespace (so the tree prints without generated prefixes)."""
    same = etree.QName(ds.tag).namespace == snode.ns
    return etree.Element(snode.tag, nsmap=None if same else {None: snode.ns})


def instance_key(snode: SNode, elem: etree._Element) -> tuple:
    """What identifies an instance of a list (its key values) or leaf-list (its value), in
    canonical form; a missing key is None."""
    if snode.kind == "leaf-list":
        return (canonical(snode, elem.text),)
    out = []
    for k in snode.key_nodes():
        ke = elem.find(k.tag)
        out.append(canonical(k, ke.text) if ke is not None else None)
    return tuple(out)


def find(ds: etree._Element, snode: SNode, req: etree._Element) -> etree._Element | None:
    """The datastore instance of ``req`` under ``ds``: by key values for a list entry, by value
    for a leaf-list entry, by name otherwise; None if there is none. (One lookup; an edit
    uses an index instead, see ``_Editor``.)"""
    if snode.kind in ("list", "leaf-list"):
        want = instance_key(snode, req)
        for cand in ds.iterfind(snode.tag):
            if instance_key(snode, cand) == want:
                return cand
        return None
    return ds.find(snode.tag)


def insert(ds: etree._Element, new: etree._Element, snode: SNode) -> None:
    """Insert ``new`` (an instance of ``snode``) under ``ds``: after the last instance of the
    same node, else in the parent's schema order (keys first); remove the nodes of other
    cases of the same choices."""
    parent = snode.parent
    assert parent is not None
    if snode.cases:
        for tag, other in parent.children.items():
            if other is snode or not other.cases:
                continue
            for (c1, k1), (c2, k2) in zip(snode.cases, other.cases):
                if c1 != c2:
                    break
                if k1 != k2:
                    for e in ds.findall(tag):
                        ds.remove(e)
                    break
    last = next(ds.iterchildren(snode.tag, reversed=True), None)
    if last is not None:
        last.addnext(new)
        _fix_tail(new)
        return
    mine = parent.order(snode.tag) if parent.kind != "root" else 0
    for i, sib in enumerate(elements(ds)):
        if parent.kind != "root" and parent.order(sib.tag) > mine:
            sib.addprevious(new)
            return
    ds.append(new)


def _fix_tail(e: etree._Element) -> None:
    e.tail = None
