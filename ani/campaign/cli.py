"""``ani campaign ...`` and ``ani run`` (owned by the campaign module)."""

import typer

app = typer.Typer(no_args_is_help=True)


def run_one() -> None:
    """Placeholder until the campaign runner lands."""
    raise typer.Exit(2)
