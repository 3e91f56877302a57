"""Every ``error-path`` of an ``<rpc-reply>`` declares the prefixes it uses (RFC 6241 §4.3).

Issue 23 §4: replies named ``/frr:frr/...`` without declaring ``frr``; yangcli (yuma123) then
refused every such reply ("invalid XPath expression syntax"). Here the real datastore
(ani-frr codec, in-memory backend) answers bad requests of every kind that carries a path
(edit-config's own checks, YANG validation, a must / leafref, data-exists / data-missing,
an unknown attribute), and each path is compiled and evaluated by lxml with only the namespaces
in scope at its ``<error-path>`` element: an undeclared prefix fails there. The interop itself,
with Debian's yangcli, is tests/integration/test_netconf_yangcli.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lxml import etree

from ani.device.yang import module_texts
from ani.device.yang_xml import key_pred, xpath_literal
from ani.netconf.errors import BASE_NS, RpcError, path_prefixes
from ani.netconf.rpc import Session, handle, path_namespaces, server_capabilities

sys.path.insert(0, str(Path(__file__).parent))
from test_netconf_datastore import V1, FakeBackend, Timers  # noqa: E402, I001

FRR = "urn:ani:yang:ani-frr"
NS = {"nc": BASE_NS}


@pytest.fixture
def sess() -> Session:
    from ani.netconf.datastore import Device

    schemas = module_texts()
    dev = Device("r1", FakeBackend(V1.model_copy(deep=True)), "r1", timer=Timers())
    return Session(id=5, device=dev, schemas=schemas, capabilities=server_capabilities(schemas),
                   base11=True)


def edit(inner: str, op_ns: str = f'xmlns:nc="{BASE_NS}"') -> bytes:
    return (f'<rpc xmlns="{BASE_NS}" message-id="1"><edit-config><target><candidate/></target>'
            f'<config {op_ns}><frr xmlns="{FRR}">{inner}</frr></config></edit-config></rpc>').encode()


# each probe gets at least one rpc-error with an error-path using the frr prefix
PROBES = {
    "invalid value (YANG pattern, invert-match)": edit("<ospf><router-id>0.0.0.0</router-id></ospf>"),
    "invalid key value": edit("<prefix-list><name>PL A</name></prefix-list>"),
    "unknown element": edit("<prefix-list><name>PL-A</name><bogus>1</bogus></prefix-list>"),
    "data-missing (delete)": edit(
        '<prefix-list nc:operation="delete"><name>PL-NONE</name></prefix-list>'),
    "data-exists (create)": edit(
        '<static-route nc:operation="create"><prefix>192.0.2.0/24</prefix>'
        "<next-hop>10.0.12.2</next-hop></static-route>"),
    "leafref to nothing (must, validation)": edit(
        "<bgp><asn>64501</asn><neighbor><address>10.0.12.2</address><remote-as>64502</remote-as>"
        "<prefix-list-in>PL-NONE</prefix-list-in></neighbor></bgp>"),
    "key value with a colon": edit(
        '<prefix-list nc:operation="delete"><name>a:b</name></prefix-list>'),
}


def error_paths(reply: bytes) -> list[etree._Element]:
    root = etree.fromstring(reply)
    return root.findall("nc:rpc-error/nc:error-path", NS)


@pytest.mark.parametrize("probe", PROBES)
def test_every_error_path_resolves_with_its_declared_prefixes(sess, probe):
    r = handle(PROBES[probe], sess)
    paths = error_paths(r.xml)
    assert paths, r.xml.decode()
    for e in paths:
        assert path_prefixes(e.text) == ["frr"], e.text  # the probe's path is a model path
        scope = {p: u for p, u in e.nsmap.items() if p}
        assert scope["frr"] == FRR
        # compiles and evaluates with only what is declared at the element (lxml raises
        # XPathEvalError "Undefined namespace prefix" otherwise)
        etree.XPath(e.text, namespaces=scope)(etree.fromstring(f'<frr xmlns="{FRR}"/>'))


def test_declared_on_the_error_path_when_the_rpc_binds_frr_elsewhere(sess):
    """The reply echoes the <rpc>'s namespace declarations: a client binding ``frr`` to another
    URI still gets the path's own binding at <error-path>."""
    msg = edit("<ospf><router-id>0.0.0.0</router-id></ospf>").replace(
        b'message-id="1"', b'message-id="1" xmlns:frr="urn:example:other"')
    (e,) = error_paths(handle(msg, sess).xml)
    assert e.nsmap["frr"] == FRR


def test_path_prefixes_skips_literals_and_axes():
    assert path_prefixes("/frr:frr/frr:prefix-list[frr:name='a:b']/nc:x") == ["frr", "nc"]
    assert path_prefixes('/a:x[a:k="b:c"]/child::a:y') == ["a"]
    assert path_prefixes("/") == []


def test_path_namespaces_reads_each_module_header():
    yang = ('module m {\n  namespace "urn:m";\n  prefix "mm";\n  import x { prefix xx; }\n}\n')
    assert path_namespaces({"m": ("", yang)}) == {"nc": BASE_NS, "mm": "urn:m"}


def test_an_unknown_prefix_is_left_undeclared_not_invented():
    e = RpcError("invalid-value", "x", path="/zz:a/frr:b").to_xml(prefixes={"frr": FRR})
    p = e.find("nc:error-path", NS)
    assert p.nsmap.get("frr") == FRR and "zz" not in p.nsmap


# key values holding both quote kinds: XPath 1.0 has no escape inside a literal, so the path's
# predicate is a concat() (issue 23 §4, yangcli: "unended quoted string" on [frr:name="A'B"C]"])
QUOTED_NAMES = ["A'B\"C]", "'\"", "a''b\"c", "x\"y'"]


@pytest.mark.parametrize("value", ["", "a", "a'b", 'a"b', *QUOTED_NAMES, "'", '"', "''\"\"", "a]b/c:d"])
def test_xpath_literal_evaluates_to_its_value_and_key_pred_selects_it(value):
    lit = xpath_literal(value)
    assert etree.XPath(f"string({lit})")(etree.fromstring("<x/>")) == value
    assert ("concat(" in lit) == ("'" in value and '"' in value)
    doc = etree.fromstring(f'<frr xmlns="{FRR}"><n><name/></n><n><name>other</name></n><l/></frr>')
    doc[0][0].text = doc[2].text = value
    assert etree.XPath(f"/frr:frr/frr:n{key_pred('name', value)}", namespaces={"frr": FRR})(doc) == [doc[0]]
    assert etree.XPath(f"/frr:frr/frr:l{key_pred('.', value)}", namespaces={"frr": FRR})(doc) == [doc[2]]
    assert path_prefixes(f"/frr:n{key_pred('name', value)}") == ["frr"]


@pytest.mark.parametrize("name", QUOTED_NAMES)
@pytest.mark.parametrize("how", ["delete missing", "unknown child", "bad entry"])
def test_a_key_with_both_quote_kinds_gives_a_path_that_selects_its_entry(sess, name, how):
    esc = name.replace("&", "&amp;").replace("<", "&lt;")
    inner = {"delete missing": f'<prefix-list nc:operation="delete"><name>{esc}</name></prefix-list>',
             "unknown child": f"<prefix-list><name>{esc}</name><bogus>1</bogus></prefix-list>",
             "bad entry": (f"<prefix-list><name>{esc}</name><entry><seq>10</seq>"
                           "<action>maybe</action></entry></prefix-list>")}[how]
    paths = error_paths(handle(edit(inner), sess).xml)
    assert paths
    doc = etree.fromstring(f'<frr xmlns="{FRR}"><prefix-list><name/></prefix-list>'
                           f"<prefix-list><name/><entry><seq>10</seq><action/><bogus/></entry>"
                           f"</prefix-list></frr>")
    doc[1][0].text = name
    for e in paths:
        assert "frr:prefix-list[frr:name=" in e.text, e.text
        scope = {p: u for p, u in e.nsmap.items() if p}
        found = etree.XPath(e.text, namespaces=scope)(doc)  # compiles: quotes are balanced
        prefix_list = e.text.split("]/")[0] + "]"
        assert etree.XPath(prefix_list, namespaces=scope)(doc) == [doc[1]], e.text
        assert found or how == "unknown child"
