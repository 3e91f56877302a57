"""Adversarial cases of the NETCONF server's pure logic (ani.netconf.editconfig / rpc) and of the
A2 adapter's argument handling (ani.adapters.netconf_xml), found by trying to break them the
way clients, agents and bug reports do. Each test names the kind of fault it guards against.

The behaviour over the wire on real FRR is in tests/integration/test_netconf_adversarial.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from ani.netconf import editconfig
from ani.netconf.errors import BASE_NS

YDIR = Path(__file__).parent.parent / "data" / "yang"
EC = "urn:ani:test:ec"


@pytest.fixture(scope="module")
def schema() -> editconfig.Schema:
    from yangson import DataModel

    dm = DataModel.from_file(str(YDIR / "yang-library.json"), [str(YDIR)])
    return editconfig.Schema.from_datamodel(dm)


def data(inner: str) -> etree._Element:
    return etree.fromstring(f'<data xmlns="{BASE_NS}"><top xmlns="{EC}">{inner}</top></data>')


def config(inner: str) -> etree._Element:
    return etree.fromstring(
        f'<config xmlns="{BASE_NS}" xmlns:nc="{BASE_NS}"><top xmlns="{EC}">{inner}</top></config>')


def entries(n: int, start: int = 1) -> str:
    return "".join(f"<entry><seq>{i}</seq><action>permit</action><prefix>p{i}</prefix></entry>"
                   for i in range(start, start + n))


# -- kind: quadratic work per request (a long list held the router's lock for minutes) ------------


def _count_canonical(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = editconfig.canonical

    def counting(node, text):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(node, text)

    monkeypatch.setattr(editconfig, "canonical", counting)
    return calls


@pytest.mark.parametrize("existing", [0, 400])
def test_edit_of_a_long_list_does_linear_value_work(schema, monkeypatch, existing):
    """Adding 400 entries to a list (empty, or already holding 400) must not compare every new
    entry's key with every existing one: 1000 entries took 7 s on the server (O(n^2) key
    canonicalisation), 5000 timed the client out while holding the router's lock."""
    n = 400
    before = data(f"<pl><name>A</name>{entries(existing, start=10_000)}</pl>")
    calls = _count_canonical(monkeypatch)
    r = editconfig.edit(schema, before, config(f"<pl><name>A</name>{entries(n)}</pl>"))
    assert not r.errors and r.changed
    assert len(r.tree.findall(f".//{{{EC}}}entry")) == n + existing
    assert calls[0] < 20 * (n + existing), calls[0]  # linear; quadratic is ~ n * (n + existing)


def test_long_list_edit_keeps_semantics(schema):
    """The lookup index must see entries created, replaced and deleted earlier in the same
    request (create of one just created is data-exists; delete of one just deleted is
    data-missing)."""
    before = data("<pl><name>A</name>" + entries(3) + "</pl>")
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="delete"><seq>2</seq></entry>'
        '<entry nc:operation="create"><seq>2</seq><action>deny</action></entry>'
        '<entry nc:operation="replace"><seq>3</seq><action>deny</action></entry>'
        '<entry><seq>3</seq><prefix>q3</prefix></entry></pl>'))
    assert not r.errors
    q = lambda n: f"{{{EC}}}{n}"  # noqa: E731
    got = {e.findtext(q("seq")): (e.findtext(q("action")), e.findtext(q("prefix")))
           for e in r.tree.iter(q("entry"))}
    assert got == {"1": ("permit", "p1"), "2": ("deny", None), "3": ("deny", "q3")}
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="delete"><seq>2</seq></entry>'
        '<entry nc:operation="delete"><seq>2</seq></entry></pl>'))
    assert [e.tag for e in r.errors] == ["data-missing"]
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="create"><seq>7</seq><action>deny</action></entry>'
        '<entry nc:operation="create"><seq>7</seq><action>deny</action></entry></pl>'))
    assert [e.tag for e in r.errors] == ["data-exists"]
