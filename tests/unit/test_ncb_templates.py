"""NetConfArena-style templates (ani.netconfbench.templates): each generator and constraint,
the dependency-order resolution and its unresolved-dependency error, interface names the lab
can create, rendering, determinism (same template + seed -> the same bytes, also in another
process, and the shipped instances are their templates' renderings), errors naming the file and
the field, and ``ani tasks instantiate``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ani.errors import TaskFormatError, TemplateError
from ani.lab.topology import IFNAME_RE
from ani.netconfbench.cli import app
from ani.netconfbench.task import dump_task, load_task
from ani.netconfbench.templates import (
    MEDIA,
    instantiate,
    instantiate_data,
    load_template,
    render,
    resolve,
    template_from_data,
)

ROOT = Path(__file__).parents[2]
TEMPLATES = ROOT / "intents" / "netconfbench" / "templates"
SHIPPED = sorted(TEMPLATES.glob("*.yaml"))
SEEDS = range(40)


def tpl(parameters: dict[str, Any], body: dict[str, Any] | None = None, **meta: Any):
    data: dict[str, Any] = {"parameters": parameters, **(body or {})}
    if meta:
        data["template"] = meta
    return template_from_data(data, source="t.yaml")


def task_body(**extra: Any) -> dict[str, Any]:
    """A minimal valid task with fields: two routers {a}, {b} on one link."""
    body = {
        "task_name": "t {a}",
        "intents": ["{a}: do it"],
        "topology": {"nodes": ["{a}", "{b}"], "links": ["{a} {a_if} <-> {b} eth0"]},
        "startup_configs": {"{a}": "hostname {a}\n", "{b}": "hostname {b}\n"},
        "testcases": [{"device": "{a}", "commands": ["show ip route"], "expected_output": "x"}],
    }
    body.update(extra)
    return body


NODES = {
    "a": {"type": "choice", "values": ["r1", "r2", "r3"]},
    "b": {"type": "choice", "values": ["r1", "r2", "r3"], "different_from": ["a"]},
    "a_if": {"type": "interface", "node": "{a}"},
}


# -- generators ------------------------------------------------------------------------------


def test_choice_draws_every_value_and_only_those():
    t = tpl({"x": {"type": "choice", "values": ["p", "q", 7]}})
    seen = {resolve(t, s)["x"] for s in SEEDS}
    assert seen == {"p", "q", 7}


def test_random_subnet_within_the_pool_at_the_length():
    t = tpl({"plen": {"type": "choice", "values": [26, 28]},
             "net": {"type": "random_subnet", "pool": "10.8.0.0/22", "prefix": "{plen}"}})
    pool = IPv4Network("10.8.0.0/22")
    lengths, nets = set(), set()
    for s in SEEDS:
        v = resolve(t, s)
        assert isinstance(v["net"], IPv4Network) and v["net"].subnet_of(pool)
        assert v["net"].prefixlen == v["plen"]
        lengths.add(v["net"].prefixlen)
        nets.add(v["net"])
    assert lengths == {26, 28} and len(nets) > 10


def test_random_subnet_errors_name_the_option():
    with pytest.raises(TemplateError, match=r"t\.yaml: parameters\.n\.prefix: /20 does not fit in the pool 10\.0\.0\.0/24"):
        resolve(tpl({"n": {"type": "random_subnet", "pool": "10.0.0.0/24", "prefix": 20}}), 1)
    with pytest.raises(TemplateError, match=r"parameters\.n\.pool: not an IPv4 network"):
        resolve(tpl({"n": {"type": "random_subnet", "pool": "10.0.0.1/24", "prefix": 28}}), 1)
    with pytest.raises(TemplateError, match=r"parameters\.n\.prefix: not a prefix length: 'x'"):
        resolve(tpl({"p": {"type": "choice", "values": ["x"]},
                     "n": {"type": "random_subnet", "pool": "10.0.0.0/24", "prefix": "{p}"}}), 1)


def test_subnet_attr_every_attribute():
    t = tpl({
        "net": {"type": "random_subnet", "pool": "192.0.2.0/24", "prefix": 29},
        "network": {"type": "subnet_attr", "of": "net", "attr": "network"},
        "prefix": {"type": "subnet_attr", "of": "net", "attr": "prefix"},
        "netmask": {"type": "subnet_attr", "of": "net", "attr": "netmask"},
        "bcast": {"type": "subnet_attr", "of": "net", "attr": "broadcast"},
        "first": {"type": "subnet_attr", "of": "net", "attr": "host", "n": 1},
        "last": {"type": "subnet_attr", "of": "net", "attr": "host", "n": -1},
        "iface": {"type": "subnet_attr", "of": "net", "attr": "interface", "n": 2},
    })
    for s in range(5):
        v = resolve(t, s)
        net = v["net"]
        assert v["network"] == net.network_address and isinstance(v["network"], IPv4Address)
        assert v["prefix"] == 29
        assert v["netmask"] == IPv4Address("255.255.255.248")
        assert v["bcast"] == net.broadcast_address
        assert v["first"] == net.network_address + 1
        assert v["last"] == net.broadcast_address - 1
        assert v["iface"] == IPv4Interface(f"{net.network_address + 2}/29")


def test_subnet_attr_host_out_of_range_and_missing_index():
    t = tpl({"net": {"type": "random_subnet", "pool": "192.0.2.0/24", "prefix": 30},
             "h": {"type": "subnet_attr", "of": "net", "attr": "host", "n": 3}})
    with pytest.raises(TemplateError, match=r"parameters\.h\.n: 192\.0\.2\.\d+/30 has 2 host address\(es\), no host 3"):
        resolve(t, 1)
    with pytest.raises(TemplateError, match=r"parameters\.h\.n: required for attr 'host'"):
        tpl({"net": {"type": "random_subnet", "pool": "192.0.2.0/24", "prefix": 30},
             "h": {"type": "subnet_attr", "of": "net", "attr": "host"}})
    with pytest.raises(TemplateError, match=r"parameters\.h\.of: c is not a subnet \('x'\)"):
        resolve(tpl({"c": {"type": "choice", "values": ["x"]},
                     "h": {"type": "subnet_attr", "of": "c", "attr": "network"}}), 1)


def test_format_fills_fields_and_the_seed():
    t = tpl({"asn": {"type": "choice", "values": [65001]},
             "name": {"type": "format", "format": "PL-AS{asn}-{seed}"}})
    assert resolve(t, 9)["name"] == "PL-AS65001-9"


def test_interface_names_the_lab_can_create_unique_per_node():
    params = {
        "n": {"type": "choice", "values": ["r1"]},
        "m": {"type": "choice", "values": list(MEDIA)},
        **{f"i{k}": {"type": "interface", "node": "{n}", "media": "{m}", "max_index": 3} for k in range(4)},
    }
    t = tpl(params)
    media_seen = set()
    for s in SEEDS:
        v = resolve(t, s)
        names = [v[f"i{k}"] for k in range(4)]
        assert len(set(names)) == 4  # four interfaces of one node: four names
        prefix = MEDIA[v["m"]].split("{")[0]
        assert all(IFNAME_RE.match(x) and x.startswith(prefix) for x in names)
        media_seen.add(v["m"])
    assert media_seen == set(MEDIA)
    # a fifth on the same node with only four names: no name left
    params["i4"] = {"type": "interface", "node": "{n}", "media": "{m}", "max_index": 3}
    with pytest.raises(TemplateError, match=r"parameters\.i4: no interface name left on r1"):
        resolve(tpl(params), 1)


def test_interface_avoids_literal_names_of_the_links():
    body = {"topology": {"nodes": ["r1", "r2"],
                         "links": ["r1 eth0 <-> r2 eth0", "r1 eth1 <-> r2 eth1", "r1 {x} <-> r2 eth2"]}}
    t = tpl({"x": {"type": "interface", "node": "r1", "max_index": 2}}, body)
    assert {resolve(t, s)["x"] for s in SEEDS} == {"eth2"}


def test_interface_candidate_names_filtered_by_what_the_lab_can_create():
    t = tpl({"x": {"type": "interface", "node": "r1", "names": ["Gi0/0", "lo", "Gi0-0", "a-name-far-too-long"]}})
    assert {resolve(t, s)["x"] for s in SEEDS} == {"Gi0-0"}
    with pytest.raises(TemplateError, match=r"parameters\.x\.names: the lab cannot create any of Gi0/0, lo "
                                            r"\(a Linux interface name: .*not 'lo'\)"):
        resolve(tpl({"x": {"type": "interface", "node": "r1", "names": ["Gi0/0", "lo"]}}), 1)
    with pytest.raises(TemplateError, match=r"parameters\.x\.media: unknown link medium 'ethernt'; did you mean 'ethernet'"):
        resolve(tpl({"x": {"type": "interface", "node": "r1", "media": "ethernt"}}), 1)


# -- constraints -----------------------------------------------------------------------------


def test_different_from_holds_for_every_seed():
    t = tpl({"a": {"type": "choice", "values": [1, 2]},
             "b": {"type": "choice", "values": [1, 2], "different_from": ["a"]}})
    pairs = {(v["a"], v["b"]) for v in (resolve(t, s) for s in SEEDS)}
    assert pairs == {(1, 2), (2, 1)}


def test_different_from_that_cannot_hold_names_the_constraint_and_the_bound():
    t = tpl({"a": {"type": "choice", "values": ["x"]},
             "b": {"type": "choice", "values": ["x"], "different_from": ["a"]}}, max_draws=7)
    with pytest.raises(TemplateError, match=r"^t\.yaml: parameters\.b: constraint different_from a \(a = x\) "
                                            r"not met after 7 draws \(seed 3\)$"):
        resolve(t, 3)
    # a generator that draws nothing is not drawn again
    t = tpl({"a": {"type": "choice", "values": ["x"]},
             "b": {"type": "format", "format": "{a}", "different_from": ["a"]}})
    with pytest.raises(TemplateError, match=r"parameters\.b: constraint different_from a .* not met \(format draws one value\)"):
        resolve(t, 1)


def test_no_overlap_with_parameters_and_literal_subnets():
    t = tpl({"a": {"type": "random_subnet", "pool": "10.0.0.0/26", "prefix": 27},
             "b": {"type": "random_subnet", "pool": "10.0.0.0/26", "prefix": 27, "no_overlap": ["a"]},
             "c": {"type": "random_subnet", "pool": "10.0.1.0/26", "prefix": 27, "no_overlap": ["10.0.1.32/29"]}})
    seen = set()
    for s in SEEDS:
        v = resolve(t, s)
        assert not v["b"].overlaps(v["a"])  # the /26 holds two /27s: b is always the other one
        assert {v["a"], v["b"]} == {IPv4Network("10.0.0.0/27"), IPv4Network("10.0.0.32/27")}
        assert v["c"] == IPv4Network("10.0.1.0/27")  # the only /27 clear of 10.0.1.32/29
        seen.add(v["a"])
    assert len(seen) == 2
    # no room: the constraint is named after the bound
    t = tpl({"a": {"type": "random_subnet", "pool": "10.0.0.0/24", "prefix": 24},
             "b": {"type": "random_subnet", "pool": "10.0.0.0/24", "prefix": 25, "no_overlap": ["a"]}})
    with pytest.raises(TemplateError, match=r"parameters\.b: constraint no_overlap a \(10\.0\.0\.\d+/25 overlaps "
                                            r"10\.0\.0\.0/24\) not met after 100 draws"):
        resolve(t, 1)


def test_no_overlap_is_for_subnets():
    t = tpl({"a": {"type": "random_subnet", "pool": "10.0.0.0/24", "prefix": 25},
             "c": {"type": "choice", "values": ["r1"], "no_overlap": ["a"]}})
    with pytest.raises(TemplateError, match=r"parameters\.c\.no_overlap: only for subnets, c is 'r1'"):
        resolve(t, 1)
    t = tpl({"c": {"type": "choice", "values": ["r1"]},
             "a": {"type": "random_subnet", "pool": "10.0.0.0/24", "prefix": 25, "no_overlap": ["c"]}})
    with pytest.raises(TemplateError, match=r"parameters\.a\.no_overlap: 'c' is not a subnet or an address \('r1'\)"):
        resolve(t, 1)


# -- Algorithm 1 -----------------------------------------------------------------------------


def test_parameters_resolve_in_dependency_order_whatever_the_file_order():
    t = tpl({
        "addr": {"type": "subnet_attr", "of": "net", "attr": "host", "n": 1},
        "label": {"type": "format", "format": "{addr} in {net}"},
        "net": {"type": "random_subnet", "pool": "{pool}", "prefix": 30},
        "pool": {"type": "choice", "values": ["192.0.2.0/24"]},
    })
    v = resolve(t, 4)
    assert list(v) == ["addr", "label", "net", "pool"]  # file order kept
    assert v["label"] == f"{v['addr']} in {v['net']}"
    assert t.dependencies == {"addr": ["net"], "label": ["addr", "net"], "net": ["pool"], "pool": []}


def test_unresolved_dependency_names_the_parameters():
    t = tpl({
        "ok": {"type": "choice", "values": [1]},
        "a": {"type": "format", "format": "{b}-{ok}"},
        "b": {"type": "subnet_attr", "of": "c", "attr": "network"},
        "c": {"type": "random_subnet", "pool": "10.0.0.0/8", "prefix": 24, "no_overlap": ["a"]},
        "d": {"type": "format", "format": "{a}"},
    })
    with pytest.raises(TemplateError) as err:
        resolve(t, 1)
    assert str(err.value) == (
        "t.yaml: parameters: unresolved dependency: a, b, c, d "
        "(a waits for b; b waits for c; c waits for a; d waits for a)"
    )
    assert isinstance(err.value, TaskFormatError)


def test_references_to_undeclared_parameters_name_the_field():
    with pytest.raises(TemplateError, match=r"^t\.yaml: parameters\.a\.of: unknown parameter 'nte'; did you mean 'net'\?"):
        tpl({"net": {"type": "random_subnet", "pool": "10.0.0.0/8", "prefix": 24},
             "a": {"type": "subnet_attr", "of": "nte", "attr": "network"}})
    with pytest.raises(TemplateError, match=r"^t\.yaml: testcases\[0\]\.expected_output: unknown parameter 'zz'; known: a, b, a_if, seed$"):
        tpl(NODES, task_body(testcases=[{"device": "{a}", "commands": ["show x"], "expected_output": "{zz}"}]))
    with pytest.raises(TemplateError, match=r"parameters\.a\.different_from: parameter 'a' refers to itself"):
        tpl({"a": {"type": "choice", "values": [1], "different_from": ["a"]}})
    with pytest.raises(TemplateError, match=r"parameters\.seed: not a usable parameter name"):
        tpl({"seed": {"type": "choice", "values": [1]}})


# -- rendering -------------------------------------------------------------------------------


def test_rendering_keys_types_and_braces():
    t = tpl({**NODES, "ad": {"type": "choice", "values": [150]}},
            task_body(testcases=[
                {"device": "{a}", "commands": ["show ip route"], "expected_output": r"^\d{1,3} {{a}} {a} x{2}"},
                {"name": "r {ad}", "expected_result": {"device": "{a}", "prefix": "10.0.0.0/8", "distance": "{ad}"}},
            ]))
    d = instantiate_data(t, 2)
    a, b = d["template_instance"]["parameters"]["a"], d["template_instance"]["parameters"]["b"]
    assert list(d["startup_configs"]) == [a, b]
    assert d["testcases"][0]["expected_output"] == rf"^\d{{1,3}} {{a}} {a} x{{2}}"
    assert d["testcases"][1]["expected_result"]["distance"] == 150  # a whole field keeps the type
    assert d["testcases"][1]["name"] == "r 150"
    assert d["template_instance"]["template"] == "t.yaml" and d["template_instance"]["seed"] == 2


def test_a_rendered_key_twice_is_refused():
    t = tpl({"a": {"type": "choice", "values": ["r1"]}, "b": {"type": "choice", "values": ["r1"]},
             "a_if": {"type": "interface", "node": "{a}"}}, task_body())
    with pytest.raises(TemplateError, match=r'^t\.yaml: startup_configs\["\{b\}"\]: renders to the key \'r1\' a sibling already has'):
        instantiate_data(t, 1)


def test_a_rendered_task_that_is_invalid_names_the_seed_and_the_path():
    t = tpl(NODES, task_body(testcases=[{"device": "{a}", "commands": ["show ip route"], "expected_output": "("}]))
    with pytest.raises(TemplateError, match=r"^t\.yaml \(seed 5\): testcases\[0\]\.expected_output: not a valid regular expression"):
        instantiate(t, 5)


def test_instantiate_gives_a_task_with_its_origin():
    task = instantiate(tpl(NODES, task_body()), 3)
    assert task.task_name.startswith("t r")
    assert task.model_extra["template_instance"]["seed"] == 3
    assert task.topology.parsed_links()[0].a_if.startswith("eth")


def test_bad_seeds_are_refused():
    t = tpl(NODES)
    for bad in (-1, True, "1"):
        with pytest.raises(TemplateError, match=r"t\.yaml: seed: a non-negative integer"):
            resolve(t, bad)  # type: ignore[arg-type]


# -- files -----------------------------------------------------------------------------------


def test_file_errors_name_the_file_and_the_field(tmp_path):
    bad_json = tmp_path / "x.json"
    bad_json.write_text('{"parameters": {}\n,,}')
    with pytest.raises(TemplateError, match=rf"^{bad_json}: not valid JSON: line 2, column 2"):
        load_template(bad_json)
    bad_json.write_text('{"parameters": {}, "parameters": {}}')
    with pytest.raises(TemplateError, match=rf"^{bad_json}: not valid JSON: key 'parameters' is written twice"):
        load_template(bad_json)
    bad_yaml = tmp_path / "x.yaml"
    bad_yaml.write_text("parameters: {}\nparameters: {}\n")
    with pytest.raises(TemplateError, match=rf"^{bad_yaml}: not valid YAML: key 'parameters' is written twice"):
        load_template(bad_yaml)
    bad_yaml.write_text("parameters: [\n")
    with pytest.raises(TemplateError, match=rf"^{bad_yaml}: not valid YAML: line 2"):
        load_template(bad_yaml)
    bad_yaml.write_text("task_name: x\n")
    with pytest.raises(TemplateError, match=r"x\.yaml: parameters: required \(a template declares the fields that vary\)$"):
        load_template(bad_yaml)
    bad_yaml.write_text("parameters:\n  a: {type: dice, values: [1]}\n")
    with pytest.raises(TemplateError, match=r"x\.yaml: parameters\.a\.type: \"dice\" is not one of: choice, random_subnet, subnet_attr, format, interface$"):
        load_template(bad_yaml)
    bad_yaml.write_text("parameters:\n  a: {type: choice, values: []}\n")
    with pytest.raises(TemplateError, match=r"x\.yaml: parameters\.a\.values: must not be empty$"):
        load_template(bad_yaml)
    bad_yaml.write_text("template: {seeds: [1], colour: red}\nparameters: {}\n")
    with pytest.raises(TemplateError, match=r"x\.yaml: template\.colour: not a key of template: \(its keys: name, description, seeds, max_draws\)$"):
        load_template(bad_yaml)
    bad_yaml.write_text("parameters: {}\ntemplate_instance: {seed: 1}\n")
    with pytest.raises(TemplateError, match=r"x\.yaml: template_instance: written by instantiate"):
        load_template(bad_yaml)
    with pytest.raises(TemplateError, match=r"nope\.yaml: cannot read"):
        load_template(tmp_path / "nope.yaml")


@pytest.mark.parametrize(("text", "message"), [
    ("parameters:\n  a: {values: [1, 2]}\n",
     "parameters.a.type: required (one of: choice, random_subnet, subnet_attr, format, interface)"),
    ("parameters:\n  a: choice\n", "parameters.a: must be an object"),
    ("parameters:\n  a: {type: random_subnet, pool: 10.0.0.0/8, prefix: 24, colour: red}\n",
     "parameters.a.colour: not an option of a random_subnet parameter (its options: different_from, no_overlap, "
     "pool, prefix)"),
    ("parameters:\n  a: {type: random_subnet, pool: 5, prefix: 24}\n", "parameters.a.pool: must be a string"),
    ("parameters:\n  a: {type: interface, node: r1, max_index: 100}\n",
     "parameters.a.max_index: must be at most 99 (got 100)"),
    ("template: {seeds: 3}\nparameters: {}\n", "template.seeds: must be an array"),
    ("template: {max_draws: 0}\nparameters: {}\n", "template.max_draws: must be at least 1 (got 0)"),
    ("parameters: [a, b]\n", "parameters: must be an object"),
])
def test_template_errors_are_in_plain_words(tmp_path, text, message):
    """New-user check: a parameter of unknown type, a misspelt option, ... read
    ``<file>: <json.path>: <plain message>``, never pydantic's words."""
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(TemplateError) as exc:
        load_template(path)
    assert str(exc.value) == f"{path}: {message}"


def test_a_task_file_given_as_a_template_is_named_so(tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps({**task_body()}))
    with pytest.raises(TemplateError, match=r"parameters: required .*this looks like a task file, not a template"):
        load_template(path)


def test_json_and_yaml_templates_give_the_same_task(tmp_path):
    data = {"template": {"name": "same"}, "parameters": NODES, **task_body()}
    (tmp_path / "a.json").write_text(json.dumps(data))
    import yaml

    (tmp_path / "a.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    j, y = instantiate_data(load_template(tmp_path / "a.json"), 4), instantiate_data(load_template(tmp_path / "a.yaml"), 4)
    j.pop("template_instance")
    y.pop("template_instance")
    assert j == y


# -- determinism and the shipped templates ---------------------------------------------------


def test_three_shipped_templates_with_five_seeds_each():
    assert [p.stem for p in SHIPPED] == ["bgp-prefix-filter", "ospf-p2p-area", "static-backup"]
    for p in SHIPPED:
        assert load_template(p).seeds == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_same_template_and_seed_same_bytes_other_seed_other_task(path):
    t = load_template(path)
    texts = [render(t, s) for s in t.seeds]
    assert texts == [render(load_template(path), s) for s in t.seeds]
    assert len(set(texts)) == len(texts)
    # the parameters vary: not one of them has the same value for every seed (but the fixed ones)
    values = [instantiate_data(t, s)["template_instance"]["parameters"] for s in range(20)]
    varying = {n for n in values[0] if len({json.dumps(v[n]) for v in values}) > 1}
    assert varying == set(values[0])


def test_same_bytes_in_another_process_with_another_hash_seed():
    code = ("import sys; from ani.netconfbench.templates import render; "
            "sys.stdout.write(''.join(render(p, 2) for p in sys.argv[1:]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code, *map(str, SHIPPED)], capture_output=True, text=True,
                         env=env, check=True, timeout=120).stdout
    assert out == "".join(render(p, 2) for p in SHIPPED)


def test_shipped_instances_are_their_templates_rendered():
    instances = sorted((TEMPLATES / "instances").glob("*.json"))
    assert len(instances) == 15
    for path in instances:
        origin = load_task(path).model_extra["template_instance"]
        assert path.name == f"{path.stem.rsplit('-seed', 1)[0]}-seed{origin['seed']}.json"
        assert render(TEMPLATES / origin["template"], origin["seed"]) == path.read_text(encoding="utf-8"), path.name
        assert dump_task(load_task(path)) == path.read_text(encoding="utf-8")  # the importer takes it unchanged


def test_shipped_instances_use_lab_names_only():
    """Templates draw node and interface names the lab can use as they are (no name map)."""
    from ani.lab.topology import NODE_NAME_RE

    for path in sorted((TEMPLATES / "instances").glob("*.json")):
        task = load_task(path)
        assert all(NODE_NAME_RE.match(n) for n in task.topology.nodes)
        for link in task.topology.parsed_links():
            assert IFNAME_RE.match(link.a_if) and IFNAME_RE.match(link.b_if)


# -- ani tasks instantiate -------------------------------------------------------------------

runner = CliRunner()
STATIC = TEMPLATES / "static-backup.yaml"


def test_cli_one_seed_to_stdout_and_to_a_file(tmp_path):
    res = runner.invoke(app, ["instantiate", str(STATIC), "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert res.stdout == render(STATIC, 3)
    out = tmp_path / "x.json"
    res = runner.invoke(app, ["instantiate", str(STATIC), "--seed", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text() == render(STATIC, 3)


def test_cli_declared_seeds_into_a_directory_and_no_silent_overwrite(tmp_path):
    res = runner.invoke(app, ["instantiate", str(STATIC), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"static-backup-seed{s}.json" for s in range(1, 6)]
    again = runner.invoke(app, ["instantiate", str(STATIC), "--out", str(tmp_path)])
    assert again.exit_code == 0, again.output  # the same bytes: nothing differs
    (tmp_path / "static-backup-seed2.json").write_text("{}")
    res = runner.invoke(app, ["instantiate", str(STATIC), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "static-backup-seed2.json: exists and differs (--force overwrites it)" in res.output
    assert (tmp_path / "static-backup-seed2.json").read_text() == "{}"
    assert runner.invoke(app, ["instantiate", str(STATIC), "--out", str(tmp_path), "--force"]).exit_code == 0
    assert (tmp_path / "static-backup-seed2.json").read_text() == render(STATIC, 2)


def test_cli_errors(tmp_path):
    res = runner.invoke(app, ["instantiate", str(STATIC)])
    assert res.exit_code == 2 and "5 seeds (1, 2, 3, 4, 5): --out DIR is needed" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("parameters:\n  a: {type: format, format: '{b}'}\n  b: {type: format, format: '{a}'}\n")
    res = runner.invoke(app, ["instantiate", str(bad), "--seed", "1"])
    assert res.exit_code == 2 and "unresolved dependency: a, b (a waits for b; b waits for a)" in res.output


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "x..y", "/abs", "a\\b", ".hidden", "-rf"])
def test_a_template_name_that_is_not_one_file_name_is_refused_and_nothing_is_written(tmp_path, name):
    """issue 23 §1: ``template.name: ../escape`` wrote ``../escape-seed1.json`` outside ``--out``.
    The name is data: one file-name component, else exit 2 naming the field, never writing."""
    import yaml

    work = tmp_path / "work"
    work.mkdir()
    (work / "t.yaml").write_text(yaml.safe_dump({"template": {"name": name}, "parameters": NODES, **task_body()}))
    res = CliRunner().invoke(app, ["instantiate", str(work / "t.yaml"), "--seed", "1", "--seed", "2",
                                   "--out", str(work / "out")])
    assert res.exit_code == 2, res.output
    assert "t.yaml: template.name: not a file name" in res.output
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["t.yaml", "work"]


def test_a_file_stem_that_is_a_file_name_names_the_instances(tmp_path):
    (tmp_path / "my.tpl-1.yaml").write_text(json.dumps({"parameters": NODES, **task_body()}))
    res = CliRunner().invoke(app, ["instantiate", str(tmp_path / "my.tpl-1.yaml"), "--seed", "1", "--seed", "2",
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["my.tpl-1-seed1.json", "my.tpl-1-seed2.json"]
