"""One error tree (issue 11, section 5): every exception class defined in ani derives from
``ani.errors.AniError``, the tree drawn in the docstring of ani/errors.py names every public
one, and there is one timeout error, ``AniTimeout`` (also a ``TimeoutError``, carrying its
bound in seconds)."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
import subprocess

import pytest

import ani
import ani.errors as errors
from ani.errors import AniError, AniTimeout


@functools.cache
def exception_classes() -> list[type[BaseException]]:
    """Every exception class defined in a module of ani (nested in a class too). Walked when a
    test of this module first asks, not at collection: the walk imports every module of ani,
    the agent frameworks of ``ani.integrations`` too (some 3 s of CPU), and every pytest worker
    collects every test module."""
    found: dict[str, type[BaseException]] = {}

    def visit(obj: object, module: str) -> None:
        for value in vars(obj).values():
            if inspect.isclass(value) and value.__module__ == module:
                if issubclass(value, BaseException):
                    found[f"{module}.{value.__qualname__}"] = value
                visit(value, module)

    for info in pkgutil.walk_packages(ani.__path__, "ani."):
        mod = importlib.import_module(info.name)
        visit(mod, mod.__name__)
    return [found[k] for k in sorted(found)]


def test_the_walk_finds_the_exceptions_of_every_layer():
    names = {c.__name__ for c in exception_classes()}
    # one of each layer, so that a walk that silently found nothing would fail here
    assert {"ConfigError", "ApplyError", "ReadTimeout", "SessionError", "RpcFailed", "RpcError",
            "IntentError", "SotError", "BudgetExceeded", "EndpointError", "_Stop"} <= names


def _interrupts() -> set[str]:
    """The classes errors.py's docstring draws under ``KeyboardInterrupt`` (interrupts, not errors)."""
    doc = errors.__doc__ or ""
    part = doc[doc.index("    KeyboardInterrupt"):] if "    KeyboardInterrupt" in doc else ""
    return set(re.findall(r"\+-- (\w+)", part))


def _not_an_ani_error(cls: type[BaseException]) -> str | None:
    """Why ``cls`` breaks the rule of the next test, or None."""
    if cls.__name__ in _interrupts():
        ok = issubclass(cls, KeyboardInterrupt) and not issubclass(cls, Exception)
        return None if ok else f"{cls.__module__}.{cls.__qualname__}: drawn as an interrupt, not a bare KeyboardInterrupt"
    return None if issubclass(cls, AniError) else \
        f"{cls.__module__}.{cls.__qualname__}: {[b.__name__ for b in cls.__mro__]}"


def test_every_exception_class_of_ani_is_an_ani_error():
    """Every exception is an AniError, but an interrupt drawn as one in errors.py, which stays a
    KeyboardInterrupt (and is no Exception: no catch-all swallows a Ctrl-C). Every class that
    breaks it is named."""
    broken = [why for cls in exception_classes() if (why := _not_an_ani_error(cls))]
    assert broken == []


@pytest.mark.parametrize(("cls", "broken"), [
    (type("Plain", (Exception,), {"__module__": "ani.x"}), True),
    (type("Fine", (AniError,), {"__module__": "ani.x"}), False),
])
def test_a_class_outside_the_tree_is_named(cls: type[BaseException], broken: bool) -> None:
    assert (_not_an_ani_error(cls) is not None) is broken


def test_the_tree_in_the_docstring_names_every_public_exception():
    named = set(re.findall(r"\b[A-Z]\w+\b", errors.__doc__ or ""))
    missing = [f"{c.__module__}.{c.__name__}" for c in exception_classes()
               if not c.__name__.startswith("_") and c.__name__ not in named]
    assert not missing, f"not in the tree of ani/errors.py: {missing}"


def test_every_timeout_is_an_ani_timeout_carrying_its_bound():
    """The timeouts of every kind (a device read, routing convergence, an LLM request, a tool)
    are one class: a caller catches AniTimeout (or TimeoutError) and reads ``seconds``."""
    from ani.device.outcome import ApplyError, ReadTimeout
    from ani.errors import ConvergenceTimeout, LabError

    timeouts = [c for c in exception_classes() if "Timeout" in c.__name__ or "timeout" in (c.__doc__ or "").split("\n")[0].lower()]
    assert {c.__name__ for c in timeouts} >= {"AniTimeout", "ConvergenceTimeout", "ReadTimeout"}
    for c in timeouts:
        assert issubclass(c, AniTimeout) and issubclass(c, TimeoutError), c
    t = AniTimeout(2.5, "opening vtysh on r2")
    assert (str(t), t.seconds, t.what) == ("timeout after 2.5 s (opening vtysh on r2)", 2.5, "opening vtysh on r2")
    r = ReadTimeout("r2", 10, "reading the running config")
    assert str(r) == "r2: timeout after 10 s (reading the running config)" and r.seconds == 10.0
    assert isinstance(r, ApplyError) and r.restored is True  # a read changes nothing
    c = ConvergenceTimeout("lab x: not converged after 20 s: e1: ...", pending=["e1: ..."], seconds=20)
    assert isinstance(c, LabError) and c.seconds == 20.0 and c.pending == ["e1: ..."]


def test_the_removed_timeout_kinds_are_gone():
    import ani.adapters.base as base
    import ani.adapters.cli_session as cli_session
    import ani.agents.llm_endpoint as llm_endpoint
    import ani.netconf.client as client

    for mod, name in ((base, "ToolTimeout"), (cli_session, "SessionTimeout"), (client, "RpcTimeout"),
                      (llm_endpoint, "ResponseTimeout")):
        assert not hasattr(mod, name), f"{mod.__name__}.{name}"


def test_a_timeout_a_tool_lets_through_is_mapped_in_one_place():
    from ani.adapters.error_map import error_result
    from ani.errors import ErrorCode

    for exc, message in ((AniTimeout(4, "x"), "r1: timeout after 4 s (x)"),
                         (subprocess.TimeoutExpired(["vtysh"], 3), "r1: timeout after 3 s")):
        res = error_result(exc, device="r1")
        assert (res.error.code, res.error.message, res.error.retriable) == (ErrorCode.TIMEOUT, message, True)
