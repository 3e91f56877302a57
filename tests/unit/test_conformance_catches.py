"""Each check of the conformance suite (ani.testing.AdapterConformance) fails for an adapter that
breaks its rule, and passes for one that keeps them all (so no check passes whatever the adapter
does). The suite's test methods are called directly with the fixtures' values, on FakeLab."""

from __future__ import annotations

import inspect
import threading
import time
from typing import Any

import pytest
from pydantic import Field

from ani.adapters.base import BaseAdapter, DeviceArgs, tool
from ani.errors import ErrorCode
from ani.protocol import ErrorInfo, Level, ToolResult, ToolSpec
from ani.testing import AdapterConformance, FailingChange, FakeLab, lab_state


ROUTE = "ip route 192.0.2.0/24 Null0"
CHECKS = [n for n in dir(AdapterConformance) if n.startswith("test_")]


class LinesArgs(DeviceArgs):
    lines: list[str] = Field(min_length=1, description="configuration lines")


class ShowArgs(DeviceArgs):
    detail: bool = Field(default=False, description="more")


class Good(BaseAdapter):
    """Keeps every rule: ``show`` reads, ``add`` applies lines all-or-nothing."""

    level = Level.A1

    @tool(args=ShowArgs, read_only=True, description="The running configuration.")
    def show(self, args: ShowArgs) -> ToolResult:
        return ToolResult.success(self.lab.running_config(args.device), {"lines": self.lab.config(args.device)})

    @tool(args=LinesArgs, destructive=True, description="Add configuration lines (all or none).")
    def add(self, args: LinesArgs) -> ToolResult:
        before = self.lab.config(args.device)
        r = self.lab.vtysh(args.device, ["configure terminal", *args.lines])
        if r.rc:
            self.restore(args.device, before)
            return ToolResult.failure(ErrorCode.ROLLED_BACK, r.stdout.strip())
        return ToolResult.success("applied", changed=self.lab.config(args.device) != before)

    def restore(self, device: str, before: list[str]) -> None:
        added = [ln for ln in self.lab.config(device) if ln not in before]
        self.lab.vtysh(device, ["configure terminal", *(f"no {ln}" for ln in added)])


class Suite(AdapterConformance):
    def sample_calls(self, adapter: Any) -> dict[str, dict[str, Any]]:
        return {"show": {"device": "r1"}, "add": {"device": "r1", "lines": [ROUTE]}}

    def failing_change(self, adapter: Any) -> FailingChange | None:
        return FailingChange("add", {"device": "r1", "lines": [ROUTE, "bogus 1"]}, code="rolled_back")


def run(check: str, make: Any, suite: AdapterConformance | None = None, lab: FakeLab | None = None) -> None:
    """Run the suite's ``check`` on adapters from ``make(lab)`` (raises what the check raises)."""
    suite = suite or Suite()
    lab = lab or FakeLab(reject=[r"^bogus"])
    method = getattr(suite, check)
    params = inspect.signature(method).parameters
    kwargs: dict[str, Any] = {}
    opened = None
    if "adapter" in params:
        opened = kwargs["adapter"] = make(lab)
        opened.open()
    if "make_adapter" in params:
        kwargs["make_adapter"] = lambda: make(lab)
    if "read_device" in params:
        kwargs["read_device"] = lambda: lab_state(lab)
    try:
        method(**kwargs)
    finally:
        if opened is not None:
            opened.close()


def fails(check: str, make: Any, match: str, **kw: Any) -> None:
    with pytest.raises((AssertionError, pytest.fail.Exception), match=match):
        run(check, make, **kw)


@pytest.mark.parametrize("check", CHECKS)
def test_a_conforming_adapter_passes_every_check(check: str) -> None:
    run(check, Good)


# -- a raw adapter (no BaseAdapter) to break what BaseAdapter does for you ---------------------


class Raw:
    """The protocol by hand: ``show(device, detail=false)`` and nothing checked unless said."""

    level = Level.A1

    def __init__(self, lab: FakeLab) -> None:
        self.lab = lab
        self.closed = 0

    def open(self) -> None:
        pass

    def close(self) -> None:
        self.closed += 1

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="show", description="show", read_only=True, input_schema={
            "type": "object", "additionalProperties": False, "required": ["device"],
            "properties": {"device": {"type": "string"}, "detail": {"type": "boolean"}}})]

    def call(self, name: str, arguments: Any) -> ToolResult:
        if name != "show":
            return ToolResult.failure(ErrorCode.UNKNOWN_TOOL, name)
        if not isinstance(arguments, dict) or set(arguments) - {"device", "detail"} \
                or not isinstance(arguments.get("device"), str) \
                or not isinstance(arguments.get("detail", False), (bool, type(None))):
            return ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, "bad")
        return ToolResult.success(self.lab.running_config(arguments["device"]))


class RawSuite(AdapterConformance):
    def sample_calls(self, adapter: Any) -> dict[str, dict[str, Any]]:
        return {"show": {"device": "r1"}}


@pytest.mark.parametrize("check", [c for c in CHECKS if c != "test_failed_change_leaves_device_as_promised"])
def test_the_raw_adapter_passes_too(check: str) -> None:
    run(check, Raw, suite=RawSuite())


def test_an_adapter_without_changes_needs_no_failing_change() -> None:
    with pytest.raises(pytest.skip.Exception, match="only read-only tools"):
        run("test_failed_change_leaves_device_as_promised", Raw, suite=RawSuite())


def test_level_must_be_a_level() -> None:
    class Odd(Raw):
        level = "a9"  # type: ignore[assignment]

    fails("test_protocol_shape", Odd, "level 'a9' is not one of", suite=RawSuite())


def test_illegal_and_duplicate_names() -> None:
    class Names(Raw):
        def tools(self) -> list[ToolSpec]:
            t = super().tools()[0]
            return [ToolSpec.model_construct(**{**t.__dict__, "name": "show config"}), t]

    fails("test_tool_names_legal_and_unique", Names, "must match", suite=RawSuite())

    class Twice(Raw):
        def tools(self) -> list[ToolSpec]:
            return super().tools() * 2

    fails("test_tool_names_legal_and_unique", Twice, r"offered twice: \['show'\]", suite=RawSuite())

    class Both(Raw):
        def tools(self) -> list[ToolSpec]:
            return [t.model_copy(update={"destructive": True}) for t in super().tools()]

    fails("test_tool_names_legal_and_unique", Both, "both read-only and destructive", suite=RawSuite())


def test_invalid_schema() -> None:
    class Typo(Raw):
        def tools(self) -> list[ToolSpec]:
            return [ToolSpec(name="show", description="", read_only=True,
                             input_schema={"type": "object", "properties": {"device": {"type": "strng"}}})]

    fails("test_schemas_valid", Typo, "show: .*strng", suite=RawSuite())


def test_strict_form_refused() -> None:
    class Loose(ToolSpec):
        def to_openai(self, strict: bool = False) -> dict[str, Any]:  # ignores strict
            return {"type": "function", "function": {"name": self.name, "description": "", "parameters": self.input_schema}}

    class NotStrict(Raw):
        def tools(self) -> list[ToolSpec]:
            return [Loose(**t.model_dump()) for t in super().tools()]

    fails("test_schemas_accepted_by_strict_mode", NotStrict,
          r"(?s)show: function.strict must be true.*not required: detail", suite=RawSuite())


def test_unknown_tool_answered() -> None:
    class Yes(Good):
        def call(self, name: str, arguments: Any) -> ToolResult:
            return ToolResult.success("fine") if name not in self._tools else super().call(name, arguments)

    fails("test_unknown_tool_refused", Yes, "must give unknown_tool, got ok")


def test_bad_arguments_accepted() -> None:
    class Lax(Raw):
        def call(self, name: str, arguments: Any) -> ToolResult:
            return ToolResult.success("whatever you say")

    fails("test_bad_arguments_refused", Lax, r"(?s)show not an object.*show unknown argument", suite=RawSuite())


def test_read_only_tool_that_writes() -> None:
    class Sneaky(Good):
        @tool(args=ShowArgs, read_only=True, description="The running configuration.")
        def show(self, args: ShowArgs) -> ToolResult:
            self.lab.vtysh(args.device, ["configure terminal", "ip route 198.51.100.0/24 Null0"])
            return ToolResult.success("")

    fails("test_read_only_tools_change_nothing", Sneaky, r"(?s)read-only show.*changed the device.*\+ip route 198.51.100")


def test_missing_sample_and_bad_sample() -> None:
    class NoSamples(Suite):
        def sample_calls(self, adapter: Any) -> dict[str, dict[str, Any]]:
            return {}

    fails("test_read_only_tools_change_nothing", Good, r"no sample arguments for the read-only tool\(s\) show",
          suite=NoSamples())

    class WrongSample(Suite):
        def sample_calls(self, adapter: Any) -> dict[str, dict[str, Any]]:
            return {"show": {"device": 1}, "nope": {}}

    fails("test_sample_calls_match_schemas", Good, r"names tools the adapter does not offer: \['nope'\]",
          suite=WrongSample())

    class WrongType(Suite):
        def sample_calls(self, adapter: Any) -> dict[str, dict[str, Any]]:
            return {"show": {"device": 1}}

    fails("test_sample_calls_match_schemas", Good, "show .*1 is not of type 'string'", suite=WrongType())


def test_failed_change_not_restored() -> None:
    class Half(Good):
        def restore(self, device: str, before: list[str]) -> None:
            pass

    fails("test_failed_change_leaves_device_as_promised", Half, r"(?s)the failed add.*\+ip route 192.0.2.0/24")


def test_failed_change_with_a_wrong_changed_flag() -> None:
    class Honest(Suite):
        def failing_change(self, adapter: Any) -> FailingChange:
            return FailingChange("add", {"device": "r1", "lines": [ROUTE, "bogus 1"]}, restores=False)

    class Half(Good):
        def restore(self, device: str, before: list[str]) -> None:
            pass

    fails("test_failed_change_leaves_device_as_promised", Half,
          "reports changed=False, but the device changed", suite=Honest())

    class NoChangeClaimed(Suite):  # a change that is said to fail but succeeds
        def failing_change(self, adapter: Any) -> FailingChange:
            return FailingChange("add", {"device": "r1", "lines": [ROUTE]})

    fails("test_failed_change_leaves_device_as_promised", Good, "succeeded", suite=NoChangeClaimed())

    class NoFailingChange(Suite):
        def failing_change(self, adapter: Any) -> None:
            return None

    fails("test_failed_change_leaves_device_as_promised", Good, r"tools that change things \(add\)",
          suite=NoFailingChange())


def test_results_that_do_not_survive_json() -> None:
    class Tuples(Good):
        @tool(args=ShowArgs, read_only=True, description="The running configuration.")
        def show(self, args: ShowArgs) -> ToolResult:
            return ToolResult.success("", {"lines": tuple(self.lab.config(args.device))})

    fails("test_results_round_trip_json", Tuples, r"changes in a JSON round trip \(data\)")

    class Nan(Good):
        @tool(args=ShowArgs, read_only=True, description="The running configuration.")
        def show(self, args: ShowArgs) -> ToolResult:
            return ToolResult.success("", {"load": float("nan")})

    fails("test_results_round_trip_json", Nan, "JSON round trip")

    class OkWithError(Good):
        @tool(args=ShowArgs, read_only=True, description="The running configuration.")
        def show(self, args: ShowArgs) -> ToolResult:
            return ToolResult(ok=True, error=ErrorInfo(code=ErrorCode.TIMEOUT, message="?"))

    fails("test_results_round_trip_json", OkWithError, "ok=True but error=")


def test_a_call_that_raises() -> None:
    class Raises(Raw):
        def call(self, name: str, arguments: Any) -> ToolResult:
            if name != "show":
                raise KeyError(name)
            return super().call(name, arguments)

    fails("test_unknown_tool_refused", Raises, "raised KeyError", suite=RawSuite())


def test_null_optional_refused() -> None:
    class NoNulls(Raw):
        def call(self, name: str, arguments: Any) -> ToolResult:
            if isinstance(arguments, dict) and None in arguments.values():
                return ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, "detail: not a boolean")
            return super().call(name, arguments)

    fails("test_strict_form_calls_accepted", NoNulls, r"a null argument must count as absent(?s:.*)'detail': None",
          suite=RawSuite())


def test_calls_that_race() -> None:
    class Racy(Raw):
        """Keeps the call being served in one attribute: two threads answer each other's call."""

        def call(self, name: str, arguments: Any) -> ToolResult:
            self.current = (name, arguments)
            time.sleep(0.005)
            return super().call(*self.current)

    fails("test_concurrent_calls_safe", Racy, "concurrent calls gave other outcomes than alone", suite=RawSuite())

    gate = threading.Event()

    class Hangs(Raw):
        def call(self, name: str, arguments: Any) -> ToolResult:
            if threading.current_thread() is not threading.main_thread():
                gate.wait()  # the threads of the check wait until the check gave up
            return super().call(name, arguments)

    class Short(RawSuite):
        concurrency_bound_s = 1.0

    try:
        fails("test_concurrent_calls_safe", Hangs, "calls still running after 1 s", suite=Short())
    finally:
        gate.set()


def test_close_twice_raises() -> None:
    class Fragile(Raw):
        def close(self) -> None:
            super().close()
            if self.closed > 1:
                raise RuntimeError("already closed")

    fails("test_open_close_idempotent", Fragile, r"a second close\(\) raised RuntimeError: already closed",
          suite=RawSuite())

