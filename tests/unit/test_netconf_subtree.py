"""RFC 6241 §6 subtree filtering (ani.netconf.subtree) on a fixed <data> tree."""

from __future__ import annotations

from lxml import etree

from ani.netconf import subtree
from ani.netconf.errors import BASE_NS

NS = "urn:ani:test:ec"
DATA = f"""<data xmlns="{BASE_NS}"><top xmlns="{NS}">
  <name>n1</name>
  <tag>a</tag><tag>b</tag><tag>c</tag>
  <pl><name>A</name>
    <entry><seq>5</seq><action>permit</action><prefix>192.0.2.0/24</prefix></entry>
    <entry><seq>10</seq><action>deny</action><prefix>198.51.100.0/24</prefix></entry>
  </pl>
  <pl><name>B</name>
    <entry><seq>5</seq><action>deny</action><prefix>203.0.113.0/24</prefix></entry>
  </pl>
  <sub><a>x</a><deep><b>1</b></deep></sub>
</top><state xmlns="{NS}"><up>true</up></state></data>"""


def run(filter_inner: str | None, keys=None) -> str:
    data = etree.fromstring(DATA, etree.XMLParser(remove_blank_text=True))
    f = None if filter_inner is None else etree.fromstring(
        f'<filter xmlns="{BASE_NS}" type="subtree">{filter_inner}</filter>')
    out = subtree.apply(data, f, keys)
    return _norm(out)


def _norm(e: etree._Element) -> str:
    """The <data> children as text with local names only; namespaces are checked apart."""
    return "".join(_local(c) for c in e)


def _local(e: etree._Element) -> str:
    assert etree.QName(e).namespace == NS, e.tag
    name = etree.QName(e).localname
    inner = "".join(_local(c) for c in e) if len(e) else (e.text or "")
    return f"<{name}>{inner}</{name}>"


def T(inner: str, name: str = "top") -> str:
    return f"<{name}>{inner}</{name}>"


def test_no_filter_selects_everything():
    assert run(None).startswith("<top><name>n1</name>")
    assert "<state><up>true</up></state>" in run(None)


def test_empty_filter_selects_nothing():
    assert run("") == ""


def test_selection_node_selects_whole_subtree():
    assert run(f'<top xmlns="{NS}"><sub/></top>') == T("<sub><a>x</a><deep><b>1</b></deep></sub>")


def test_top_level_selection():
    assert run(f'<state xmlns="{NS}"/>') == "<state><up>true</up></state>"


def test_namespace_must_match_when_given():
    assert run('<top xmlns="urn:other"><sub/></top>') == ""


def test_no_namespace_matches_any_namespace():
    assert run('<top xmlns=""><sub><a/></sub></top>') == T("<sub><a>x</a></sub>")


def test_content_match_on_key_selects_that_entry_only():
    got = run(f'<top xmlns="{NS}"><pl><name>B</name></pl></top>')
    assert got == T("<pl><name>B</name><entry><seq>5</seq><action>deny</action>"
                    "<prefix>203.0.113.0/24</prefix></entry></pl>")


def test_content_match_plus_selection_returns_match_and_selected():
    got = run(f'<top xmlns="{NS}"><pl><name>A</name><entry><seq>10</seq><action/></entry></pl></top>')
    assert got == T("<pl><name>A</name><entry><seq>10</seq><action>deny</action></entry></pl>")


def test_failed_content_match_excludes_parent():
    assert run(f'<top xmlns="{NS}"><pl><name>NOPE</name></pl></top>') == ""
    # a content match failing under one entry drops that entry, not its siblings
    got = run(f'<top xmlns="{NS}"><pl><entry><action>deny</action><seq/></entry></pl></top>')
    assert got == T("<pl><entry><seq>10</seq><action>deny</action></entry></pl>"
                    "<pl><entry><seq>5</seq><action>deny</action></entry></pl>")


def test_all_sibling_content_matches_must_hold():
    f = f'<top xmlns="{NS}"><pl><name>A</name><entry><seq>5</seq><action>deny</action></entry></pl></top>'
    # A/5 is permit: the entry is not selected; the list instance (its key matched) is
    assert run(f) == T("<pl><name>A</name></pl>")
    f2 = f'<top xmlns="{NS}"><pl><name>A</name><entry><seq>5</seq><action>permit</action></entry></pl></top>'
    assert run(f2) == T("<pl><name>A</name><entry><seq>5</seq><action>permit</action>"
                        "<prefix>192.0.2.0/24</prefix></entry></pl>")


def test_two_sibling_filters_select_the_union():
    f = f'<top xmlns="{NS}"><pl><name>A</name><entry><seq>5</seq></entry></pl><pl><name>B</name></pl></top>'
    got = run(f)
    assert got.count("<pl>") == 2
    assert "<seq>10</seq>" not in got and "203.0.113.0/24" in got


def test_leaf_list_content_match_selects_matching_values():
    assert run(f'<top xmlns="{NS}"><tag>b</tag><name/></top>') == T("<name>n1</name><tag>b</tag>")


def test_containment_with_nothing_selected_is_omitted():
    assert run(f'<top xmlns="{NS}"><sub><deep><nope/></deep></sub></top>') == ""


def test_attribute_match_never_matches_attribute_free_data():
    assert run(f'<top xmlns="{NS}"><sub xmlns:x="urn:x" x:kind="v"/></top>') == ""


def test_keys_callback_adds_keys_of_partly_selected_entries():
    keys = lambda e: [f"{{{NS}}}name"] if etree.QName(e).localname == "pl" else []  # noqa: E731
    got = run(f'<top xmlns="{NS}"><pl><entry><seq>10</seq><prefix/></entry></pl></top>', keys)
    assert got == T("<pl><name>A</name><entry><seq>10</seq><prefix>198.51.100.0/24</prefix></entry></pl>")


def test_input_not_modified():
    data = etree.fromstring(DATA)
    before = etree.tostring(data)
    subtree.apply(data, etree.fromstring(f'<filter xmlns="{BASE_NS}"><top xmlns="{NS}"><sub/></top></filter>'))
    assert etree.tostring(data) == before
