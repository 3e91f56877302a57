"""NetConfBench's command score (draft §3.1, S_command): the commands a run applied against each
ground-truth solution's, with wildcards for free identifiers; precision, recall, F1, best over
solutions.

    changes = applied_changes(initial, final)              # {router: ["+ router bgp 1 / network ...", ...]}
    want = solution_changes(initial, solution["configs"])  # the same, for the solution
    command_score(changes, [(solution_id, want), ...])     # CommandScore, best F1 over solutions

How it is computed (one diff code path, :func:`ani.device.changes.config_changes`)
    1. The run's applied commands on a router are the hier-config difference of its initial
       against its final running configuration (both read out of band, parsed into the device
       model): ``+ <block> / <line>`` for each leaf line only the final has, ``- <block> /
       <line>`` for each only the initial has (a removal: the ``no`` form the agent sent).
    2. A solution's commands are the *same* difference, initial -> the solution's end state:
       the solution's command list (as typed in configuration mode: flat, or indented; with or
       without ``configure terminal`` / ``exit`` / ``end``) made into an indented FRR text
       as vtysh would enter it and merged onto the initial configuration with hier-config
       (:func:`ani.device.commands.merge_solution`, the scripted agent's and the
       observer's reading too: a block entered twice is one block, a ``no`` line removes what
       it names; Cisco mask spellings of ``ip route`` / OSPF ``network`` made prefixes), and
       parsed back into the device model, which normalises the spellings FRR accepts and
       prints differently (BGP ipv4-unicast statements under ``router bgp``, ``router-id``
       under ``router ospf``) the way the run's final configuration was normalised.
    3. Every command is prefixed with its router (``"r1: + ip route ..."``) and its free
       identifiers are replaced by wildcards (:func:`wildcard`): prefix-list, route-map, ACL,
       community-list, as-path list, distribute/filter-list names, and sequence numbers
       (prefix-list ``seq``, route-map entry numbers). The match is of multisets of the
       wildcarded commands.
    4. precision = matched / applied, recall = matched / the solution's, F1 their harmonic
       mean; the reported score is the solution with the best F1 (the first on a tie), with
       every solution's F1 kept (``per_solution``).
    5. Cross-check (``crosscheck``, filled by :func:`ani.netconfbench.scoring.score_run`):
       FRR's own ``frr-reload.py --test`` run on the same initial and final configurations
       per router, its lines to add and delete compared with step 1's changes
       (:mod:`ani.netconfbench.reload_check`): ``{router: {agree, only_hier, only_frr}}``.
       The score itself is step 1's; the cross-check shows where the two diffs differ (e.g. a
       ``no ...`` line added inside an existing block, which hier-config's difference skips).

Edge cases: a run that applied nothing against a solution that changes something scores
precision 0, recall 0, F1 0; a solution that changes nothing (its lines are all in the initial
configuration) scores recall 1 and, against a run that applied nothing, F1 1; F1 is 0 when
precision + recall is 0.

Why hier-config, not ciscoconfparse (which the draft names): hier-config is already the
project's FRR diff (``ani.observer.changes``, the scripted agent's remediation) with an FRR
driver, and the same tree merges a solution's lines onto a configuration; ciscoconfparse 1.9 pins ``hier_config==2.2.3`` (ciscoconfparse2: ``==2.3.1``), which
conflicts with the hier-config 3 the project runs, is GPL-3.0 (the project is Apache-2.0), and
would make a second diff code path.

Limits (said): wildcards are per kind and not bound across lines (a run that names its
prefix-list ``A`` in one line and ``B`` in the next matches a solution that uses one name
twice); peer-group names and interface descriptions are literal; nftables commands of a
solution are not modelled (FRR tasks express filtering with prefix-lists and route-maps).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ani.device.commands import frr_spellings  # its home is the device layer
from ani.netconfbench.reload_check import RouterCrosscheck

__all__ = ["CommandScore", "applied_changes", "command_score", "solution_changes", "solution_end_state",
           "wildcard"]


class CommandScore(BaseModel):
    """The command score of a run against its best-matching solution.

    Attributes:
        precision / recall / f1: in [0, 1] (module doc, step 4).
        solution_id: the best-matching solution's ``solution_id``.
        applied: the run's commands, ``"<router>: + <block> / <line>"`` (lab names).
        unmatched: those of ``applied`` the best solution does not have (wildcards applied).
        missing: the best solution's commands the run did not apply.
        per_solution: ``{solution_id: F1}`` for every solution scored.
        crosscheck: ``{router: RouterCrosscheck}`` (module doc, step 5); None: not run
            (``crosscheck_note`` says why).
        crosscheck_note: frr-reload missing, or the routers where it disagrees or failed ('': none).
    """

    precision: float
    recall: float
    f1: float
    solution_id: str
    applied: list[str] = Field(default_factory=list)
    unmatched: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    per_solution: dict[str, float] = Field(default_factory=dict)
    crosscheck: dict[str, RouterCrosscheck] | None = None
    crosscheck_note: str = ""


#: (pattern, replacement) applied in order to each command (module doc, step 3)
_WILDCARDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\broute-map \S+ (permit|deny) \d+\b"), r"route-map <name> \1 <seq>"),
    (re.compile(r"\broute-map \S+"), "route-map <name>"),
    (re.compile(r"\bprefix-list \S+"), "prefix-list <name>"),
    (re.compile(r"\bcommunity-list (standard |expanded )?\S+"), r"community-list \1<name>"),
    (re.compile(r"\baccess-list \S+"), "access-list <name>"),
    (re.compile(r"\bmatch ip address (?!prefix-list )\S+"), "match ip address <name>"),
    (re.compile(r"\bmatch (community|as-path|large-community) \S+"), r"match \1 <name>"),
    (re.compile(r"\b(distribute-list|filter-list) (?!prefix )\S+"), r"\1 <name>"),
    (re.compile(r"\bseq \d+\b"), "seq <seq>"),
)


def wildcard(command: str) -> str:
    """``command`` with its free identifiers replaced (module doc, step 3)::

        >>> wildcard("+ route-map DENY-X deny 10 / match ip address prefix-list BLOCK")
        '+ route-map <name> deny <seq> / match ip address prefix-list <name>'
    """
    out = " ".join(command.split())
    for pattern, repl in _WILDCARDS:
        out = pattern.sub(repl, out)
    return out


_norm_lines = frr_spellings


def applied_changes(initial: Mapping[str, Any], final: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{router: config_changes(initial, final)}`` for the routers both have (module doc,
    step 1); a router without changes maps to []. Pure."""
    from ani.device.changes import config_changes

    return {r: config_changes(initial[r], final[r]) for r in initial if r in final}


def solution_end_state(initial: Mapping[str, Any], configs: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """``{router: DeviceConfig}``: the solution's routers with its lines merged onto their
    initial configuration (``initial``: ``{router: DeviceConfig}``, lab names; ``configs``:
    the solution's ``{router: [command, ...]}`` in lab names), module doc step 2; the routers
    it does not name are left out. Raises KeyError naming a router of the solution the initial
    configurations do not have, ValueError when a router's end state does not parse."""
    from ani.device.commands import config_lines, merge_solution

    out: dict[str, Any] = {}
    for router, lines in configs.items():
        if router not in initial:
            raise KeyError(f"solution router {router!r} is not a router of the run "
                           f"(known: {', '.join(sorted(initial))})")
        out[router] = merge_solution(initial[router], config_lines(_norm_lines(list(lines))), router=router, strict=False)
    return out


def solution_changes(initial: Mapping[str, Any], configs: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The changes a solution makes on the initial configurations (:func:`solution_end_state`'s
    arguments and errors), module doc step 2."""
    from ani.device.changes import config_changes

    return {r: config_changes(initial[r], end) for r, end in solution_end_state(initial, configs).items()}


def _flat(changes: Mapping[str, Sequence[str]]) -> list[str]:
    return [f"{r}: {c}" for r, cs in changes.items() for c in cs]


def _prf(applied: list[str], wanted: list[str]) -> tuple[float, float, float, list[str], list[str]]:
    a = [wildcard(c) for c in applied]
    w = Counter(wildcard(c) for c in wanted)
    left = Counter(w)
    matched, unmatched = 0, []
    for orig, key in zip(applied, a, strict=True):
        if left[key] > 0:
            left[key] -= 1
            matched += 1
        else:
            unmatched.append(orig)
    missing_keys = Counter(left)
    missing = []
    for c in wanted:
        k = wildcard(c)
        if missing_keys[k] > 0:
            missing_keys[k] -= 1
            missing.append(c)
    if not wanted:
        recall = 1.0
        precision = 1.0 if not applied else 0.0
    else:
        recall = matched / len(wanted)
        precision = matched / len(applied) if applied else 0.0
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1, unmatched, missing


def command_score(applied: Mapping[str, Sequence[str]],
                  solutions: Sequence[tuple[str, Mapping[str, Sequence[str]]]]) -> CommandScore | None:
    """The run's ``applied`` changes (``{router: [change]}``) against each solution's
    (``(solution_id, {router: [change]})``, from :func:`solution_changes`): the best F1 (module
    doc, step 4); None when there is no solution. Pure."""
    if not solutions:
        return None
    flat = _flat(applied)
    best: CommandScore | None = None
    per: dict[str, float] = {}
    for sid, changes in solutions:
        p, r, f, unmatched, missing = _prf(flat, _flat(changes))
        per[sid] = round(f, 6)
        if best is None or f > best.f1:
            best = CommandScore(precision=p, recall=r, f1=f, solution_id=sid, applied=flat,
                                unmatched=unmatched, missing=missing)
    assert best is not None
    return best.model_copy(update={"per_solution": per})
