"""Write the JSON Schema of every service type to ``intents/schemas/<type>.json``.

``python -m ani.intents.export [DIR]`` (default: ``intents/schemas`` of the repository). The
format is stable (sorted keys, 2-space indent, trailing newline), so an unchanged model gives
byte-identical files; ``tests/unit/test_intents_schemas.py`` checks the files are current.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ani.intents.models import SERVICE_TYPES, type_schema

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "intents" / "schemas"


def schema_texts() -> dict[str, str]:
    """``{"<type>.json": text}`` for every service type."""
    return {f"{t}.json": json.dumps(type_schema(t), indent=2, sort_keys=True) + "\n" for t in SERVICE_TYPES}


def export(directory: Path = DEFAULT_DIR) -> list[Path]:
    """Write the schema files into ``directory``; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name, text in schema_texts().items():
        p = directory / name
        p.write_text(text)
        out.append(p)
    return out


if __name__ == "__main__":
    for path in export(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR):
        print(path)
