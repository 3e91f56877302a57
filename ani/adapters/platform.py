"""Platform definitions as data (``adapters/<platform>.yaml``), loaded and compiled.

A platform file holds everything vendor-specific the A1 adapter needs: the scrapli 2.0 CLI
definition (prompts, modes), the failure indicators, the allowlist grammar of configuration
statements and read-only commands, the blocklist, and the snapshot/rollback commands. See
``adapters/README.md`` for the format.

    >>> p = load_platform("frr")                    # adapters/frr.yaml
    >>> p.scrapli_definition()                      # block-style YAML text for libscrapli
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ani.errors import ConfigError
from ani.resources import resolve
from ani.validation import load_yaml, validate_mapping

_TOKEN_RE = re.compile(r"<([A-Za-z][A-Za-z0-9_]*)>")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContextDef(_Model):
    """A configuration block (e.g. ``bgp`` for ``router bgp N``)."""

    parent: str | None = None
    label: str = ""
    exit_words: list[str] = Field(default_factory=lambda: ["exit"])
    #: statements of the parent block apply to this block too (FRR: ``router bgp`` statements
    #: such as ``network 10.0.0.0/8`` apply to ipv4 unicast), so walking up to the parent from
    #: here changes nothing; walking up from any other child block is refused by A1
    #: (:func:`ani.adapters.allowlist.plan_config`)
    parent_applies_here: bool = False


class StatementDef(_Model):
    """One allowlist entry (see the platform file header)."""

    pattern: str
    kind: Literal["cli", "nft", "exec"] = "cli"
    ctx: list[str] = Field(default_factory=lambda: ["global"])
    enters: str | None = None
    negatable: bool = False
    #: for a non-negatable statement whose negation FRR accepts only in a shorter form (e.g.
    #: ``description <text>``: FRR refuses ``no description <text>``, takes ``no description``):
    #: that accepted negation. A rule must allow it in the same blocks (checked at load time);
    #: ``no <pattern>`` is refused with a message naming it.
    negation: str | None = None
    destructive: bool = False

    @model_validator(mode="after")
    def _check_negation(self) -> StatementDef:
        if self.negation is not None and self.negatable:
            raise ValueError(f"{self.pattern!r}: 'negation' is for statements that are not negatable")
        return self


class BlockRule(_Model):
    pattern: str
    reason: str = "destructive command"


class SnapshotDef(_Model):
    frr_show: str = "show running-config"
    nft_list: list[str] = Field(default_factory=lambda: ["nft", "-s", "list", "ruleset"])


class RollbackDef(_Model):
    frr_reload: list[str]
    frr_reload_attempts: int = 2
    nft_restore: list[str] = Field(default_factory=lambda: ["nft", "-f", "-"])


class SanitiserDef(_Model):
    max_length: int = 512
    max_commands: int = 200
    refused_substrings: dict[str, str] = Field(default_factory=dict)
    refused_prefixes: dict[str, str] = Field(default_factory=dict)
    refused_words: list[str] = Field(default_factory=list)
    comment_prefixes: list[str] = Field(default_factory=list)


class PlatformDef(_Model):
    """The parsed platform file. Use :func:`load_platform` to get a compiled :class:`Platform`."""

    platform: str
    description: str = ""
    scrapli: dict[str, Any]
    exec_mode: str = "exec"
    config_mode: str = "configuration"
    failure_indicators: list[str]
    warning_patterns: list[str] = Field(default_factory=list)
    error_line_prefixes: list[str] = Field(default_factory=list)
    snapshot: SnapshotDef = Field(default_factory=SnapshotDef)
    rollback: RollbackDef
    sanitiser: SanitiserDef = Field(default_factory=SanitiserDef)
    tokens: dict[str, str] = Field(default_factory=dict)
    contexts: dict[str, ContextDef]
    config: list[StatementDef]
    show: list[StatementDef]
    blocklist: list[BlockRule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_refs(self) -> PlatformDef:
        if "global" not in self.contexts:
            raise ValueError("contexts: a 'global' context is required")
        for name, c in self.contexts.items():
            if c.parent is not None and c.parent not in self.contexts:
                raise ValueError(f"contexts.{name}.parent: unknown context {c.parent!r}")
        for i, st in enumerate(self.config):
            for c in st.ctx:
                if c not in self.contexts:
                    raise ValueError(f"config[{i}].ctx: unknown context {c!r} ({st.pattern!r})")
            if st.enters is not None and st.enters not in self.contexts:
                raise ValueError(f"config[{i}].enters: unknown context {st.enters!r}")
        return self


class CompiledStatement:
    """A grammar entry with its regex compiled (full match)."""

    def __init__(self, d: StatementDef, regex: re.Pattern[str], neg: re.Pattern[str] | None,
                 refused_neg: re.Pattern[str] | None = None) -> None:
        self.d = d
        self.regex = regex
        self.neg = neg
        #: ``no <pattern>`` when the rule names a shorter ``negation`` (FRR refuses this form)
        self.refused_neg = refused_neg

    def matches(self, command: str) -> bool:
        if self.regex.fullmatch(command):
            return True
        return bool(self.neg is not None and self.neg.fullmatch(command))


class Platform:
    """A compiled platform definition.

    Attributes:
        d: the validated :class:`PlatformDef`.
        config: compiled configuration statements, in file order.
        show: compiled read-only commands.
        warnings: compiled warning regexes.
        path: the file it came from.
    """

    def __init__(self, d: PlatformDef, path: Path | None = None) -> None:
        self.d = d
        self.path = path
        self._tokens = {k: self._expand(v, d.tokens, depth=0) for k, v in d.tokens.items()}
        self.config = [self._compile(s, i, "config") for i, s in enumerate(d.config)]
        self.show = [self._compile(s, i, "show") for i, s in enumerate(d.show)]
        for i, st in enumerate(self.config):
            if st.d.negation is not None:
                ok = [o for o in self.config if o.matches(st.d.negation) and set(o.d.ctx) >= set(st.d.ctx)]
                if not ok:
                    raise ConfigError(f"config[{i}].negation {st.d.negation!r} ({st.d.pattern!r}): no rule "
                                      f"allows it in {st.d.ctx}")
        self.warnings = [re.compile(p) for p in d.warning_patterns]

    @property
    def name(self) -> str:
        return self.d.platform

    @staticmethod
    def _expand(pattern: str, tokens: dict[str, str], depth: int) -> str:
        if depth > 10:
            raise ConfigError(f"tokens: recursion too deep expanding {pattern!r}")

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in tokens:
                raise ConfigError(f"unknown token <{name}> in pattern {pattern!r}")
            return "(?:" + Platform._expand(tokens[name], tokens, depth + 1) + ")"

        return _TOKEN_RE.sub(sub, pattern)

    def _compile(self, s: StatementDef, i: int, section: str) -> CompiledStatement:
        try:
            body = self._expand(s.pattern, self.d.tokens, 0)
            regex = re.compile(body)
            neg = re.compile("no " + body) if s.negatable else None
            refused_neg = re.compile("no " + body) if s.negation is not None else None
        except re.error as exc:
            raise ConfigError(f"{section}[{i}].pattern {s.pattern!r}: bad regex: {exc}") from exc
        return CompiledStatement(s, regex, neg, refused_neg)

    def scrapli_definition(self) -> str:
        """The scrapli 2.0 definition as block-style YAML text (failure indicators included)."""
        data = dict(self.d.scrapli)
        data["failure_indicators"] = list(self.d.failure_indicators)
        return "---\n" + "\n".join(_emit(data, 0)) + "\n"

    def match_show(self, command: str) -> CompiledStatement | None:
        """The first read-only command matching ``command`` (normalised), or None."""
        for st in self.show:
            if st.matches(command):
                return st
        return None


def _quote(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def _emit(node: object, indent: int) -> list[str]:
    """Block-style YAML with indented sequences and single-quoted scalars: the subset that
    libscrapli's YAML reader accepts (PyYAML's plain scalars and flow style are refused)."""
    pad = " " * indent
    out: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{k}:")
                out.extend(_emit(v, indent + 2))
            else:
                out.append(f"{pad}{k}: {_quote(v) if not isinstance(v, (dict, list)) else '[]'}")
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, (dict, list)):
                sub = _emit(item, indent + 2)
                out.append(f"{pad}- {sub[0].lstrip()}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_quote(item)}")
    return out


def _read(path: Path) -> PlatformDef:
    return validate_mapping(PlatformDef, load_yaml(path), source=str(path), what="platform file")


@lru_cache(maxsize=16)
def _load_cached(path_str: str, mtime: float) -> Platform:
    path = Path(path_str)
    return Platform(_read(path), path)


def platform_path(name_or_path: str | Path = "frr") -> Path:
    """Path of a platform file: an existing path, or the shipped ``adapters/<name>.yaml``."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return resolve(p)
    return resolve(f"adapters/{name_or_path}.yaml")


def load_platform(name_or_path: str | Path = "frr") -> Platform:
    """Load and compile a platform file (cached per path and mtime).

    Raises ConfigError naming the file and the bad field; FileNotFoundError if absent.
    """
    path = platform_path(name_or_path).resolve()
    return _load_cached(str(path), path.stat().st_mtime)
