"""What every command that acts on a lab shares: which lab (:func:`_pick`: the one named, or the
only one running), how a command fails (:func:`_fail`: one red line on stderr, exit 2 for bad
input, 1 otherwise), the ``--prefix`` check. ``ani lab`` (:mod:`ani.cli_lab`), ``ani mcp serve``
and ``ani scenario`` use them.
"""

from __future__ import annotations

import typer
from rich.markup import escape

from ani.console import consoles
from ani.errors import AniError, ConfigError, LabNotFound, UnknownNode

console, err_console = consoles()


def _fail(exc: BaseException | str, code: int | None = None) -> typer.Exit:
    if code is None:
        code = 2 if isinstance(exc, ConfigError | LabNotFound | UnknownNode) else 1
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
    return typer.Exit(code)


#: the --prefix option's help (ani lab up)
PREFIX_HELP = "a label to find the lab by (ani lab status --prefix P); letters, digits, . _ + -"


def _checked_prefix(prefix: str | None) -> str | None:
    """``prefix`` (None: not given); exits 2 naming the rule if it is not a lab prefix."""
    from ani.lab.state import check_prefix

    try:
        return check_prefix(prefix)
    except AniError as exc:
        raise _fail(exc) from None


#: what a command says when several labs run and none was named (its own usage, see _pick)
PICK_HINT = "name one with --lab ID"


def _pick(lab_id: str | None, hint: str = PICK_HINT) -> str:
    """The lab to act on: ``lab_id``, or the only lab (the only detached one if several).

    When the id was left out and more than one lab exists, the lab chosen is said on stderr in
    one line (``ani: lab nu1 (the only detached one of 5 labs; name it with --lab/ID)``): on a
    shared machine a command must not act on a lab without saying which.

    Args:
        lab_id: the id the user gave, or None.
        hint: how the *calling* command names a lab, shown when several labs run, e.g.
            ``"name one: ani lab down ID"``; the default fits any command with ``--lab``.

    Raises:
        typer.Exit: code 2 after one line on stderr: no lab runs, or several run and none was
            named (``2 labs are running (a, b): <hint>``).
    """
    from ani.lab.lab import Lab

    if lab_id:
        return lab_id
    labs = Lab.list_labs()
    total = len(labs)
    if total > 1:
        detached = [e for e in labs if e["detached"]]
        labs = detached if len(detached) == 1 else labs
    if len(labs) == 1:
        chosen = str(labs[0]["id"])
        if total > 1:
            err_console.print(f"ani: lab {escape(chosen)} (the only detached one of {total} labs; "
                              "name it with --lab/ID)", soft_wrap=True, highlight=False)
        return chosen
    if not labs:
        raise _fail(LabNotFound("no lab is running (start one with: ani lab up FILE)"))
    ids = ", ".join(str(e["id"]) for e in labs)
    raise _fail(f"{len(labs)} labs are running ({ids}): {hint}", 2)
