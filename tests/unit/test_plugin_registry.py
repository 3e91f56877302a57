"""ani.plugin_registry.Registry: registering, ordering, entry points, every error path; and the
kinds of plug-in that use it (one shape)."""

from __future__ import annotations

import ast
import subprocess
import sys
from types import SimpleNamespace

import pytest

import ani.plugin_registry as plugin_registry
from ani.errors import ConfigError, LevelError, RegistryError, TaskError
from ani.plugin_registry import Registry, did_you_mean, import_path, is_path


class Thing:
    name = "thing"


def fake_eps(group_name: str, **eps: str):
    """An ``entry_points(group=...)`` stand-in: only the metadata read is faked (a real
    distribution per case is impractical); name/value pairs as importlib gives them."""
    def entry_points(*, group: str):
        return [SimpleNamespace(name=k, value=v) for k, v in eps.items()] if group == group_name else []
    return entry_points


def test_register_by_object_and_by_module_attr_then_load():
    reg = Registry("widget")
    reg.register("ordered", "collections:OrderedDict")
    reg.register("thing", Thing)
    assert reg.targets() == {"ordered": "collections:OrderedDict", "thing": Thing}
    from collections import OrderedDict
    assert reg.load("ordered") is OrderedDict and reg.load("thing") is Thing
    assert reg.get("ordered") == "collections:OrderedDict"  # the mapping's get: unloaded
    assert reg.get("nope") is None and "thing" in reg and 3 not in reg and len(reg) == 2


def test_register_class_uses_its_name_and_a_class_without_one_is_refused():
    reg = Registry("widget", error=ConfigError)
    assert reg.register_class(Thing) is Thing and reg.names() == ["thing"]
    with pytest.raises(ConfigError, match="widget Nameless has no name"):
        reg.register_class(type("Nameless", (), {}))


@pytest.mark.parametrize("name", ["", None])
def test_an_empty_name_is_refused(name):
    with pytest.raises(RegistryError, match="a widget needs a name"):
        Registry("widget").register(name, Thing)


@pytest.mark.parametrize("target", ["collections.OrderedDict", "a/b.py:f", "m:", ":f", "a:b:c"])
def test_a_string_target_must_be_module_attr(target):
    with pytest.raises(RegistryError, match=r"widget 'x': target .* is not module:attr"):
        Registry("widget").register("x", target)


def test_unknown_name_lists_known_a_close_one_and_the_hint_with_the_kinds_error_class():
    reg = Registry("fault kind", error=ConfigError, hint="pip install it (entry-point group g)", prefix="f: ")
    reg.register("link_down", "collections:OrderedDict")
    reg.register("latency", "collections:Counter")
    with pytest.raises(ConfigError) as exc:
        reg.load("link_dwn")
    assert str(exc.value) == ("f: unknown fault kind 'link_dwn'; known: latency, link_down; "
                              "did you mean 'link_down'?; pip install it (entry-point group g)")
    with pytest.raises(ConfigError) as exc:
        reg.load("zzz")
    assert "did you mean" not in str(exc.value)  # nothing close: no guess


def test_unknown_name_in_an_empty_registry_says_none():
    assert str(Registry("widget").unknown("x")) == "unknown widget 'x'; known: (none)"


def test_unknown_name_that_is_no_string_is_said_not_matched():
    assert str(Registry("widget").unknown(["a"])) == "unknown widget ['a']; known: (none)"
    reg = Registry("widget", error=ConfigError)
    reg.register("a", Thing)
    for name in (["a"], {"a": 1}, None, 3):  # a file's value of the wrong type: an error, never a TypeError
        with pytest.raises(ConfigError, match="unknown widget .*; known: a$"):
            reg.load(name)


def test_a_target_that_cannot_be_loaded_names_it_and_the_cause():
    reg = Registry("adapter", error=LevelError, load_error=RegistryError)
    reg.register("gone", "no_such_module_zz9:Adapter")
    reg.register("noattr", "collections:NoSuchThing")
    with pytest.raises(RegistryError) as exc:
        reg.load("gone")
    assert not isinstance(exc.value, LevelError)
    assert str(exc.value) == ("adapter 'gone' (no_such_module_zz9:Adapter) cannot be loaded: "
                              "ModuleNotFoundError: No module named 'no_such_module_zz9'")
    with pytest.raises(RegistryError, match=r"adapter 'noattr' \(collections:NoSuchThing\) cannot be loaded: "
                                            r"AttributeError"):
        reg.load("noattr")
    assert reg.names() == ["gone", "noattr"]  # listing imports nothing, so it never fails


def test_load_with_paths_imports_an_unregistered_module_attr_only_when_asked():
    reg = Registry("widget")
    from collections import Counter
    assert reg.load("collections:Counter", paths=True) is Counter
    with pytest.raises(RegistryError, match="unknown widget 'collections:Counter'"):
        reg.load("collections:Counter")
    with pytest.raises(RegistryError, match="unknown widget 'os.path'"):
        reg.load("os.path", paths=True)  # not module:attr: a name, never imported


def test_a_duplicate_is_refused_unless_it_is_the_same_or_the_registry_replaces():
    reg = Registry("service class", duplicate_error=ValueError, error=KeyError)
    reg.register("thing", Thing())
    reg.register("thing", Thing())  # another instance of the same class: a module imported twice
    with pytest.raises(ValueError, match="service class 'thing' is registered twice"):
        reg.register("thing", type("Other", (), {})())
    replacing = Registry("agent kind", replace=True)
    replacing.register("k", "collections:Counter")
    replacing.register("k", Thing)
    assert replacing.load("k") is Thing


def test_order_is_explicit_then_sorted_whatever_the_registration_order():
    reg = Registry("executor", order=("serial", "local", "dask"))
    for name in ("zeta", "dask", "alpha", "serial", "local", "beta"):
        reg.register(name, Thing)
    assert reg.names() == ["serial", "local", "dask", "alpha", "beta", "zeta"]
    assert list(reg) == reg.names() and list(reg.targets()) == reg.names()
    late = Registry("executor", order=("serial", "local"))
    late.register("local", Thing)
    assert late.names() == ["local"]  # an ordered name not registered is simply absent


def test_entry_points_are_listed_sorted_and_never_replace_a_registered_name(monkeypatch):
    monkeypatch.setattr(plugin_registry, "entry_points",
                        fake_eps("ani.widgets", builtin="elsewhere_zz:Nope", extra="collections:Counter"))
    reg = Registry("widget", group="ani.widgets")
    reg.register("builtin", Thing)
    assert reg.entry_points() == {"builtin": "elsewhere_zz:Nope", "extra": "collections:Counter"}
    assert reg.targets() == {"builtin": Thing, "extra": "collections:Counter"}
    from collections import Counter
    assert reg.load("extra") is Counter and reg.load("builtin") is Thing
    assert Registry("widget", group="other.group").names() == []
    assert Registry("widget").entry_points() == {}  # no group: none read


def test_entry_points_are_read_once_until_refresh(monkeypatch):
    calls = []

    def counting(*, group):
        calls.append(group)
        return [SimpleNamespace(name="one", value="collections:Counter")]

    monkeypatch.setattr(plugin_registry, "entry_points", counting)
    reg = Registry("widget", group="g")
    for _ in range(3):
        assert reg.names() == ["one"]
    assert calls == ["g"]
    reg.refresh()
    reg.names()
    assert calls == ["g", "g"]


def test_a_real_installed_group_is_read_through_importlib_metadata():
    """The shipped distribution declares its adapters and agents as entry points (no fake)."""
    assert {"a0", "a1", "a4"} <= set(Registry("adapter", group="ani.adapters").entry_points())
    assert {"scripted", "llm"} <= set(Registry("agent kind", group="ani.agents").entry_points())


def test_loader_runs_once_lazily_and_isolated_undoes_registrations():
    runs = []
    reg: Registry[type] = Registry("widget", loader=lambda: runs.append(1) or reg.register("shipped", Thing))
    assert runs == []
    assert reg.names() == ["shipped"] and reg.names() == ["shipped"] and runs == [1]
    with reg.isolated():
        reg.register("fake", Thing)
        reg.unregister("shipped")
        assert reg.names() == ["fake"]
    assert reg.names() == ["shipped"]
    with pytest.raises(KeyError):
        reg.unregister("never")


def test_setitem_and_delitem_register_and_unregister():
    reg = Registry("agent kind")
    reg["k"] = Thing
    reg["k"] = "collections:Counter"  # replaces, even without replace=True (an explicit assignment)
    assert reg.targets() == {"k": "collections:Counter"}
    del reg["k"]
    assert "k" not in reg


def test_helpers():
    assert is_path("a.b:C.d") and not is_path("a/b.py:f") and not is_path("name")
    assert import_path("os.path:join") is __import__("os").path.join
    with pytest.raises(ValueError, match="not module:attr"):
        import_path("os.path")
    assert did_you_mean("scripted", ["scripted2", "llm"]) == "scripted2" and did_you_mean("q", ["llm"]) is None


# -- the kinds on it --------------------------------------------------------------------------


def test_every_kind_of_plug_in_is_a_registry_with_its_own_group_and_error():
    from ani.agents.factory import AGENT_KINDS
    from ani.agents.mistakes.base import MISTAKE_KINDS
    from ani.campaign.executors import EXECUTORS
    from ani.faults.base import FAULT_KINDS
    from ani.intents.services.base import SERVICE_CLASSES
    from ani.netconfbench.platform import PLATFORM_KINDS
    from ani.registry import ADAPTERS
    from ani.scenario.tasks.base import TASK_CLASSES

    kinds = {"ani.adapters": (ADAPTERS, LevelError), "ani.agents": (AGENT_KINDS, ConfigError),
             "ani.services": (SERVICE_CLASSES, KeyError), "ani.faults": (FAULT_KINDS, ConfigError),
             "ani.tasks": (TASK_CLASSES, TaskError), "ani.executors": (EXECUTORS, ConfigError),
             "ani.platforms": (PLATFORM_KINDS, ConfigError), "ani.mistakes": (MISTAKE_KINDS, ConfigError)}
    for group, (reg, error) in kinds.items():
        assert isinstance(reg, Registry) and reg.group == group, group
        with pytest.raises(error, match=f"unknown {reg.what} 'no-such-zz'"):
            reg.load("no-such-zz")
    assert TASK_CLASSES.names() == ["onboard-site", "change-set", "decommission", "troubleshoot"]
    assert EXECUTORS.names()[:3] == ["serial", "local", "dask"]
    assert PLATFORM_KINDS.names() == ["frr", "cisco-ios", "junos"]
    assert SERVICE_CLASSES.names()[:2] == ["tenant-site", "tenant-firewall"]


def test_plugin_registry_sits_at_the_bottom_layer():
    """Importing it loads no module of ani but errors, beyond what ``import ani`` loads (a fresh
    interpreter)."""
    code = ("import sys, ani; before = set(sys.modules); import ani.plugin_registry; "
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('ani')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert set(ast.literal_eval(out)) <= {"ani.errors", "ani.plugin_registry"}, out


def test_a_close_name_is_offered_for_a_mistyped_fault_kind_and_task_class():
    from ani.faults.base import get_fault_kind
    from ani.scenario.tasks import get_task_class

    with pytest.raises(ConfigError, match="did you mean 'link_down'"):
        get_fault_kind("link_dwn")
    with pytest.raises(TaskError, match=r"unknown task class 'decomission'; known: onboard-site, change-set, "
                                        r"decommission, troubleshoot; did you mean 'decommission'\?"):
        get_task_class("decomission")
