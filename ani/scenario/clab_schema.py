"""Containerlab's topology schema, vendored: ``ani/scenario/data/clab.schema.json``.

The file is ``schemas/clab.schema.json`` of github.com/srl-labs/containerlab (its commit, version
and BSD-3-Clause licence: ``ani/scenario/data/clab.schema.NOTICE.md``). It is JSON Schema
draft-07, but a few of its ``pattern`` values use Unicode property classes (``\\p{L}``,
``\\p{N}``: Go's and ECMAScript's regular expressions have them, Python's ``re`` does not), so
:func:`validator` checks ``pattern`` with the ``regex`` package, which has them.

    >>> from ani.scenario.clab_schema import schema_errors
    >>> schema_errors({"name": "x", "topology": {"nodes": {"r1": {"kind": "linux"}}}})
    []
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex
from jsonschema import Draft7Validator, validators
from jsonschema.exceptions import ValidationError, best_match

SCHEMA_PATH = Path(__file__).resolve().parent / "data" / "clab.schema.json"
#: the Containerlab commit the vendored schema comes from (see the NOTICE file)
SCHEMA_COMMIT = "39ff2b7ccce20f3c4610fcbd1fc030582f4499c1"
#: ``git describe`` of that commit: Containerlab 0.79.0 and two commits
SCHEMA_VERSION = "v0.79.0-2-g39ff2b7cc"


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not regex.search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


_ClabValidator = validators.extend(Draft7Validator, {"pattern": _pattern})


@lru_cache(maxsize=1)
def validator() -> Any:
    """A draft-07 validator of the vendored schema (``pattern`` with the ``regex`` package)."""
    return _ClabValidator(json.loads(SCHEMA_PATH.read_text()))


def schema_errors(doc: Any) -> list[str]:
    """Where ``doc`` (a parsed topology file) breaks Containerlab's schema: one line per error,
    ``"topology.nodes.r1.kind: 'bogus' is not one of [...]"`` (``$`` for the top), sorted; [] when
    it is valid. An error under a ``oneOf`` / ``anyOf`` (a node is ``null`` or a node-config) is
    said where it is (``jsonschema``'s ``best_match``), not as "not valid under any of the given
    schemas" of the node."""
    out = []
    for top in validator().iter_errors(doc):
        err = best_match([top])
        where = ".".join(str(p) for p in err.absolute_path) or "$"
        out.append(f"{where}: {err.message[:300]}")
    return sorted(out)
