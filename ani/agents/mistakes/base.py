"""A mistake kind: one plausible wrong version of a variant's correct change, as an object.

A kind module (``ani/agents/mistakes/<kind>.py``) defines one :class:`MistakeKind` subclass and
registers it with :func:`register_mistake`; the mistake-making agent (``agent: {kind: scripted,
mistakes: {...}}``), the campaign's known-answer measures and the docs iterate over
:func:`mistake_kinds`. Adding a kind = one module in this package (imported, so registered, by
``ani/agents/mistakes/__init__.py``) + its tests.

What a kind holds (each hook has a default, so a kind defines only what it has)::

    name      "near-miss-object"                      the kind's name (campaign files, records)
    layer     "device"                                "intent": a transformation of the typed
                                                      change list (expressible at every level);
                                                      "device": of the compiled device configs
                                                      (not at A3-T, which takes typed intents only)
    levels    frozenset({"a0", "a1", "a2", ...})      where it can be expressed (data)
    summary   "the change lands on a similarly ..."   one line for the docs and the report
    repeats   1                                       times the agent carries the change out
                                                      (2: a retry sends it again)
    applicable(ctx) -> bool                           the variant offers an object for it
    mistaken_changes(ctx) -> (changes, Made)          layer "intent": the typed changes to send
    mistaken_configs(ctx) -> (configs, Made)          layer "device": the mistaken intended
                                                      configs of the routers that change (may
                                                      hold routers the correct change leaves)
    expected_breaks(made, invariants, before) -> [name]  the baseline invariants (``Check.name``)
                                                      it is expected to break, computed from
                                                      their own fields and ``made``; called by
                                                      the campaign AFTER the run (the agent
                                                      never sees invariants)

``ctx`` is a :class:`MistakeContext`; configs are ``{router: ani.device.model.DeviceConfig}``
(firewall included). :func:`footprint` gives the ``Made.footprint`` of a pair of intended
configurations; :func:`config_lines` the lines of one configuration in the same form (what the
campaign compares with a router's final configuration).
"""

from __future__ import annotations

import random
from abc import ABC
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ani.errors import ConfigError
from ani.plugin_registry import Registry

if TYPE_CHECKING:
    from ani.agents.base import AgentTask
    from ani.device.model import DeviceConfig
    from ani.observer.checks import Check

Layer = Literal["intent", "device"]
#: every level of ani, in order
LEVELS: tuple[str, ...] = ("a0", "a1", "a2", "a3t", "a3r", "a4")
#: the levels a device-layer kind can be expressed at (A3-T takes typed intents only)
DEVICE_LEVELS: frozenset[str] = frozenset(LEVELS) - {"a3t"}


@dataclass(frozen=True)
class MistakeContext:
    """What a kind transforms (the agent's view only, never hidden tests or invariants).

    Attributes:
        task: the agent's task (request + attached files).
        level: one of :data:`LEVELS`, from the adapter's tools (as the scripted agent finds it).
        changes: the CORRECT typed changes (``ani.agents.scripted_tasks.changes_for``), in
            apply order (``ani.intents`` change mappings).
        before: every router's configuration, read through the level's tools.
        after: the CORRECT intended configurations of the routers that change.
        rng: seeded from the variant only (the same at every level): a kind's choices among
            equal candidates come from it, in a sorted order, so they are the same everywhere.
    """

    task: AgentTask
    level: str
    changes: list[dict[str, Any]]
    before: dict[str, DeviceConfig]
    after: dict[str, DeviceConfig]
    rng: random.Random


class Made(BaseModel):
    """The mistake an agent made: JSON in the run record and the trajectory.

    Attributes:
        kind: the kind's name.
        expressed: False when the level cannot express this kind: the agent did what the level
            lets it do (the correct change), and ``note`` says so.
        note: one sentence: what it changed, or why it could not.
        target: the object hit, e.g. ``{"router": "e2", "object": "ip prefix-list PL-RED seq
            20", "tenant": "red", "prefix": "198.18.20.0/24"}`` (keys per kind).
        footprint: ``{router: ["+ <line>", "- <line>"]}``: the lines the mistaken intended
            configuration has that the correct one has not (``+``) and the other way (``-``),
            in :func:`config_lines`' form; ``{}`` when not expressed.
        changes: the typed changes sent (intent-layer kinds), else ``[]``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    expressed: bool
    note: str
    target: dict[str, Any] = Field(default_factory=dict)
    footprint: dict[str, list[str]] = Field(default_factory=dict)
    changes: list[dict[str, Any]] = Field(default_factory=list)


class MistakeKind(ABC):  # noqa: B024 - every hook has a default; subclasses define what they have
    """Base of the mistake kinds (see the module doc). Subclasses set the class attributes and
    override the hooks of their layer; instances are stateless (one per kind, registered)."""

    name: ClassVar[str]
    layer: ClassVar[Layer]
    levels: ClassVar[frozenset[str]] = frozenset(LEVELS)
    summary: ClassVar[str] = ""
    repeats: ClassVar[int] = 1

    def expressible(self, level: str) -> bool:
        """Whether ``level`` can express this kind (``level in levels``)."""
        return level in self.levels

    def candidates(self, ctx: MistakeContext) -> list[Any] | None:
        """The objects of the variant this kind can hit (routers, change indexes, ...), in a
        fixed order for ``ctx.rng`` to choose from; None (the default): the kind needs none."""
        return None

    def applicable(self, ctx: MistakeContext) -> bool:
        """Whether the variant offers an object for this kind (default: :meth:`candidates` is
        None or not empty)."""
        found = self.candidates(ctx)
        return found is None or bool(found)

    def mistaken_changes(self, ctx: MistakeContext) -> tuple[list[dict[str, Any]], Made]:
        """Layer ``intent``: the typed changes to send instead of ``ctx.changes``, and the
        :class:`Made` saying so. Raises NotImplementedError for a device-layer kind."""
        raise NotImplementedError(f"mistake kind {self.name} is not an intent-layer kind")

    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        """Layer ``device``: the mistaken intended configurations of the routers that change
        (instead of ``ctx.after``), and the :class:`Made`. An intent-layer kind whose typed
        changes the compiler refuses gives its device form here (:func:`intent_configs`).
        Raises NotImplementedError when a kind has none."""
        raise NotImplementedError(f"mistake kind {self.name} is not a device-layer kind")

    def expected_breaks(self, made: Made, invariants: list[Check], before: dict[str, DeviceConfig]) -> list[str]:
        """The names of the baseline invariants (``Check.name``, in ``invariants``' order) this
        mistake is expected to break, from their own fields and ``made.target`` /
        ``made.footprint`` (``before``: the routers' configurations before the run). Default:
        the route and reach invariants that pass on ``before`` and fail on ``before`` with the
        footprint applied, as the configurations say
        (:func:`ani.agents.mistakes.effects.footprint_breaks`); none when not expressed."""
        if not made.expressed:
            return []
        from ani.agents.mistakes.effects import footprint_breaks

        return footprint_breaks(invariants, before, made.footprint)

    def unexpressed(self, ctx: MistakeContext, why: str) -> Made:
        """The :class:`Made` of a level that cannot express this kind: the correct change."""
        return Made(kind=self.name, expressed=False, note=why, changes=list(ctx.changes) if self.layer == "intent" else [])


def _load_kinds() -> None:
    """Import :mod:`ani.agents.mistakes` (its modules register the shipped kinds)."""
    import ani.agents.mistakes  # noqa: F401


#: the mistake kinds by name, one instance each (an :class:`ani.plugin_registry.Registry`,
#: sorted by name; entry-point group ``ani.mistakes``): an unknown name is a ConfigError, a
#: second class of one name a ValueError
MISTAKE_KINDS: Registry[MistakeKind] = Registry(
    "mistake kind", group="ani.mistakes", loader=_load_kinds, error=ConfigError, duplicate_error=ValueError,
    hint="pip install the package that provides it (entry-point group ani.mistakes)")


def register_mistake(cls: type[MistakeKind]) -> type[MistakeKind]:
    """Class decorator: register one instance of ``cls`` under ``cls.name``. Raises ValueError
    on a duplicate name, a layer other than ``intent`` / ``device``, or a level not in
    :data:`LEVELS`."""
    if cls.layer not in ("intent", "device"):
        raise ValueError(f"mistake kind {cls.name!r}: layer {cls.layer!r} is not 'intent' or 'device'")
    bad = sorted(set(cls.levels) - set(LEVELS))
    if bad:
        raise ValueError(f"mistake kind {cls.name!r}: unknown levels {bad}; known: {', '.join(LEVELS)}")
    MISTAKE_KINDS.register(cls.name, cls())
    return cls


def unregister_mistake(name: str) -> None:
    """Remove kind ``name`` (for tests that register a kind of their own). KeyError if unknown."""
    MISTAKE_KINDS.unregister(name)


def mistake_kinds() -> list[MistakeKind]:
    """Every registered kind, sorted by name."""
    return MISTAKE_KINDS.objects()


def get_mistake(name: str) -> MistakeKind:
    """The kind ``name``. Raises ConfigError naming the known kinds (and a close one)."""
    return MISTAKE_KINDS.load(name)


@dataclass(frozen=True)
class Mistaken:
    """A kind carried out on a context (:func:`carry_out`): what the agent sends.

    Attributes:
        changes: the typed changes to send (the correct ones for a device-layer kind).
        configs: the intended configurations of the routers that change (mistaken).
        made: the :class:`Made`, its ``footprint`` filled in.
        times: how many times the agent carries it out (the kind's ``repeats`` when expressed).
        by_configs: ``configs`` are sent as configurations (a device-layer kind, or an
            intent-layer kind's device form at a level that takes configurations), not what
            ``changes`` compile to.
    """

    changes: list[dict[str, Any]]
    configs: dict[str, DeviceConfig]
    made: Made
    times: int = 1
    by_configs: bool = False


def carry_out(kind: MistakeKind, ctx: MistakeContext) -> Mistaken:
    """``kind`` on ``ctx``: the changes and intended configurations to carry out through the
    level's tools, with the :class:`Made` whose ``footprint`` is that of those configurations
    against ``ctx.after`` (:func:`footprint`). A level the kind cannot express (``ctx.level``
    not in ``kind.levels``) gets the correct change and ``expressed=False``. An intent-layer
    kind's changes are compiled on ``ctx.before`` (``ani.intents.compile_changes``); when the
    compiler refuses them (:func:`intent_configs`), the kind's device form decides.

    Raises:
        IntentError: an intent-layer kind's changes do not compile and it has no device form.
    """
    if not kind.expressible(ctx.level):
        why = f"{kind.name} ({kind.layer} layer) cannot be expressed at {ctx.level}: the correct change was made"
        return Mistaken(list(ctx.changes), dict(ctx.after), kind.unexpressed(ctx, why))
    if kind.layer == "intent":
        changes, made = kind.mistaken_changes(ctx)
        configs, by_configs = intent_configs(kind, ctx, changes)
    else:
        changes = list(ctx.changes)
        configs, made = kind.mistaken_configs(ctx)
        by_configs = True
    if not made.expressed:
        return Mistaken(changes, configs, made)
    fp = footprint(ctx.before, ctx.after, configs)
    made = made.model_copy(update={"footprint": fp, "changes": changes if kind.layer == "intent" else []})
    return Mistaken(changes, configs, made, kind.repeats, by_configs)


#: the levels that take typed changes: a typed mistake is sent to them as it is, so what their
#: own validation refuses is the level preventing it
TYPED_LEVELS = frozenset({"a3t", "a4"})


def intent_configs(kind: MistakeKind, ctx: MistakeContext,
                   changes: list[dict[str, Any]]) -> tuple[dict[str, DeviceConfig], bool]:
    """``(intended configurations, by_configs)`` of an intent-layer kind's mistaken ``changes``:
    what they compile to on ``ctx.before``. The compiler refusing them (an overlapping prefix, a
    service that exists: what typed validation is for) is not the agent's to decide: at a level
    that takes typed changes (:data:`TYPED_LEVELS`) they are sent as they are (the level's
    ``plan`` / ``apply`` or commit refuses them) and the kind's device form
    (``mistaken_configs``) stands for what they would have done (the footprint); a level that
    takes configurations is sent that device form (``by_configs``), as an operator typing
    configuration would.

    Raises:
        IntentError: they do not compile and the kind has no device form (``mistaken_configs``
            not overridden).
    """
    from ani.intents import IntentError, compile_changes

    try:
        return compile_changes(changes, ctx.before).configs, False
    except IntentError:
        if type(kind).mistaken_configs is MistakeKind.mistaken_configs:
            raise
    configs, _ = kind.mistaken_configs(ctx)
    return configs, ctx.level not in TYPED_LEVELS


def edit_distance(a: str, b: str) -> int:
    """The Levenshtein distance of ``a`` and ``b`` (insertions, deletions, substitutions)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def nearest(name: str, names: list[str]) -> tuple[str, int] | None:
    """``(the name of names nearest to name by edit distance, that distance)``, ties broken
    by name; ``name`` itself left out; None when there is no other."""
    others = sorted(n for n in set(names) if n != name)
    if not others:
        return None
    best = min(others, key=lambda n: (edit_distance(name, n), n))
    return best, edit_distance(name, best)


# -- footprints ----------------------------------------------------------------------------------


def config_lines(cfg: DeviceConfig) -> list[str]:
    """The lines of one router's configuration, each with the headers of the blocks it is in:
    FRR (``"route-map RM-X permit 10 / match ip address prefix-list PL-X"``, as
    :func:`ani.device.apply.context_lines`), the unmodelled lines, then the firewall's
    (``"nft / table inet fw / set tenant_red / element 198.18.1.0/24"``, as
    :func:`ani.device.firewall.diff`)."""
    from ani.device import firewall as fwmod
    from ani.device.apply import context_lines
    from ani.device.render import render

    frr = context_lines(render(cfg.model_copy(update={"unmodelled": []})))
    fw = [ln[2:] for ln in fwmod.diff(None, cfg.firewall)]
    return [*frr, *cfg.unmodelled, *fw]


def footprint(before: dict[str, DeviceConfig], correct: dict[str, DeviceConfig],
              mistaken: dict[str, DeviceConfig]) -> dict[str, list[str]]:
    """``{router: ["- <line>", "+ <line>"]}``: per router of ``correct`` or ``mistaken`` (the
    intended configurations of the routers each changes; a router absent from one is as in
    ``before``), what the mistaken configuration has that the correct one has not (``+``) and
    the other way (``-``), lines as :func:`config_lines` (:func:`ani.device.apply.mismatch`).
    Routers without a difference are left out."""
    from ani.device.apply import mismatch

    out = {}
    for r in sorted(set(correct) | set(mistaken)):
        lines = mismatch(correct.get(r, before[r]).canonical(), mistaken.get(r, before[r]).canonical())
        if lines:
            out[r] = lines
    return out


def reached(fp: dict[str, list[str]], final: dict[str, DeviceConfig]) -> bool | None:
    """Whether a footprint is in the routers' final configurations: every ``+`` line of each
    router is in :func:`config_lines` of ``final[router]`` and no ``-`` line is. None when the
    footprint is empty or a router of it was not read."""
    if not fp or any(r not in final for r in fp):
        return None
    for r, lines in fp.items():
        have = set(config_lines(final[r]))
        for ln in lines:
            sign, text = ln[:1], ln[2:]
            if (sign == "+") != (text in have):
                return False
    return True
