"""NetConfBench testcases: the draft's two shapes, kept as written, normalised to observer checks.

Source: the NetConfBench draft (``shared/seeds/000_*.txt``), §4.1 (a task's ``testcases``) and
§4.3 (``run-testcases``). A task's ``testcases`` list may mix both shapes:

- the **command** shape (§4.3)::

      {"name": "primary route", "device": "r1",
       "commands": ["show ip route 203.0.113.0/30"],
       "expected_output": "S>\\\\* 203\\\\.0\\\\.113\\\\.0/30 \\\\[1/0\\\\] via 192\\\\.0\\\\.2\\\\.2"}

  ``name`` optional, ``device`` a topology node, ``commands`` a non-empty list of read-only
  commands (each starts with ``show``, ``ping`` or ``traceroute``: a testcase must not change
  the network it grades), ``expected_output`` found in the text of all the commands' output as
  the testcase's ``match`` or the task's ``expected_output_match`` says
  (:class:`~ani.observer.match.OutputMatch`, default :data:`~ani.observer.match.NCB_DEFAULT`:
  ``re.search`` with ``MULTILINE`` and ``DOTALL``, or the text verbatim). It becomes a
  :class:`~ani.observer.checks.CommandCheck` (``kind: command``): ``show`` commands in one
  ``vtysh -c .. -c ..`` on the router, out of band; ``ping`` / ``traceroute`` bounded in its
  namespace (:mod:`ani.observer.probe`). A probe option the observer refuses (``ping -f``) is
  refused by :func:`to_checks` by JSON path; the file still loads.
- the **expected_result** shape (§4.1)::

      {"name": "static route r1 -> r2 lo",
       "expected_result": {"device": "r1", "prefix": "203.0.113.0/30",
                           "protocol": "static", "next_hop": "192.0.2.2"}}

  ``name`` required; ``expected_result`` takes exactly the keys of :class:`ExpectedResult`
  (``device`` and ``prefix`` required; ``present``, ``protocol``, ``next_hop``, ``distance``,
  ``local_pref``, ``community`` optional); any other key is refused by its JSON path. It
  becomes a :class:`~ani.observer.checks.RouteCheck` on ``device``'s routing table. The
  draft's own example names neither the device nor the prefix: the task resolves them when it
  is read (:mod:`ani.netconfbench.resolve`; :meth:`ResultTestcase.target`), or refuses the
  testcase saying why.

Unknown keys in a testcase are refused too (a misspelt ``expected_ouput`` would otherwise
grade nothing), and so are an empty or whitespace-only ``name`` (when given) or
``expected_output`` (an empty regular expression matches any output: the testcase could not
fail). Every testcase keeps the mapping it was read from (:attr:`raw`): export
writes it back exactly as written, key order included.
"""

from __future__ import annotations

import copy
import json
import re
from ipaddress import IPv4Address, IPv4Network
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ani.errors import TaskFormatError
from ani.netconfbench.problems import NonBlankStr
from ani.netconfbench.resolve import Resolved
from ani.observer.checks import Check, CommandCheck, RouteCheck, require_verbs
from ani.observer.match import NCB_DEFAULT, OutputMatch

if TYPE_CHECKING:
    from ani.netconfbench.task import NcbTask

#: FRR's ``protocol`` values in ``show ip route json`` accepted by ``expected_result.protocol``
ROUTE_PROTOCOLS = ("kernel", "connected", "local", "static", "rip", "ospf", "isis", "bgp",
                   "eigrp", "nhrp", "table", "babel", "openfabric", "sharp", "pbr")

#: the first word a testcase command may start with (read-only commands)
READ_ONLY_VERBS = ("show", "ping", "traceroute")

#: the tags of the two shapes in validation paths (dropped from error messages)
SHAPE_TAGS = ("command-shape", "expected_result-shape")


class _Written(BaseModel):
    """A model that keeps the JSON mapping it was validated from (:attr:`raw`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_raw(cls, data: Any, handler: Any) -> Any:
        model = handler(data)
        if isinstance(data, _Written):
            raw = data.raw
        else:
            try:
                raw = json.loads(json.dumps(data, allow_nan=False))
            except (TypeError, ValueError):  # built in code with Python objects: their JSON form
                raw = model.model_dump(mode="json", exclude_unset=True)
        model._raw = raw
        return model

    @property
    def raw(self) -> dict[str, Any]:
        """A copy of the mapping this testcase was read from (what export writes back)."""
        return copy.deepcopy(self._raw)


class CommandTestcase(_Written):
    """The command shape (§4.3): ``commands`` run on ``device``; ``expected_output`` must be
    found in their output as ``match`` says (:class:`~ani.observer.match.OutputMatch`; none:
    the task's ``expected_output_match``, by default :data:`~ani.observer.match.NCB_DEFAULT`).
    Raises ``ValueError`` (via pydantic) for an empty ``commands``, a command that is not
    read-only, or (with a ``match`` of its own) a regex that does not compile under it."""

    name: NonBlankStr | None = None
    device: StrictStr
    commands: list[StrictStr] = Field(min_length=1)
    match: OutputMatch | None = None
    expected_output: StrictStr

    _task_match: OutputMatch | None = PrivateAttr(default=None)

    @field_validator("commands")
    @classmethod
    def _read_only(cls, commands: list[str]) -> list[str]:
        return require_verbs(commands, READ_ONLY_VERBS, "a read-only command (a testcase command starts "
                             f"with {', '.join(READ_ONLY_VERBS)})")

    @field_validator("expected_output")
    @classmethod
    def _regex(cls, pattern: str, info: ValidationInfo) -> str:
        if not pattern.strip():
            raise ValueError("must not be empty: an empty regular expression matches any output "
                             "(the testcase could not fail)")
        (info.data.get("match") or NCB_DEFAULT).compile(pattern)  # match is validated first
        return pattern

    def effective_match(self, default: OutputMatch | None = None) -> OutputMatch:
        """The testcase's ``match``, else the task's (set when the task was read), else
        ``default`` (:data:`~ani.observer.match.NCB_DEFAULT` when None)."""
        return self.match or self._task_match or default or NCB_DEFAULT

    def graded_raw(self) -> dict[str, Any]:
        """:attr:`raw` with the ``match`` it is graded with (the task's, when it has none)."""
        raw = self.raw
        if "match" not in raw and self._task_match is not None:
            raw["match"] = self._task_match.model_dump(mode="json")
        return raw


class ExpectedResult(BaseModel):
    """The keys an ``expected_result`` object may have (all others are refused).

    Attributes:
        device: the node whose routing table is read (``show ip route json``); when not given,
            resolved from the task (:mod:`ani.netconfbench.resolve`).
        prefix: the exact IPv4 prefix, ``A.B.C.D/L`` (or ``A.B.C.D M.M.M.M``, the IOS form);
            no host bits; when not given, resolved from the task as ``device`` is.
        present: ``true`` (default): a route to ``prefix`` is in the table; ``false``: none is
            (with ``protocol`` / ``next_hop`` / ``distance``: none that matches them).
        protocol: one of :data:`ROUTE_PROTOCOLS` (FRR's names: ``static``, ``ospf``, ``bgp``, ...).
        next_hop: an IPv4 next-hop address of the route.
        distance: the route's administrative distance (0-255): a backup static route of
            distance 100 is in the table without being selected, and matches.
        local_pref: the best BGP path's local preference.
        community: a community ``AA:NN`` the best BGP path carries.

    A route matches when one entry of the prefix (selected or not) has every attribute given.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    device: StrictStr | None = None
    prefix: IPv4Network | None = None
    present: StrictBool = True
    protocol: Literal[ROUTE_PROTOCOLS] | None = None  # type: ignore[valid-type]
    next_hop: IPv4Address | None = None
    distance: StrictInt | None = Field(default=None, ge=0, le=255)
    local_pref: StrictInt | None = Field(default=None, ge=0, le=4294967295)
    community: StrictStr | None = None

    @field_validator("prefix", mode="before")
    @classmethod
    def _ios_prefix(cls, value: Any) -> Any:
        if isinstance(value, str) and len(value.split()) == 2:
            addr, mask = value.split()
            try:
                return str(IPv4Network(f"{addr}/{mask}"))
            except ValueError:
                return value  # the IPv4Network validator reports it
        return value

    @field_validator("community")
    @classmethod
    def _community(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"\d{1,10}:\d{1,10}", value):
            raise ValueError(f"{value!r} is not a community AA:NN (two numbers, e.g. 65000:100)")
        return value

    @model_validator(mode="after")
    def _bgp_attrs_need_route(self) -> Any:
        if not self.present and (self.local_pref is not None or self.community is not None):
            raise ValueError("local_pref / community describe a present route: not with present: false")
        return self


class ResultTestcase(_Written):
    """The expected_result shape (§4.1): ``name`` and an :class:`ExpectedResult`. A device or
    prefix it does not give is resolved when the task is read (:meth:`target`)."""

    name: NonBlankStr
    expected_result: ExpectedResult

    _resolved: Resolved | None = PrivateAttr(default=None)

    @property
    def resolved(self) -> Resolved | None:
        """Where the device / prefix the testcase does not give came from (None: it gives both,
        or it was read without its task)."""
        return self._resolved

    def target(self) -> tuple[str, IPv4Network] | None:
        """``(device, prefix)`` graded: as written, else as resolved; None when unknown."""
        er = self.expected_result
        device = er.device if er.device is not None else (self._resolved.device if self._resolved else None)
        prefix = er.prefix if er.prefix is not None else (self._resolved.prefix if self._resolved else None)
        return (device, prefix) if device is not None and prefix is not None else None

    def graded_raw(self) -> dict[str, Any]:
        """:attr:`raw` with the resolved device and prefix written in (what is graded)."""
        raw = self.raw
        target = self.target()
        if target is not None and isinstance(raw.get("expected_result"), dict):
            raw["expected_result"].setdefault("device", target[0])
            raw["expected_result"].setdefault("prefix", str(target[1]))
        return raw


def _shape(value: Any) -> str:
    if isinstance(value, ResultTestcase) or (isinstance(value, dict) and "expected_result" in value):
        return SHAPE_TAGS[1]
    return SHAPE_TAGS[0]


#: one testcase of either shape (told apart by the ``expected_result`` key)
Testcase = Annotated[
    Union[Annotated[CommandTestcase, Tag(SHAPE_TAGS[0])], Annotated[ResultTestcase, Tag(SHAPE_TAGS[1])]],
    Discriminator(_shape),
]


def testcase_name(testcase: CommandTestcase | ResultTestcase, index: int) -> str:
    """The testcase's ``name``, or for an unnamed command testcase
    ``"testcase <index+1> (<device>: <first command>)"``."""
    if testcase.name:
        return testcase.name
    assert isinstance(testcase, CommandTestcase)
    return f"testcase {index + 1} ({testcase.device}: {testcase.commands[0]})"


_IOS_SHOW_ROUTE = re.compile(r"^(show ip route) (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)((?:\s.*)?)$", re.IGNORECASE)


def frr_command(command: str) -> str:
    """``command`` as FRR's vtysh takes it: the IOS mask form of ``show ip route`` (the draft's
    ``show ip route 203.0.113.0 255.255.255.252``, which vtysh calls an unknown command) as a
    prefix (``show ip route 203.0.113.0/30``); every other command as it is."""
    m = _IOS_SHOW_ROUTE.match(" ".join(command.split()))
    if m is None:
        return command
    try:
        prefix = IPv4Network(f"{m.group(2)}/{m.group(3)}", strict=False)
    except ValueError:
        return command
    return f"{m.group(1)} {prefix}{m.group(4)}"


def to_check(testcase: CommandTestcase | ResultTestcase, index: int, *, source: str = "",
             match: OutputMatch | None = None) -> Check:
    """The observer check of one testcase (``index``: its place in the task, for the default
    name and messages): a :class:`CommandCheck` (matched as
    :meth:`CommandTestcase.effective_match` says; ``match``: the default when neither the
    testcase nor its task sets one) or a :class:`RouteCheck` (on the resolved device and prefix
    when the testcase does not give them). Raises TaskFormatError (``"<source>:
    testcases[2].commands[0]: 'ping -f 10.0.0.1': ..."``) for a command the observer cannot run
    (a flooding ping), or an ``expected_result`` whose device / prefix is unknown (read without
    its task)."""
    name = testcase_name(testcase, index)
    where = f"{source}: " if source else ""
    if isinstance(testcase, CommandTestcase):
        try:
            return CommandCheck(name=name, router=testcase.device, commands=[frr_command(c) for c in testcase.commands],
                                expect=testcase.expected_output, match=testcase.effective_match(match))
        except ValidationError as exc:
            from ani.netconfbench.problems import validation_problems

            problems = validation_problems(exc, prefix=f"testcases[{index}]")
            raise TaskFormatError(where + "; ".join(p.replace(".expect:", ".expected_output:") for p in problems)) from None
    r = testcase.expected_result
    target = testcase.target()
    if target is None:
        raise TaskFormatError(f"{where}testcases[{index}].expected_result: no device / prefix (they are "
                              "resolved from the task's ground_truth_configs when the task file is read)")
    return RouteCheck(name=name, router=target[0], prefix=target[1], expect=r.present, protocol=r.protocol,
                      next_hop=r.next_hop, distance=r.distance, local_pref=r.local_pref, community=r.community)


def to_checks(task: NcbTask, *, source: str = "") -> list[Check]:
    """The task's testcases as observer checks, in order, named by the testcases' names
    (:func:`testcase_name`): what the observer evaluates as the hidden tests of the task.
    ``source`` (the task file) starts error messages. Raises TaskFormatError as
    :func:`to_check` does."""
    return [to_check(tc, i, source=source, match=task.expected_output_match) for i, tc in enumerate(task.testcases)]
