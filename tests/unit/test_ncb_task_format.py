"""The NetConfBench task file (ani.netconfbench.task): every error names the file and the JSON
path, nothing read is lost, and export then import gives the same task, byte for byte once in
the canonical form; over the fixtures and every shipped task (intents/netconfbench/*.json,
whatever is there when the test runs)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from ani.errors import ConfigError, TaskError, TaskFormatError
from ani.netconfbench.task import (
    NcbLink,
    NcbTask,
    NcbTopology,
    dump_task,
    load_task,
    load_tasks,
    parse_link,
    parse_task,
    task_files,
)
from ani.netconfbench.problems import json_path
from ani.netconfbench.testcases import SHAPE_TAGS, CommandTestcase, ResultTestcase

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "netconfbench"
FIXTURES = sorted(DATA.glob("*.json"))
SHIPPED = sorted((ROOT / "intents" / "netconfbench").glob("*.json"))


#: how expected_output is matched when a task does not say (ani.observer.match.NCB_DEFAULT), as exported
DEFAULT_MATCH = {"syntax": "regex", "find": "search", "flags": ["MULTILINE", "DOTALL"], "verbatim": True}


def base() -> dict:
    return json.loads((DATA / "static-backup.json").read_text())


def write(tmp_path: Path, data: object, name: str = "x.json") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


# -- errors: file and JSON path ----------------------------------------------------------------

def _set(path: list, value: object):
    def mut(d: dict) -> None:
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return mut


def _pop(path: list):
    def mut(d: dict) -> None:
        for k in path[:-1]:
            d = d[k]
        del d[path[-1]]
    return mut


def _append(path: list, value: object):
    def mut(d: dict) -> None:
        for k in path:
            d = d[k]
        d.append(copy.deepcopy(value))
    return mut


ERRORS = [
    (_pop(["intents"]), "intents: required"),
    (_set(["intents"], []), "intents: must not be empty"),
    (_set(["intents"], "do it"), "intents: must be an array"),
    (_pop(["topology"]), "topology: required"),
    (_pop(["testcases"]), "testcases: required"),
    (_set(["testcases"], []), "testcases: must not be empty"),
    (_pop(["task_name"]), "task_name: required"),
    (_set(["topology", "nodes"], []), "topology.nodes: must not be empty"),
    (_append(["topology", "nodes"], "r1"), "topology.nodes[2]: 'r1' is listed twice (also nodes[0])"),
    (_append(["topology", "nodes"], "New York"), "topology.nodes[2]: 'New York' is not a node name"),
    (_append(["topology", "links"], "r1 eth-c r2 eth-c"),
     "topology.links[2]: 'r1 eth-c r2 eth-c': not 'A IFACE <-> B IFACE'"),
    (_append(["topology", "links"], "r1 eth-c <-> r2"), "topology.links[2]: 'r1 eth-c <-> r2': the end 'r2' is not"),
    (_append(["topology", "links"], "r1 eth-c <-> r3 eth-c"), "topology.links[2]: 'r3' is not in topology.nodes (r1, r2)"),
    (_append(["topology", "links"], "r1 eth-a <-> r2 eth-c"), "topology.links[2]: r1 eth-a is also on links[0]"),
    (_set(["startup_configs", "r3"], "hostname r3"), "startup_configs.r3: 'r3' is not in topology.nodes (r1, r2)"),
    (_set(["startup_configs", "New York"], "x"), 'startup_configs["New York"]: \'New York\' is not in topology.nodes'),
    (_set(["startup_configs", "r1"], 5), "startup_configs.r1: must be a string"),
    (_pop(["ground_truth_configs", 0, "provenance"]), "ground_truth_configs[0].provenance: required"),
    (_pop(["ground_truth_configs", 0, "solution_id"]), "ground_truth_configs[0].solution_id: required"),
    (_set(["ground_truth_configs", 0, "configs", "r1"], "ip route x"), "ground_truth_configs[0].configs.r1: must be an array"),
    (_set(["ground_truth_configs", 0, "configs", "r9"], ["x"]), "ground_truth_configs[0].configs.r9: 'r9' is not in topology.nodes"),
    (_append(["ground_truth_configs"], base()["ground_truth_configs"][0]),
     "ground_truth_configs[1].solution_id: 'expert-0001' is also ground_truth_configs[0]"),
    (_set(["testcases", 2, "expected_output"], "a(b"),
     "testcases[2].expected_output: not a valid regular expression: missing ), unterminated subpattern at position 1"),
    (_set(["testcases", 2, "commands"], []), "testcases[2].commands: must not be empty"),
    (_set(["testcases", 2, "commands"], ["show x", "configure terminal"]),
     "testcases[2].commands[1]: 'configure terminal' is not a read-only command"),
    (_pop(["testcases", 2, "device"]), "testcases[2].device: required"),
    (_set(["testcases", 2, "device"], "r9"), "testcases[2].device: 'r9' is not in topology.nodes (r1, r2)"),
    (_set(["testcases", 2, "expected_ouput"], "x"), "testcases[2].expected_ouput: not a testcase key"),
    (_set(["testcases", 1, "expected_result", "colour"], "x"),
     "testcases[1].expected_result.colour: not an accepted key of expected_result (accepted: device, prefix, present, "
     "protocol, next_hop, distance, local_pref, community)"),
    (lambda d: (_pop(["testcases", 1, "expected_result", "prefix"])(d),
                _set(["testcases", 1, "expected_result", "next_hop"], "192.0.2.9")(d)),
     "testcases[1].expected_result: 'backup static route at distance 100': no prefix, and no solution line of "
     "ground_truth_configs is a static route via 192.0.2.9 on r1 at distance 100: give prefix"),
    (_set(["testcases", 1, "expected_result", "prefix"], "203.0.113.1/30"),
     "testcases[1].expected_result.prefix: not an IPv4 prefix A.B.C.D/L (or A.B.C.D M.M.M.M) without host bits"),
    (_set(["testcases", 1, "expected_result", "protocol"], "stat"),
     'testcases[1].expected_result.protocol: "stat" is not one of: kernel, connected, local, static, rip, ospf'),
    (_set(["testcases", 1, "expected_result", "next_hop"], "x"), "testcases[1].expected_result.next_hop: not an IPv4 address"),
    (_set(["testcases", 1, "expected_result", "distance"], 300),
     "testcases[1].expected_result.distance: must be at most 255 (got 300)"),
    (_set(["testcases", 1, "expected_result", "distance"], -1), "testcases[1].expected_result.distance: must be at least 0 (got -1)"),
    (_set(["testcases", 1, "expected_result", "distance"], "100"), "testcases[1].expected_result.distance: must be an integer"),
    (_set(["testcases", 1, "expected_result", "local_pref"], 1.5), "testcases[1].expected_result.local_pref: must be an integer"),
    (_set(["testcases", 1, "expected_result", "community"], "no-export"),
     "testcases[1].expected_result.community: 'no-export' is not a community AA:NN (two numbers, e.g. 65000:100)"),
    (_set(["testcases", 1, "expected_result"], "r1 has it"), "testcases[1].expected_result: must be an object"),
    # a string that must say something (new-user check: an empty task_name was accepted)
    (_set(["task_name"], ""), "task_name: must not be empty"),
    (_set(["task_name"], "  \t"), "task_name: must not be blank (whitespace only)"),
    (_set(["task_name"], 7), "task_name: must be a string"),
    (_set(["intents", 1], ""), "intents[1]: must not be empty"),
    (_set(["intents", 0], "   "), "intents[0]: must not be blank (whitespace only)"),
    (_set(["ground_truth_configs", 0, "solution_id"], ""), "ground_truth_configs[0].solution_id: must not be empty"),
    (_set(["ground_truth_configs", 0, "provenance"], " "), "ground_truth_configs[0].provenance: must not be blank"),
    (_set(["testcases", 1, "name"], ""), "testcases[1].name: must not be empty"),
    (_set(["testcases", 2, "name"], " "), "testcases[2].name: must not be blank (whitespace only)"),
    (_set(["testcases", 2, "expected_output"], ""),
     "testcases[2].expected_output: must not be empty: an empty regular expression matches any output"),
    (_set(["testcases", 1, "expected_result", "present"], "yes"), "testcases[1].expected_result.present: must be true or false"),
    (_set(["testcases", 1, "expected_result", "device"], "r9"),
     "testcases[1].expected_result.device: 'r9' is not in topology.nodes (r1, r2)"),
    (_pop(["testcases", 1, "name"]), "testcases[1].name: required"),
    (_append(["testcases"], "show ip route"), "testcases[3]: must be an object"),
    (_append(["testcases"], {"name": "primary static route selected", "device": "r1", "commands": ["show x"],
                             "expected_output": "x"}),
     "testcases[3].name: 'primary static route selected' is also the name of testcases[0]"),
]


@pytest.mark.parametrize(("mutate", "message"), ERRORS, ids=[m for _, m in ERRORS])
def test_every_error_names_the_file_and_the_json_path(tmp_path, mutate, message):
    data = base()
    mutate(data)
    path = write(tmp_path, data, "bad-task.json")
    with pytest.raises(TaskFormatError) as exc:
        load_task(path)
    assert str(exc.value).startswith(f"{path}: {message}"), str(exc.value)
    assert not PYDANTIC_WORDS.search(str(exc.value)), str(exc.value)


#: pydantic's own wording, which must never reach a user of a task or template file
PYDANTIC_WORDS = re.compile(r"Input should|Field required|Extra inputs|Value error|Unable to extract|"
                            r"does not match any of the expected tags|valid dictionary|String should")


def test_the_error_is_a_task_error_and_a_config_error():
    assert issubclass(TaskFormatError, TaskError) and issubclass(TaskFormatError, ConfigError)


def test_several_problems_are_all_named(tmp_path):
    data = base()
    data["topology"]["links"].append("r1 eth-a <-> r3 eth-x")
    data["testcases"][2]["expected_output"] = "("
    del data["intents"]
    msg = str(pytest.raises(TaskFormatError, load_task, write(tmp_path, data)).value)
    assert "intents: required" in msg and "testcases[2].expected_output: not a valid regular expression" in msg
    # the cross-field checks run once the fields themselves are valid
    data = base()
    data["startup_configs"]["r7"] = "x"
    data["testcases"][0]["device"] = "r8"
    msg = str(pytest.raises(TaskFormatError, load_task, write(tmp_path, data)).value)
    assert msg == (f"{tmp_path / 'x.json'}: startup_configs.r7: 'r7' is not in topology.nodes (r1, r2); "
                   "testcases[0].device: 'r8' is not in topology.nodes (r1, r2)")


@pytest.mark.parametrize(("text", "message"), [
    ('{"task_name": "x",\n  "intents": [}', "not valid JSON: line 2, column 15: Expecting value"),
    ('{"task_name": "x", "task_name": "y"}', "not valid JSON: key 'task_name' is written twice in one object"),
    ("[1, 2]", "a task must be a JSON object, got an array"),
    ('"x"', "a task must be a JSON object, got a string"),
    ("", "not valid JSON: line 1, column 1: Expecting value"),
])
def test_a_file_that_is_no_task_object(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(TaskFormatError) as exc:
        load_task(path)
    assert str(exc.value) == f"{path}: {message}"


def test_unreadable_files(tmp_path):
    with pytest.raises(TaskFormatError, match=r"nope\.json: cannot read: No such file"):
        load_task(tmp_path / "nope.json")
    p = tmp_path / "latin1.json"
    p.write_bytes(b'{"task_name": "\xe9"}')
    with pytest.raises(TaskFormatError, match="latin1.json: cannot read: not UTF-8 text"):
        load_task(p)


# -- the parts ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "link"), [
    ("NewYork S0/0 <-> Washington S0/0 ", NcbLink(a="NewYork", a_if="S0/0", b="Washington", b_if="S0/0")),
    ("  r1   eth0<->r2 eth1", NcbLink(a="r1", a_if="eth0", b="r2", b_if="eth1")),
    ("r1 GigabitEthernet 0/1 <-> r2 Gi0/1", NcbLink(a="r1", a_if="GigabitEthernet 0/1", b="r2", b_if="Gi0/1")),
    ("r1\teth0 <->\tr2   eth0", NcbLink(a="r1", a_if="eth0", b="r2", b_if="eth0")),
])
def test_links_parse_whitespace_tolerant(text, link):
    assert parse_link(text) == link
    assert str(link) == f"{link.a} {link.a_if} <-> {link.b} {link.b_if}"


@pytest.mark.parametrize("text", ["r1 eth0 <-> r2 eth0 <-> r3 eth0", "r1 eth0 - r2 eth0", "r1 <-> r2 eth0", " <-> "])
def test_a_link_that_does_not_parse(text):
    with pytest.raises(ValueError, match=r"not 'A IFACE <-> B IFACE'|is not 'NODE INTERFACE'"):
        parse_link(text)


def test_parsed_links_names_the_link_of_a_model_built_without_validation():
    topo = NcbTopology.model_construct(nodes=["a", "b"], links=["a x <-> b y", "a z <-> c y"])
    with pytest.raises(TaskFormatError, match=r"^topology\.links\[1\]: 'c' is not in topology\.nodes \(a, b\)$"):
        topo.parsed_links()
    ok = NcbTopology(nodes=["a", "b"], links=["a x <-> b y"])
    assert ok.parsed_links() == [NcbLink(a="a", a_if="x", b="b", b_if="y")]


def test_json_paths():
    assert json_path(("testcases", 2, "expected_output")) == "testcases[2].expected_output"
    assert json_path(("startup_configs", "New York")) == 'startup_configs["New York"]'
    assert json_path(("testcases", 0, "command-shape", "device"), SHAPE_TAGS) == "testcases[0].device"
    assert json_path(("ground_truth_configs", 1, "configs", "r-1")) == "ground_truth_configs[1].configs.r-1"


def test_both_testcase_shapes_are_read_and_kept_as_written():
    task = load_task(DATA / "static-backup.json")
    assert [type(t) for t in task.testcases] == [CommandTestcase, ResultTestcase, CommandTestcase]
    raw = json.loads((DATA / "static-backup.json").read_text())["testcases"]
    assert [t.raw for t in task.testcases] == raw
    assert list(task.testcases[1].raw["expected_result"]) == ["device", "prefix", "protocol", "next_hop", "distance"]
    assert str(task.testcases[1].expected_result.prefix) == "203.0.113.0/30"  # the IOS mask form, normalised
    assert task.testcases[1].raw["expected_result"]["prefix"] == "203.0.113.0 255.255.255.252"  # ... but kept


def test_unknown_keys_are_kept_in_order_at_every_level(tmp_path):
    data = base()
    data["topology"]["layout"] = {"r1": [0, 0]}
    data["ground_truth_configs"][0]["run_id"] = "abc"
    data["ground_truth_configs"][0]["level"] = "a1"
    data["zz_source"] = "elsewhere"
    task = load_task(write(tmp_path, data))
    assert task.model_extra == {"difficulty": "easy", "zz_source": "elsewhere"}
    assert task.ground_truth_configs[0].model_extra == {"run_id": "abc", "level": "a1"}
    out = json.loads(dump_task(task))
    assert list(out) == ["task_name", "intents", "topology", "startup_configs", "ground_truth_configs", "testcases",
                         "expected_output_match", "difficulty", "zz_source"]
    assert list(out["ground_truth_configs"][0]) == ["solution_id", "configs", "reasoning", "provenance", "run_id", "level"]
    assert out["topology"] == {"nodes": ["r1", "r2"], "links": data["topology"]["links"], "layout": {"r1": [0, 0]}}


def test_a_minimal_task_keeps_its_optional_keys_absent(tmp_path):
    data = {"testcases": [{"device": "r1", "commands": ["show ip route"], "expected_output": "S"}],
            "topology": {"nodes": ["r1"]}, "intents": ["do it"], "task_name": "min"}
    task = load_task(write(tmp_path, data))
    assert task.startup_configs == {} and task.ground_truth_configs == [] and task.topology.links == []
    text = dump_task(task)
    assert json.loads(text) == {"task_name": "min", "intents": ["do it"], "topology": {"nodes": ["r1"]},
                                "testcases": data["testcases"], "expected_output_match": DEFAULT_MATCH}
    # the draft's key order, nothing added but how expected_output is matched (the draft does not say)
    # a solution appended in code (harvesting) is written, with the keys it has
    task.ground_truth_configs.append(_solution())
    assert json.loads(dump_task(task))["ground_truth_configs"] == [
        {"solution_id": "harvested-1", "configs": {"r1": ["ip route 10.0.0.0/8 blackhole"]},
         "provenance": "harvested-from-validated-run", "run_id": "1"}]


def _solution():
    from ani.netconfbench.task import Solution

    return Solution(solution_id="harvested-1", configs={"r1": ["ip route 10.0.0.0/8 blackhole"]},
                    provenance="harvested-from-validated-run", run_id="1")


def test_a_task_built_in_code_dumps_and_loads_back():
    task = NcbTask(task_name="built", intents=["x"], topology=NcbTopology(nodes=["a", "b"], links=["a e0 <-> b e0"]),
                   testcases=[ResultTestcase(name="r", expected_result={"device": "a", "prefix": "10.0.0.0/24"}),
                              {"device": "b", "commands": ["show ip route"], "expected_output": "x"}])
    assert task.testcases[0].raw == {"name": "r", "expected_result": {"device": "a", "prefix": "10.0.0.0/24"}}
    assert parse_task(json.loads(dump_task(task))) == task


# -- directories -------------------------------------------------------------------------------

def test_load_tasks_reads_a_directory_sorted_without_its_subdirectories(tmp_path):
    for name in ("b.json", "a.json"):
        write(tmp_path, base(), name)
    (tmp_path / "templates").mkdir()
    write(tmp_path / "templates", "not even json", "t.json")
    write(tmp_path, "notes", "README.md")
    got = load_tasks(tmp_path)
    assert [p.name for p, _ in got] == ["a.json", "b.json"]
    assert load_tasks(tmp_path / "a.json")[0][1] == got[0][1]


def test_load_tasks_reads_every_file_before_failing(tmp_path):
    write(tmp_path, base(), "a.json")
    write(tmp_path, "{", "b.json")
    bad = base()
    del bad["topology"]
    write(tmp_path, bad, "c.json")
    msg = str(pytest.raises(TaskFormatError, load_tasks, tmp_path).value)
    assert msg.splitlines() == [f"{tmp_path / 'b.json'}: not valid JSON: line 1, column 2: "
                                "Expecting property name enclosed in double quotes",
                                f"{tmp_path / 'c.json'}: topology: required"]


def test_an_empty_directory_or_a_missing_path(tmp_path):
    with pytest.raises(TaskFormatError, match=r"no \*\.json task files in this directory"):
        task_files(tmp_path)
    with pytest.raises(TaskFormatError, match=r"missing: cannot read: no such file or directory"):
        load_tasks(tmp_path / "missing")


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_export_then_import_gives_the_same_task(path, tmp_path):
    task = load_task(path)
    text = dump_task(task)
    again = load_task(write(tmp_path, text))
    assert again == task
    assert dump_task(again) == text  # the canonical form is a fixed point, byte for byte
    assert text.endswith("}\n") and '\n  "intents": [\n' in text  # 2-space indent, trailing newline
    raw = json.loads(path.read_text())
    # the fixtures hold only known keys in the draft's order or extras: nothing lost, and the match stated
    assert json.loads(text) == {**raw, "expected_output_match": DEFAULT_MATCH}


def test_the_fixtures_are_not_in_the_canonical_form():
    # so that the test above shows a hand-written file (CRLF configs, inline arrays) surviving export
    assert all(dump_task(load_task(p)) != p.read_text() for p in FIXTURES) and len(FIXTURES) >= 2


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_task_round_trips_byte_for_byte(path):
    task = load_task(path)
    text = path.read_text(encoding="utf-8")
    assert load_task(path) == parse_task(json.loads(dump_task(task)))
    assert dump_task(task) == text, (
        f"{path.name} is not in the canonical form: rewrite it with "
        f"`ani tasks export {path.relative_to(ROOT)} --out {path.parent.relative_to(ROOT)} --force`")


@pytest.mark.parametrize("link", ["r1 eth9 <-> r1 eth8", "r1 eth9 <-> r1 eth9"])
def test_a_link_with_both_ends_on_one_node_is_refused_at_import(link):
    """The new-user check: it was accepted and failed only when a lab was built, naming the
    lab topology's ``links.2`` instead of the file's ``topology.links[2]``."""
    raw = json.loads((DATA / "static-backup.json").read_text())
    raw["topology"]["links"].append(link)
    n = len(raw["topology"]["links"]) - 1
    with pytest.raises(TaskFormatError, match=rf"^s\.json: topology\.links\[{n}\]: both ends on node 'r1': "):
        parse_task(raw, source="s.json")
