"""Every option the user docs give an ``ani`` command exists on that command (issue 23 §6:
docs/campaigns.md named ``ani campaign run --progress``, which does not). The commands are
found in docs/*.md and README.md wherever ``ani <group> <command> ... --option`` is written (code
blocks and inline code; up to a ``#`` comment, ``|``, ``;`` or the end of the span), resolved
through the click tree of ``ani.cli:app``; a deprecated hidden name (``ani lab up --id``) is
refused too: the docs teach the one spelling."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from ani.cli import app

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"(?:^|[`\s/(])ani ((?:[a-z-]+ ?){1,2}[^`#|;&)]*)")
OPTION = re.compile(r"--[a-z][a-z0-9-]*")


ROOT_COMMAND = typer.main.get_command(app)


def _resolve(words: list[str]):  # noqa: ANN202 - (typer's click command, words used)
    cmd, i = ROOT_COMMAND, 0
    while i < len(words) and words[i] in getattr(cmd, "commands", {}):
        cmd, i = cmd.commands[words[i]], i + 1
    return cmd, i


def _options(cmd) -> set[str]:  # noqa: ANN001
    """The shown option names of ``cmd`` (a hidden, deprecated name is not what docs teach)."""
    return {o for p in cmd.params if not getattr(p, "hidden", False)
            for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))} | {"--help"}


def _uses() -> list[tuple[str, str, str]]:
    """``(where, command path, option)`` of every option written after an ``ani`` command."""
    out = []
    for f in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for m in COMMAND.finditer(line):
                words = m.group(1).split()
                cmd, i = _resolve(words)
                if i == 0:
                    continue
                for w in words[i:]:
                    if w == "--":  # ani lab exec NODE -- CMD: the rest is the command's
                        break
                    o = w.split("=")[0].rstrip(".,:")
                    if OPTION.fullmatch(o):
                        out.append((f"{f.relative_to(ROOT)}:{n}", " ".join(words[:i]), o))
    return out


def test_every_documented_option_exists():
    uses = _uses()
    assert len(uses) > 100  # the scan sees the docs' commands (127 when written)
    missing = [f"{where}: ani {path} {o}" for where, path, o in uses if o not in _options(_resolve(path.split())[0])]
    assert missing == []
