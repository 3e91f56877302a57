"""edit-config engine (ani.netconf.editconfig) on the small test module tests/data/yang/ec-test.yang.

Each test states the datastore before, the request, and the exact datastore after (compared as
canonical XML), so a wrong merge / replace / existence decision shows as a different tree.
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
    """A <data> datastore whose <top> holds ``inner``."""
    return etree.fromstring(f'<data xmlns="{BASE_NS}"><top xmlns="{EC}">{inner}</top></data>')


def config(inner: str, top_attrs: str = "") -> etree._Element:
    return etree.fromstring(
        f'<config xmlns="{BASE_NS}" xmlns:nc="{BASE_NS}"><top xmlns="{EC}" {top_attrs}>{inner}</top></config>')


def same(a: etree._Element, b: etree._Element) -> bool:
    strip = lambda e: etree.fromstring(etree.tostring(e), etree.XMLParser(remove_blank_text=True))  # noqa: E731
    return etree.tostring(strip(a), method="c14n") == etree.tostring(strip(b), method="c14n")


PL_A5 = "<pl><name>A</name><entry><seq>5</seq><action>permit</action><prefix>192.0.2.0/24</prefix></entry></pl>"
PL_A5_10_15 = ("<pl><name>A</name>"
               "<entry><seq>5</seq><action>permit</action><prefix>192.0.2.0/24</prefix></entry>"
               "<entry><seq>10</seq><action>deny</action><prefix>198.51.100.0/24</prefix></entry>"
               "<entry><seq>15</seq><action>permit</action><prefix>203.0.113.0/24</prefix></entry></pl>")


def test_schema_from_datamodel(schema):
    top = schema.root.child(f"{{{EC}}}top")
    assert top.kind == "container" and top.prefix == "ect"
    route = top.child(f"{{{EC}}}route")
    assert route.kind == "list" and route.keys == ("prefix", "next-hop")
    assert top.child(f"{{{EC}}}tag").kind == "leaf-list"
    state = schema.root.child(f"{{{EC}}}state")
    assert state.config is False
    # choice / case flattened into the parent, with the case recorded
    sub = top.child(f"{{{EC}}}sub")
    x, y = sub.child(f"{{{EC}}}x"), sub.child(f"{{{EC}}}y")
    assert x.cases[0][0] == y.cases[0][0] and x.cases[0][1] != y.cases[0][1]


# -- issue case 7: existence is decided on the datastore --------------------------------------


def test_delete_missing_entry_is_data_missing_and_changes_nothing(schema):
    before = data(PL_A5)
    req = config('<pl><name>A</name><entry nc:operation="delete"><seq>10</seq></entry></pl>')
    r = editconfig.edit(schema, before, req)
    assert [e.tag for e in r.errors] == ["data-missing"]
    assert r.errors[0].path == "/ect:top/ect:pl[ect:name='A']/ect:entry[ect:seq='10']"
    assert not r.changed and same(r.tree, data(PL_A5))


def test_remove_missing_entry_is_ok_and_changes_nothing(schema):
    r = editconfig.edit(schema, data(PL_A5), config(
        '<pl><name>A</name><entry nc:operation="remove"><seq>10</seq></entry></pl>'))
    assert r.errors == [] and not r.changed and same(r.tree, data(PL_A5))


def test_create_existing_entry_is_data_exists(schema):
    r = editconfig.edit(schema, data(PL_A5), config(
        '<pl><name>A</name><entry nc:operation="create"><seq>5</seq><action>deny</action></entry></pl>'))
    assert [e.tag for e in r.errors] == ["data-exists"]
    assert r.errors[0].info == {"bad-element": "entry"}
    assert same(r.tree, data(PL_A5))


def test_create_compares_canonical_key_values(schema):
    """seq '005' is the same entry as '5' (uint32 canonical form)."""
    r = editconfig.edit(schema, data(PL_A5), config(
        '<pl><name>A</name><entry nc:operation="create"><seq>005</seq><action>deny</action></entry></pl>'))
    assert [e.tag for e in r.errors] == ["data-exists"]


def test_nested_replace_under_none_with_missing_parent_is_data_missing(schema):
    r = editconfig.edit(schema, data(PL_A5), config(
        '<pl><name>B</name><entry nc:operation="replace"><seq>5</seq><action>permit</action></entry></pl>'),
        default_operation="none")
    assert [e.tag for e in r.errors] == ["data-missing"]
    assert r.errors[0].path == "/ect:top/ect:pl[ect:name='B']"
    assert same(r.tree, data(PL_A5))


def test_nested_replace_under_none_with_existing_parent_replaces_only_that_entry(schema):
    before = data(PL_A5_10_15)
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="replace"><seq>10</seq><action>permit</action></entry></pl>'),
        default_operation="none")
    assert r.errors == [] and r.changed
    want = PL_A5_10_15.replace(
        "<entry><seq>10</seq><action>deny</action><prefix>198.51.100.0/24</prefix></entry>",
        "<entry><seq>10</seq><action>permit</action></entry>")
    assert same(r.tree, data(want))


def test_delete_existing_entry(schema):
    r = editconfig.edit(schema, data(PL_A5_10_15), config(
        '<pl><name>A</name><entry nc:operation="delete"><seq>10</seq></entry></pl>'))
    assert r.errors == [] and r.changed
    want = PL_A5_10_15.replace(
        "<entry><seq>10</seq><action>deny</action><prefix>198.51.100.0/24</prefix></entry>", "")
    assert same(r.tree, data(want))


# -- issue case 8: replace of a list entry keeps only what is sent --------------------------


def test_replace_list_keeps_exactly_the_sent_entries(schema):
    r = editconfig.edit(schema, data(PL_A5_10_15), config(
        '<pl nc:operation="replace"><name>A</name>'
        '<entry><seq>5</seq><action>permit</action><prefix>192.0.2.0/24</prefix></entry></pl>'))
    assert r.errors == [] and r.changed
    assert same(r.tree, data(PL_A5))


def test_merge_adds_entry_and_keeps_others(schema):
    r = editconfig.edit(schema, data(PL_A5), config(
        '<pl><name>A</name><entry><seq>10</seq><action>deny</action></entry></pl>'))
    assert same(r.tree, data(PL_A5.replace(
        "</entry></pl>", "</entry><entry><seq>10</seq><action>deny</action></entry></pl>")))


def test_merge_same_values_is_no_change(schema):
    r = editconfig.edit(schema, data(PL_A5), config(PL_A5))
    assert r.errors == [] and not r.changed


def test_default_operation_replace_replaces_the_top_container(schema):
    r = editconfig.edit(schema, data(PL_A5 + "<name>n</name>"), config("<count>3</count>"),
                        default_operation="replace")
    assert same(r.tree, data("<count>3</count>"))


def test_two_key_list_entries_are_told_apart(schema):
    before = data("<route><prefix>192.0.2.0/24</prefix><next-hop>10.0.0.1</next-hop></route>")
    r = editconfig.edit(schema, before, config(
        "<route><prefix>192.0.2.0/24</prefix><next-hop>10.0.0.2</next-hop><distance>5</distance></route>"))
    assert len(r.tree.findall(f".//{{{EC}}}route")) == 2
    r2 = editconfig.edit(schema, r.tree, config(
        '<route nc:operation="delete"><prefix>192.0.2.0/24</prefix><next-hop>10.0.0.1</next-hop></route>'))
    assert same(r2.tree, data(
        "<route><prefix>192.0.2.0/24</prefix><next-hop>10.0.0.2</next-hop><distance>5</distance></route>"))


def test_leaf_list_merge_and_delete_by_value(schema):
    r = editconfig.edit(schema, data("<tag>a</tag>"), config("<tag>b</tag><tag>a</tag>"))
    assert same(r.tree, data("<tag>a</tag><tag>b</tag>"))
    r2 = editconfig.edit(schema, r.tree, config('<tag nc:operation="delete">a</tag>'))
    assert same(r2.tree, data("<tag>b</tag>"))
    r3 = editconfig.edit(schema, r2.tree, config('<tag nc:operation="delete">zz</tag>'))
    assert [e.tag for e in r3.errors] == ["data-missing"]


def test_new_nodes_go_keys_first_and_in_schema_order(schema):
    """A request listing a list entry's key last still stores it first (RFC 7950 §7.8.5)."""
    r = editconfig.edit(schema, data(""), config(
        "<sub><a>x</a></sub><pl><entry><action>deny</action><seq>7</seq></entry><name>Z</name></pl><name>n</name>"))
    top = r.tree[0]
    assert [etree.QName(c).localname for c in top] == ["name", "pl", "sub"]
    entry = top.find(f"{{{EC}}}pl/{{{EC}}}entry")
    assert [etree.QName(c).localname for c in entry] == ["seq", "action"]


def test_choice_case_replaces_other_case(schema):
    r = editconfig.edit(schema, data("<sub><y>1</y><z>2</z><a>k</a></sub>"), config("<sub><x>9</x></sub>"))
    assert same(r.tree, data("<sub><a>k</a><x>9</x></sub>"))


# -- issue case 6: the operation attribute counts only in the base namespace ------------------


@pytest.mark.parametrize("attr", ['operation="delete"', 'xmlns:o="urn:other" o:operation="delete"'])
def test_operation_attribute_outside_base_namespace_is_unknown_attribute(schema, attr):
    req = config(f"<pl {attr}><name>A</name></pl>")
    r = editconfig.edit(schema, data(PL_A5), req)
    assert [e.tag for e in r.errors] == ["unknown-attribute"]
    assert r.errors[0].info == {"bad-attribute": "operation", "bad-element": "pl"}
    assert not r.changed and same(r.tree, data(PL_A5))


def test_operation_attribute_in_base_namespace_deletes(schema):
    r = editconfig.edit(schema, data(PL_A5), config('<pl nc:operation="delete"><name>A</name></pl>'))
    assert r.errors == [] and same(r.tree, data(""))


def test_structural_error_changes_nothing_even_with_continue_on_error(schema):
    req = config('<name>new</name><pl operation="delete"><name>A</name></pl>')
    r = editconfig.edit(schema, data(PL_A5), req, error_option="continue-on-error")
    assert [e.tag for e in r.errors] == ["unknown-attribute"]
    assert same(r.tree, data(PL_A5))


def test_bad_operation_value_is_bad_attribute(schema):
    r = editconfig.edit(schema, data(""), config('<name nc:operation="erase">x</name>'))
    assert [e.tag for e in r.errors] == ["bad-attribute"]


# -- request checking ------------------------------------------------------------------------


def test_unknown_element_and_namespace(schema):
    r = editconfig.edit(schema, data(""), config("<nope>1</nope>"))
    assert [(e.tag, e.info) for e in r.errors] == [("unknown-element", {"bad-element": "nope"})]
    assert r.errors[0].path == "/ect:top/ect:nope"
    req = etree.fromstring(f'<config xmlns="{BASE_NS}"><top xmlns="urn:wrong"/></config>')
    r2 = editconfig.edit(schema, data(""), req)
    assert [(e.tag, e.info) for e in r2.errors] == [
        ("unknown-namespace", {"bad-element": "top", "bad-namespace": "urn:wrong"})]


def test_list_entry_without_key_is_missing_element(schema):
    r = editconfig.edit(schema, data(PL_A5), config(
        "<pl><name>A</name><entry><action>deny</action></entry></pl>"))
    assert [(e.tag, e.info) for e in r.errors] == [("missing-element", {"bad-element": "seq"})]
    assert r.errors[0].path == "/ect:top/ect:pl[ect:name='A']/ect:entry"


def test_value_not_of_type_is_invalid_value(schema):
    r = editconfig.edit(schema, data(""), config("<count>300</count>"))
    assert [(e.tag, e.path) for e in r.errors] == [("invalid-value", "/ect:top/ect:count")]


def test_config_false_node_is_not_editable(schema):
    req = etree.fromstring(f'<config xmlns="{BASE_NS}"><state xmlns="{EC}"><up>true</up></state></config>')
    r = editconfig.edit(schema, data(""), req)
    assert [e.tag for e in r.errors] == ["unknown-element"]


# -- error-option --------------------------------------------------------------------------


TWO_FAILS = ('<pl><name>A</name><entry nc:operation="delete"><seq>10</seq></entry></pl>'
             "<name>set</name>"
             '<pl><name>A</name><entry nc:operation="create"><seq>5</seq><action>deny</action></entry></pl>')


@pytest.mark.parametrize("option", ["stop-on-error", "rollback-on-error"])
def test_stop_and_rollback_on_error_change_nothing(schema, option):
    r = editconfig.edit(schema, data(PL_A5), config(TWO_FAILS), error_option=option)
    assert [e.tag for e in r.errors] == ["data-missing"]
    assert same(r.tree, data(PL_A5))


def test_continue_on_error_applies_the_rest_and_reports_every_error(schema):
    r = editconfig.edit(schema, data(PL_A5), config(TWO_FAILS), error_option="continue-on-error")
    assert [e.tag for e in r.errors] == ["data-missing", "data-exists"]
    assert r.changed and same(r.tree, data("<name>set</name>" + PL_A5))


def test_bad_options_raise_value_error(schema):
    with pytest.raises(ValueError):
        editconfig.edit(schema, data(""), config(""), default_operation="delete")
    with pytest.raises(ValueError):
        editconfig.edit(schema, data(""), config(""), error_option="ignore")


def test_input_datastore_is_never_modified(schema):
    before = data(PL_A5)
    text = etree.tostring(before)
    editconfig.edit(schema, before, config('<pl nc:operation="delete"><name>A</name></pl>'))
    assert etree.tostring(before) == text
