"""Check models: what the observer verifies, as data (pydantic, discriminated by ``kind``).

Five kinds::

    reach        {kind: reach, src: blue1, dst: 198.18.12.10, expect: true}
                 ping from node ``src`` (host or router netns) to ``dst``; ``expect: false``
                 means the destination must NOT answer (isolation).
    bgp_session  {kind: bgp_session, router: e1, neighbor: 100.64.255.1}
                 ``router`` sees ``neighbor`` Established (``show bgp summary json``).
    loopback     {kind: loopback, router: e1, address: 100.64.255.2, source: 100.64.255.11}
                 ping from ``router`` to another router's loopback, sourced from ``source``
                 (its own loopback) when given.
    route        {kind: route, router: e2, prefix: 198.18.11.0/24, expect: true,
                  local_pref: 200, community: "64500:101"}
                 ``router``'s routing table has exactly ``prefix`` (``show ip route PREFIX
                 json``); ``expect: false`` means it must not. With ``local_pref`` or
                 ``community``, the best BGP path of the prefix (``show bgp ipv4 unicast
                 PREFIX json``) must carry that local preference / that community. With
                 ``protocol`` / ``next_hop`` / ``distance``, one entry of the prefix in the
                 table (selected or not) must have them all (with ``expect: false``: none may).
    command      {kind: command, router: r1, commands: ["show ip route 10.0.0.0/24"],
                  expect: "S>\\* 10\\.0\\.0\\.0/24"}
                 ``vtysh -c C1 -c C2 ...`` on ``router`` (``ping`` / ``traceroute``: bounded, in
                 its namespace); its output (all commands, in order) must hold ``expect`` as
                 ``match`` says (default ``re.search`` with ``re.MULTILINE``:
                 :mod:`ani.observer.match`). The NetConfBench testcase shape (:mod:`ani.netconfbench`).

Every check has a ``name`` (derived from its fields if not given) and an optional
``service`` tag saying which pre-existing service it protects (e.g. ``tenant:blue``,
``underlay``, ``bgp``), used to attribute damage.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from ani.errors import ConfigError
from ani.observer.match import LEGACY, OutputMatch
from ani.observer.probe import PROBE_VERBS, probe_argv
from ani.validation import format_validation_error


class _CheckBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    service: str | None = None

    def _default_name(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @model_validator(mode="after")
    def _named(self) -> Any:
        if not self.name:
            object.__setattr__(self, "name", self._default_name())
        return self

    @property
    def nodes(self) -> list[str]:
        """Lab nodes this check runs on."""
        raise NotImplementedError


class ReachCheck(_CheckBase):
    """Ping from node ``src`` to ``dst``; passes iff reachability equals ``expect``."""

    kind: Literal["reach"] = "reach"
    src: str
    dst: IPv4Address
    dst_node: str | None = Field(default=None, description="name of the node owning dst (for messages)")
    expect: bool = True

    def _default_name(self) -> str:
        target = f"{self.dst_node} ({self.dst})" if self.dst_node else str(self.dst)
        return f"reach {self.src} -> {target}" if self.expect else f"isolated {self.src} -/-> {target}"

    @property
    def nodes(self) -> list[str]:
        return [self.src]


class BgpSessionCheck(_CheckBase):
    """``router``'s BGP neighbor ``neighbor`` is Established."""

    kind: Literal["bgp_session"] = "bgp_session"
    router: str
    neighbor: IPv4Address

    def _default_name(self) -> str:
        return f"bgp {self.router} -> {self.neighbor} Established"

    @property
    def nodes(self) -> list[str]:
        return [self.router]


class LoopbackCheck(_CheckBase):
    """``router`` pings loopback ``address`` (from ``source`` if given)."""

    kind: Literal["loopback"] = "loopback"
    router: str
    address: IPv4Address
    source: IPv4Address | None = None

    def _default_name(self) -> str:
        return f"loopback {self.router} -> {self.address}"

    @property
    def nodes(self) -> list[str]:
        return [self.router]


class RouteCheck(_CheckBase):
    """``router`` has (``expect``) or has not (``expect=False``) a route to exactly ``prefix``;
    with ``local_pref`` / ``community`` its best BGP path must carry them (a present route only);
    with ``protocol`` (FRR's name: ``static``, ``ospf``, ``bgp``, ...), ``next_hop`` or
    ``distance`` (administrative distance), one entry of the prefix in ``show ip route json``,
    selected or not (a backup static route is not selected), must have every one given (with
    ``expect=False``: no entry may).

    Both outcomes are retried until they hold or the observer's bound passes (a withdrawal
    converges like an announcement does)."""

    kind: Literal["route"] = "route"
    router: str
    prefix: IPv4Network
    expect: bool = True
    local_pref: int | None = Field(default=None, ge=0, le=4294967295)
    community: str | None = Field(default=None, pattern=r"^\d{1,10}:\d{1,10}$", description="AA:NN, one community")
    protocol: str | None = Field(default=None, pattern=r"^[a-z0-9]+$", description="FRR's protocol name of the route entry")
    next_hop: IPv4Address | None = None
    distance: int | None = Field(default=None, ge=0, le=255, description="administrative distance")

    @model_validator(mode="after")
    def _attrs_need_route(self) -> Any:
        if not self.expect and (self.local_pref is not None or self.community is not None):
            raise ValueError("local_pref / community describe a present route: not with expect: false")
        return self

    def _default_name(self) -> str:
        attrs = "".join(f" {k} {v}" for k, v in self._entry_attrs())
        if not self.expect:
            return f"no route {self.router} {self.prefix}{attrs}"
        attrs += "".join(
            f" {k} {v}" for k, v in (("local-pref", self.local_pref), ("community", self.community)) if v is not None
        )
        return f"route {self.router} {self.prefix}{attrs}"

    @model_serializer(mode="wrap")
    def _without_unset_entry_attrs(self, handler: Any) -> Any:
        # the entry attributes came later: unset, they stay out of dumps (scenario files and
        # their hashes are as they were)
        data = handler(self)
        if isinstance(data, dict):
            for key in ("protocol", "next_hop", "distance"):
                if data.get(key) is None:
                    data.pop(key, None)
        return data

    def _entry_attrs(self) -> list[tuple[str, Any]]:
        return [(k, v) for k, v in (("protocol", self.protocol), ("via", self.next_hop), ("distance", self.distance))
                if v is not None]

    @property
    def nodes(self) -> list[str]:
        return [self.router]


def require_regex(pattern: str) -> str:
    """``pattern`` if it compiles as a Python regular expression; else raises ``ValueError``
    ``"not a valid regular expression: missing ), unterminated subpattern at position 3"``."""
    try:
        re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


def require_verbs(commands: list[str], verbs: tuple[str, ...], what: str) -> list[str]:
    """``commands`` if each is one line starting with one of ``verbs`` (case-insensitive);
    else raises ``ValueError`` ``"[i]: 'conf t' is not <what>"`` for the first that does not,
    or ``"[i]: ... holds a line break or another control character ..."`` (vtysh runs each
    line of one ``-c`` argument as a command of its own: ``"show version\nconfigure
    terminal\n..."`` would change the router while it is graded)."""
    for i, c in enumerate(commands):
        bad = next((ch for ch in c if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
        if bad is not None:
            raise ValueError(f"[{i}]: {c!r} holds a line break or another control character "
                             f"({bad!r}): one command per entry (vtysh would run each line)")
        words = c.split()
        if not words or words[0].lower() not in verbs:
            raise ValueError(f"[{i}]: {c!r} is not {what}")
    return commands


class CommandCheck(_CheckBase):
    """``commands`` on ``router``; passes iff their output (all of it, in order) holds
    ``expect`` as ``match`` says (:class:`~ani.observer.match.OutputMatch`; none: ``re.search``
    with ``re.MULTILINE``, :data:`~ani.observer.match.LEGACY`). Retried like every positive
    check. ``show`` commands run in one ``vtysh -c .. -c ..``; ``ping`` / ``traceroute`` run as
    the system programs in the router's namespace (what vtysh's would print), bounded in count
    and time, flooding options refused (:func:`ani.observer.probe.probe_argv`): vtysh's own do
    not stop. Any other command is refused: a check must not change the router."""

    kind: Literal["command"] = "command"
    router: str
    commands: list[str] = Field(min_length=1)
    match: OutputMatch | None = None
    expect: str

    @field_validator("commands")
    @classmethod
    def _read_only(cls, commands: list[str]) -> list[str]:
        require_verbs(commands, ("show", *PROBE_VERBS), "a show, ping or traceroute command (any other "
                      "command could change the router)")
        for i, c in enumerate(commands):
            if c.split()[0].lower() in PROBE_VERBS:
                try:
                    probe_argv(c)
                except ValueError as exc:
                    raise ValueError(f"[{i}]: {exc}") from None
        return commands

    @field_validator("expect")
    @classmethod
    def _compiles(cls, pattern: str, info: ValidationInfo) -> str:
        (info.data.get("match") or LEGACY).compile(pattern)  # match is validated before expect
        return pattern

    @model_serializer(mode="wrap")
    def _without_unset_match(self, handler: Any) -> Any:
        data = handler(self)  # no match: the dump (and a scenario's hash) is as before it existed
        if isinstance(data, dict) and data.get("match") is None:
            data.pop("match", None)
        return data

    def _default_name(self) -> str:
        return f"command {self.router}: {'; '.join(self.commands)} ~ /{self.expect}/"

    @property
    def nodes(self) -> list[str]:
        return [self.router]


Check = Annotated[Union[ReachCheck, BgpSessionCheck, LoopbackCheck, RouteCheck, CommandCheck], Field(discriminator="kind")]

_CHECKS = TypeAdapter(list[Check])


def parse_checks(data: Any, *, source: str = "checks") -> list[Check]:
    """Validate a list of mappings as checks. Raises ConfigError naming the bad item and field."""
    try:
        return _CHECKS.validate_python(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, prefix=source)) from None


def dump_checks(checks: list[Check]) -> list[dict[str, Any]]:
    """JSON-ready form of ``checks`` (inverse of :func:`parse_checks`)."""
    return [c.model_dump(mode="json") for c in checks]
