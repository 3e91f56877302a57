"""tests/file_order.py: make test hands each free xdist worker the longest test file left."""

from __future__ import annotations

from collections import OrderedDict

from file_order import UNKNOWN_INTEGRATION_S, LongestFileFirst, file_weights, weight


def test_a_recorded_file_weighs_its_seconds_an_unknown_one_by_its_kind():
    w = {"tests/unit/test_a.py": 3.5}
    assert weight("tests/unit/test_a.py", w) == 3.5
    assert weight("tests/integration/test_new.py", w) == UNKNOWN_INTEGRATION_S
    assert weight("tests/unit/test_new.py", w) == 0.0


def test_a_missing_or_unreadable_record_orders_nothing(tmp_path):
    assert file_weights(tmp_path / "absent.json") == {}
    (tmp_path / "bad.json").write_text("[1, 2")
    assert file_weights(tmp_path / "bad.json") == {}
    (tmp_path / "list.json").write_text("[1, 2]")
    assert file_weights(tmp_path / "list.json") == {}
    (tmp_path / "ok.json").write_text('{"tests/unit/test_a.py": 2}')
    assert file_weights(tmp_path / "ok.json") == {"tests/unit/test_a.py": 2.0}


def test_each_free_worker_gets_the_longest_file_left():
    sched = LongestFileFirst.__new__(LongestFileFirst)  # no xdist session: the queue alone
    sched.weights = {"tests/unit/test_many.py": 1.0, "tests/integration/test_long.py": 300.0}
    ids = {"tests/unit/test_many.py": ["tests/unit/test_many.py::t1", "tests/unit/test_many.py::t2"],
           "tests/unit/test_none.py": ["tests/unit/test_none.py::t"],
           "tests/integration/test_long.py": ["tests/integration/test_long.py::t"]}
    sched.workqueue = OrderedDict((scope, dict.fromkeys(n, False)) for scope, n in ids.items())
    sched.assigned_work = {}
    collection = [n for names in ids.values() for n in names]
    sent: list[list[str]] = []

    class Node:  # a worker: what it was sent
        def send_runtest_some(self, indices: list[int]) -> None:
            sent.append([collection[i] for i in indices])

    node = Node()
    sched.registered_collections = {node: collection}
    for _ in range(3):
        sched._assign_work_unit(node)
    assert sent == [ids["tests/integration/test_long.py"], ids["tests/unit/test_many.py"],
                    ids["tests/unit/test_none.py"]]
