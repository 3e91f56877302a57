"""The ANI conformance suite: a pytest base class a vendor's test subclasses.

Subclass :class:`AdapterConformance` in a test module (a class named ``Test...``) and give it
two fixtures, ``make_adapter`` (a factory of *unopened* adapters) and ``read_device`` (a reader
of the devices' state *out of band*, never through the adapter); optionally override
:meth:`~AdapterConformance.sample_calls` (valid arguments of the tools that need some) and
:meth:`~AdapterConformance.failing_change` (a change the device refuses)::

    import pytest
    from ani.registry import create_adapter
    from ani.testing import AdapterConformance, FailingChange, FakeLab, lab_state

    class TestAcmeConformance(AdapterConformance):
        @pytest.fixture
        def lab(self):
            return FakeLab(reject=[r"^bogus"])

        @pytest.fixture
        def make_adapter(self, lab):
            return lambda: create_adapter("acme", lab)

        @pytest.fixture
        def read_device(self, lab):
            return lambda: lab_state(lab)

        def sample_calls(self, adapter):
            return {"show_version": {"device": "r1"}}

        def failing_change(self, adapter):
            return FailingChange("configure", {"device": "r1", "lines": ["bogus 1"]}, code="rolled_back")

What it checks (one test each; a failure names the tool, the arguments and what differed):

- the adapter satisfies :class:`ani.protocol.Adapter` and its ``level`` is a :class:`~ani.protocol.Level`;
- tool names match ``^[a-zA-Z0-9_-]{1,64}$`` and are unique; no tool is both read-only and destructive;
- every input schema is a valid JSON Schema (draft 2020-12, jsonschema) of an object;
- every tool in strict form (``ToolSpec.to_openai(strict=True)``) is accepted by the strict
  chat-completions rules (:func:`ani.testing.strict.strict_problems`);
- an unknown tool gives ``ok=False`` / ``unknown_tool``; arguments the tool's own schema refuses
  (:func:`ani.testing.arguments.bad_arguments`) give ``ok=False`` / ``invalid_arguments``; neither
  changes the devices;
- the sample calls match their tools' schemas; every read-only tool, called with its sample,
  succeeds, reports ``changed=False`` and changes nothing out of band;
- the same read-only calls in the form a strict-mode client sends them (optionals as ``null``)
  give the same outcome;
- the failing change fails and leaves the devices as the level promises: as before (and
  ``changed=False``) when :attr:`FailingChange.restores`, else with ``changed`` telling exactly
  whether they changed;
- every result is a :class:`~ani.protocol.ToolResult` with ``ok`` iff no ``error``, and survives
  a JSON round trip unchanged (``data`` holds JSON types only);
- the read-only calls, an unknown tool and bad arguments from several threads at once (as agent
  frameworks and MCP servers make them) raise nothing, give the outcome they give alone (or a
  retriable ``timeout``: the adapter was busy) and change nothing;
- ``open()`` and ``close()`` are idempotent.

Needs pytest (``pip install 'ani-sdk[testing]'``).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ani.errors import ErrorCode
from ani.host.threads import thread
from ani.protocol import TOOL_NAME_RE, Adapter, Level, ToolResult, ToolSpec
from ani.testing.arguments import bad_arguments, with_nulls
from ani.testing.device_state import state_difference
from ani.testing.strict import strict_problems

__all__ = ["AdapterConformance", "FailingChange", "check_result"]

#: the name of a tool no adapter has
UNKNOWN_TOOL = "zz_no_such_tool"
Arguments = dict[str, Any] | Callable[[Any], dict[str, Any]]


@dataclass
class FailingChange:
    """A change the device refuses (not one the adapter refuses before sending: that is what
    the bad-arguments test covers).

    Attributes:
        tool, arguments: the call that must fail. ``arguments`` may be a function of the opened
            adapter (e.g. to read a revision first).
        before: calls made first, in order, each of which must succeed (e.g. staging an edit).
        restores: the level promises that a failed change leaves the devices as they were (A1's
            rollback, A2's rollback-on-error, a transaction); False: the level promises only that
            ``changed`` is exact (A0: a shell command that fails half-way).
        code: the error code the call must give (None: any).
        undo: called with the adapter afterwards, also when the test failed (e.g. to remove
            what a non-restoring change left behind).
    """

    tool: str
    arguments: Arguments
    before: list[tuple[str, Arguments]] = field(default_factory=list)
    restores: bool = True
    code: str | None = None
    undo: Callable[[Any], None] | None = None


def check_result(res: Any, where: str) -> ToolResult:
    """Fail (AssertionError naming ``where``) unless ``res`` is a well-formed ToolResult: ``ok``
    iff ``error`` is None, ``text`` a string, ``elapsed_s`` finite and >= 0, and a JSON round
    trip gives it back equal (so ``data`` holds only JSON types: no tuples, sets, NaN, paths...)."""
    assert isinstance(res, ToolResult), f"{where}: returned {type(res).__name__}, not a ToolResult"
    assert res.ok == (res.error is None), f"{where}: ok={res.ok} but error={res.error!r}"
    assert isinstance(res.text, str), f"{where}: text is {type(res.text).__name__}"
    assert math.isfinite(res.elapsed_s) and res.elapsed_s >= 0, f"{where}: elapsed_s={res.elapsed_s}"
    back = ToolResult.model_validate_json(res.model_dump_json())
    if back != res:
        fields = [k for k in ToolResult.model_fields if getattr(back, k) != getattr(res, k)]
        assert back == res, f"{where}: the result changes in a JSON round trip ({', '.join(fields)}): " \
                            f"{_short(res.data)} -> {_short(back.data)}"
    if res.data is not None:
        json.dumps(res.data, allow_nan=False)  # ValueError on NaN / infinity
    return res


def _short(v: Any, n: int = 400) -> str:
    text = repr(v)
    return text if len(text) <= n else text[:n] + "..."


class AdapterConformance:
    """Base class of a conformance test (module doc). Not collected itself (no ``Test`` prefix)."""

    #: threads of the concurrency test
    concurrency_threads: ClassVar[int] = 8
    #: seconds the concurrency test may take in all before it counts as hung
    concurrency_bound_s: ClassVar[float] = 600.0

    # -- what a subclass gives ------------------------------------------------------------------

    @pytest.fixture
    def make_adapter(self) -> Callable[[], Any]:
        pytest.fail(f"{type(self).__name__}: define a fixture make_adapter returning a factory of "
                    "unopened adapters, e.g. lambda: create_adapter('acme', lab)")

    @pytest.fixture
    def read_device(self) -> Callable[[], Any]:
        pytest.fail(f"{type(self).__name__}: define a fixture read_device returning a function that "
                    "reads the devices out of band (not through the adapter), e.g. lambda: lab_state(lab)")

    def sample_calls(self, adapter: Any) -> dict[str, dict[str, Any]]:
        """``{tool: arguments}``: a valid call of each tool that needs arguments (every read-only
        tool with a required property must have one: it is called). Default: none."""
        return {}

    def failing_change(self, adapter: Any) -> FailingChange | None:
        """A change the device refuses (:class:`FailingChange`), or None if the adapter offers
        only read-only tools. Default: None."""
        return None

    # -- fixtures of the suite ------------------------------------------------------------------

    @pytest.fixture
    def adapter(self, make_adapter: Callable[[], Any]) -> Any:
        a = make_adapter()
        a.open()
        try:
            yield a
        finally:
            a.close()

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _specs(adapter: Any) -> list[ToolSpec]:
        specs = adapter.tools()
        assert isinstance(specs, list) and all(isinstance(s, ToolSpec) for s in specs), \
            "tools() must return a list of ani.protocol.ToolSpec"
        return specs

    def _samples(self, adapter: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """Sample arguments of every tool that has some (given, or ``{}`` for a tool without
        required arguments), and the read-only tools that need a sample and have none."""
        given = dict(self.sample_calls(adapter) or {})
        out: dict[str, dict[str, Any]] = {}
        missing: list[str] = []
        for s in self._specs(adapter):
            if s.name in given:
                out[s.name] = given[s.name]
            elif not s.input_schema.get("required"):
                out[s.name] = {}
            elif s.read_only:
                missing.append(s.name)
        return out, missing

    def _read_only_calls(self, adapter: Any) -> list[tuple[str, dict[str, Any]]]:
        samples, missing = self._samples(adapter)
        assert not missing, (f"no sample arguments for the read-only tool(s) {', '.join(missing)}: "
                             f"return them from {type(self).__name__}.sample_calls()")
        return [(s.name, samples[s.name]) for s in self._specs(adapter) if s.read_only]

    @staticmethod
    def _call(adapter: Any, name: str, arguments: Any) -> ToolResult:
        where = f"{name}({_short(arguments, 200)})"
        try:
            res = adapter.call(name, arguments)
        except Exception as exc:  # noqa: BLE001 - reported as the failure
            pytest.fail(f"{where} raised {type(exc).__name__}: {exc} (call must return a ToolResult)")
        return check_result(res, where)

    @staticmethod
    def _same_device(before: Any, after: Any, what: str) -> None:
        diff = state_difference(before, after)
        assert not diff, f"{what} changed the device (read out of band):\n{diff}"

    # -- the checks -----------------------------------------------------------------------------

    def test_protocol_shape(self, adapter: Any) -> None:
        assert isinstance(adapter, Adapter), "the adapter lacks level, open, close, tools or call"
        try:
            Level(adapter.level)
        except ValueError:
            pytest.fail(f"level {adapter.level!r} is not one of {', '.join(v.value for v in Level)}")

    def test_tool_names_legal_and_unique(self, adapter: Any) -> None:
        names = [s.name for s in self._specs(adapter)]
        assert names, "the adapter offers no tools"
        bad = [n for n in names if not TOOL_NAME_RE.match(n)]
        assert not bad, f"tool names must match {TOOL_NAME_RE.pattern}: {bad}"
        twice = sorted({n for n in names if names.count(n) > 1})
        assert not twice, f"tool names offered twice: {twice}"
        both = [s.name for s in self._specs(adapter) if s.read_only and s.destructive]
        assert not both, f"tools both read-only and destructive: {both}"
        assert [s.name for s in self._specs(adapter)] == names, "tools() changes from one call to the next"

    def test_schemas_valid(self, adapter: Any) -> None:
        problems = []
        for s in self._specs(adapter):
            try:
                Draft202012Validator.check_schema(s.input_schema)
            except SchemaError as exc:
                problems.append(f"{s.name}: {exc.message} (at {'/'.join(map(str, exc.absolute_path)) or 'the root'})")
                continue
            if s.input_schema.get("type") != "object":
                problems.append(f"{s.name}: the arguments schema must be of type object")
            try:
                json.dumps(s.input_schema, allow_nan=False)
            except (TypeError, ValueError) as exc:
                problems.append(f"{s.name}: the schema is not JSON: {exc}")
        assert not problems, "invalid input schemas:\n" + "\n".join(problems)

    def test_schemas_accepted_by_strict_mode(self, adapter: Any) -> None:
        problems = []
        for s in self._specs(adapter):
            problems += strict_problems(s.to_openai(strict=True))
        assert not problems, "refused by the strict chat-completions rules:\n" + "\n".join(problems)

    def test_unknown_tool_refused(self, adapter: Any, read_device: Callable[[], Any]) -> None:
        before = read_device()
        res = self._call(adapter, UNKNOWN_TOOL, {})
        assert not res.ok and res.error.code == ErrorCode.UNKNOWN_TOOL, \
            f"an unknown tool must give unknown_tool, got {res.error.code if res.error else 'ok'}: {res.text[:300]}"
        assert not res.changed
        self._same_device(before, read_device(), f"calling the unknown tool {UNKNOWN_TOOL}")

    def test_bad_arguments_refused(self, adapter: Any, read_device: Callable[[], Any]) -> None:
        samples, _missing = self._samples(adapter)
        before = read_device()
        wrong = []
        for s in self._specs(adapter):
            for why, args in bad_arguments(s.input_schema, samples.get(s.name)):
                res = self._call(adapter, s.name, args)
                code = res.error.code if res.error else None
                if res.ok or code != ErrorCode.INVALID_ARGUMENTS or res.changed:
                    wrong.append(f"{s.name} {why} {_short(args, 200)}: ok={res.ok} code={code} "
                                 f"changed={res.changed}: {res.text[:200]}")
        assert not wrong, "arguments the tool's own schema refuses must give invalid_arguments:\n" + "\n".join(wrong)
        self._same_device(before, read_device(), "calls with bad arguments")

    def test_sample_calls_match_schemas(self, adapter: Any) -> None:
        specs = {s.name: s for s in self._specs(adapter)}
        given = dict(self.sample_calls(adapter) or {})
        unknown = sorted(set(given) - set(specs))
        assert not unknown, f"sample_calls() names tools the adapter does not offer: {unknown}"
        wrong = []
        for name, args in given.items():
            errs = [e.message for e in Draft202012Validator(specs[name].input_schema).iter_errors(args)]
            if errs:
                wrong.append(f"{name} {_short(args, 200)}: {'; '.join(errs)}")
        assert not wrong, "sample calls the tool's own schema refuses:\n" + "\n".join(wrong)

    def test_read_only_tools_change_nothing(self, adapter: Any, read_device: Callable[[], Any]) -> None:
        calls = self._read_only_calls(adapter)
        for name, args in calls:
            before = read_device()
            res = self._call(adapter, name, args)
            assert res.ok, f"read-only {name}({_short(args, 200)}) failed: {res.text[:500]}"
            assert res.changed is False, f"read-only {name} reports changed=True"
            self._same_device(before, read_device(), f"read-only {name}({_short(args, 200)})")

    def test_strict_form_calls_accepted(self, adapter: Any) -> None:
        specs = {s.name: s for s in self._specs(adapter)}
        wrong = []
        compared = 0
        for name, args in self._read_only_calls(adapter):
            nulls = with_nulls(specs[name].input_schema, args)
            if nulls == args:
                continue
            compared += 1
            plain, strict = self._call(adapter, name, args), self._call(adapter, name, nulls)
            if (plain.ok, plain.error and plain.error.code) != (strict.ok, strict.error and strict.error.code):
                wrong.append(f"{name} {_short(nulls, 200)}: {strict.text[:200]} (without the nulls: ok={plain.ok})")
        if not compared:
            pytest.skip("no read-only call leaves an optional argument out")
        assert not wrong, ("a null argument must count as absent (strict-mode clients send every optional "
                           "argument, null when unset):\n" + "\n".join(wrong))

    def test_failed_change_leaves_device_as_promised(self, adapter: Any, read_device: Callable[[], Any]) -> None:
        fc = self.failing_change(adapter)
        if fc is None:
            writers = [s.name for s in self._specs(adapter) if not s.read_only]
            assert not writers, (f"the adapter has tools that change things ({', '.join(writers)}): return a "
                                 f"FailingChange from {type(self).__name__}.failing_change()")
            pytest.skip("the adapter offers only read-only tools")
        before = read_device()
        try:
            for name, args in fc.before:
                args = args(adapter) if callable(args) else args
                res = self._call(adapter, name, args)
                assert res.ok, f"the failing change's preparing call {name} failed: {res.text[:500]}"
            args = fc.arguments(adapter) if callable(fc.arguments) else fc.arguments
            res = self._call(adapter, fc.tool, args)
            assert not res.ok, f"the failing change {fc.tool}({_short(args, 200)}) succeeded: {res.text[:300]}"
            if fc.code is not None:
                assert res.error.code == fc.code, f"{fc.tool}: code {res.error.code}, not {fc.code}: {res.text[:500]}"
            after = read_device()
            if fc.restores:
                self._same_device(before, after, f"the failed {fc.tool} (the level promises it does not)")
                assert res.changed is False, f"{fc.tool} restored the device but reports changed=True"
            else:
                assert res.changed == (after != before), (
                    f"{fc.tool} reports changed={res.changed}, but the device "
                    f"{'changed' if after != before else 'did not change'} (read out of band)")
        finally:
            if fc.undo is not None:
                fc.undo(adapter)

    def test_results_round_trip_json(self, adapter: Any) -> None:
        specs = self._specs(adapter)
        calls: list[tuple[str, Any]] = [*self._read_only_calls(adapter), (UNKNOWN_TOOL, {})]
        for s in specs:
            calls += [(s.name, args) for _why, args in bad_arguments(s.input_schema)[-1:]]
        for name, args in calls:
            self._call(adapter, name, args)  # checks the round trip

    def test_concurrent_calls_safe(self, adapter: Any, read_device: Callable[[], Any]) -> None:
        calls: list[tuple[str, Any]] = [*self._read_only_calls(adapter), (UNKNOWN_TOOL, {})]
        first = self._specs(adapter)[0]
        calls.append((first.name, ["not", "an", "object"]))
        alone = [self._call(adapter, n, a) for n, a in calls]
        expect = [(r.ok, r.error.code if r.error else None) for r in alone]
        before = read_device()
        n = self.concurrency_threads
        start = threading.Barrier(n)
        got: list[list[tuple[int, Any]]] = [[] for _ in range(n)]
        errors: list[str] = []

        def work(t: int) -> None:
            start.wait()
            for k in range(len(calls)):
                i = (t + k) % len(calls)  # each thread in its own order
                name, args = calls[i]
                try:
                    got[t].append((i, adapter.call(name, args)))
                except Exception as exc:  # noqa: BLE001 - reported below
                    errors.append(f"thread {t}: {name} raised {type(exc).__name__}: {exc}")

        threads = [thread(work, t) for t in range(n)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(self.concurrency_bound_s)
        assert not any(th.is_alive() for th in threads), f"calls still running after {self.concurrency_bound_s:g} s"
        assert not errors, "\n".join(errors)
        wrong = []
        succeeded = set()
        for t, results in enumerate(got):
            for i, res in results:
                name = calls[i][0]
                check_result(res, f"thread {t}: {name}")
                outcome = (res.ok, res.error.code if res.error else None)
                if outcome == expect[i]:
                    succeeded.add(i)
                elif not (res.error and res.error.code == ErrorCode.TIMEOUT and res.error.retriable):
                    wrong.append(f"thread {t}: {name}: ok={res.ok} code={outcome[1]} (alone: ok={expect[i][0]} "
                                 f"code={expect[i][1]}): {res.text[:200]}")
        assert not wrong, "concurrent calls gave other outcomes than alone:\n" + "\n".join(wrong)
        never = [calls[i][0] for i in range(len(calls)) if i not in succeeded]
        assert not never, f"under concurrency these calls only ever answered timeout: {never}"
        self._same_device(before, read_device(), "concurrent read-only calls")

    def test_open_close_idempotent(self, make_adapter: Callable[[], Any]) -> None:
        a = make_adapter()
        step = "open()"
        try:
            a.open()
            step = "a second open()"
            a.open()
            name = a.tools()[0].name
            check_result(a.call(name, ["not", "an", "object"]), f"{name} after a second open()")
            step = "close()"
            a.close()
            step = "a second close()"
            a.close()
        except Exception as exc:  # noqa: BLE001 - reported as the failure
            pytest.fail(f"{step} raised {type(exc).__name__}: {exc} (open and close must be idempotent)")
