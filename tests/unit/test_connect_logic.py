"""ani.connect: its errors and how it picks the level (logic only; on a real lab:
tests/integration/test_connect.py)."""

from __future__ import annotations

import json

import pytest

import ani
import ani.connect as connect_mod
from ani.errors import ConfigError, LabNotFound, LevelError, RegistryError
from ani.lab import state


@pytest.fixture
def no_labs(monkeypatch, tmp_path):
    """An empty lab root of this test's own (the machine's labs stay out of sight)."""
    monkeypatch.setattr(state, "LABS_ROOT", tmp_path)
    return tmp_path


def fake_lab(root, lab_id: str, status: str) -> None:
    d = root / lab_id
    d.mkdir()
    topo = {"name": "t", "routers": {"r1": {"daemons": ["zebra"]}}}
    (d / "state.json").write_text(json.dumps({"id": lab_id, "status": status, "topology": topo}))


def test_ani_connect_is_callable_and_its_module_too():
    import inspect
    import sys

    from ani import connect

    assert connect is ani.connect is connect_mod is sys.modules["ani.connect"]
    assert callable(ani.connect) and "connect" in ani.__all__
    assert list(inspect.signature(ani.connect).parameters) == ["lab_id", "level", "blocklist", "options"]


def test_an_unknown_level_is_a_config_error_naming_the_levels(no_labs):
    with pytest.raises(ConfigError) as exc:
        ani.connect("anylab", "a9")
    assert isinstance(exc.value, LevelError) and isinstance(exc.value, RegistryError)
    msg = str(exc.value)
    assert "unknown adapter 'a9'" in msg
    assert all(lv in msg for lv in ("a0", "a1", "a2", "a3r", "a3t", "a4")), msg


def test_the_level_comes_from_ANI_LEVEL_before_the_lab_is_looked_up(no_labs, monkeypatch):
    monkeypatch.setenv("ANI_LEVEL", "a7")
    with pytest.raises(LevelError, match="unknown adapter 'a7'"):
        ani.connect("anylab")


@pytest.mark.parametrize(("arg", "env", "chosen"), [
    (None, None, "a1"),        # neither: a1
    (None, "a2", "a2"),        # $ANI_LEVEL
    ("a3t", "a2", "a3t"),      # the argument wins
    ("A0", None, "a0"),        # names are case-insensitive (the registry's rule)
])
def test_which_level_is_opened(monkeypatch, arg, env, chosen):
    if env is None:
        monkeypatch.delenv("ANI_LEVEL", raising=False)
    else:
        monkeypatch.setenv("ANI_LEVEL", env)
    seen: dict = {}
    monkeypatch.setattr(connect_mod, "attach_running", lambda lab_id: f"lab:{lab_id}")

    def open_on_lab(lab, name, options, trajectory=None, **kw):
        seen.update(lab=lab, name=name, options=options)
        return "adapter"

    monkeypatch.setattr(connect_mod, "open_on_lab", open_on_lab)
    assert ani.connect("x1", arg, command_timeout_s=5) == "adapter"
    assert seen == {"lab": "lab:x1", "name": chosen, "options": {"command_timeout_s": 5}}


def test_no_such_lab_names_the_known_ones(no_labs):
    fake_lab(no_labs, "known1", "up")
    fake_lab(no_labs, "known2", "up")
    with pytest.raises(LabNotFound) as exc:
        ani.connect("nosuch", "a1")
    assert "no lab 'nosuch'" in str(exc.value) and "known1, known2" in str(exc.value)


def test_no_lab_at_all_says_none(no_labs):
    with pytest.raises(LabNotFound, match=r"no lab 'nosuch' \(known: none\)"):
        ani.connect("nosuch", "a1")


@pytest.mark.parametrize(("status", "words"), [("creating", "still starting"), ("down", "stopped")])
def test_a_lab_that_is_not_up_is_not_connected(no_labs, status, words):
    fake_lab(no_labs, "half1", status)
    fake_lab(no_labs, "other1", "up")
    with pytest.raises(LabNotFound) as exc:
        ani.connect("half1", "a1")
    msg = str(exc.value)
    assert f"lab 'half1' is not running (status {status}: {words})" in msg and "other1" in msg


def test_an_option_the_level_does_not_take_is_a_config_error_naming_its_options():
    with pytest.raises(ConfigError) as exc:
        connect_mod.open_on_lab(None, "a1", {"timeout_s": 5}, check_host=False)
    assert "timeout_s" in str(exc.value) and "command_timeout_s" in str(exc.value)


def test_a_value_the_level_cannot_use_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="command_timeout_s"):
        connect_mod.open_on_lab(None, "a1", {"command_timeout_s": "abc"}, check_host=False)


def test_a_failed_open_closes_what_it_opened_and_raises(monkeypatch):
    from ani.adapters.a1 import A1Adapter
    from ani.errors import AdapterError

    closed = []

    def bad_open(self):
        raise AdapterError("cannot open (test)")

    monkeypatch.setattr(A1Adapter, "open", bad_open)
    monkeypatch.setattr(A1Adapter, "close", lambda self: closed.append(self))
    with pytest.raises(AdapterError, match="cannot open"):
        connect_mod.open_on_lab(None, "a1", {}, check_host=False)
    assert len(closed) == 1
