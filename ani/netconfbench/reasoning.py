"""NetConfBench's reasoning score (draft §3.1, S_reasoning): the cosine similarity of the
embeddings of the agent's reasoning and of each ground-truth solution's reasoning, best over
solutions.

    text = reasoning_text(trajectory_events)            # None: the agent wrote no reasoning
    reasoning_score(text, [("expert-0001", "Add a static route ...")])
    # ReasoningScore(score=0.58, solution_id="expert-0001", model="wordllama 0.4.0.post1 l2_supercat dim 256",
    #                weights_sha256="64b47a2d...", per_solution={...}, note="")

The embedding model is pinned and offline: wordllama's ``l2_supercat`` at 256 dimensions, whose
weights (a 16 MB safetensors file) and tokenizer ship inside the wordllama wheel (no torch, no
download: ``disable_download=True``). wordllama 0.4.0.post1 looks for its bundled tokenizer in
``wordllama/tokenizer/`` while the wheel ships it in ``wordllama/tokenizers/``, so the package's
own folder is passed as the cache folder (``<pkg>/weights``, ``<pkg>/tokenizers``): the files
read are the wheel's. Every result carries :data:`MODEL_ID` (package version, config,
dimension) and the weight file's sha256: scores of different models are not comparable.
Measured here: ``import wordllama`` 0.38 s, loading the model 0.22 s, one score a few ms.

The agent's reasoning (:func:`reasoning_text`): the text of its model turns (``agent_turn``
``content``; a planner's plan is one of them), then its ``submit`` summary, in order, repeats
left out. A run of one model turn is embedded as is; the draft summarises a ReAct run's
interleaved steps with an auxiliary LLM first, and so does the runner for a run of more than
one model turn (:mod:`ani.netconfbench.reasoning_summary`: by default the run's own endpoint
and model; a deterministic extractive summary when there is none or it fails): how the text
was obtained is ``ReasoningScore.summary`` (method, summariser model, prompt sha256), said in
``note`` too. An agent that wrote nothing (the scripted agents) has no reasoning score:
``None``, with the reason in ``note``. A solution without reasoning is not scored against.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ani.netconfbench.reasoning_summary import SummaryInfo

__all__ = ["MODEL_CONFIG", "MODEL_DIM", "ReasoningScore", "model_id", "reasoning_score",
           "reasoning_text", "weights_sha256"]

#: the wordllama model config and dimension used (pinned)
MODEL_CONFIG = "l2_supercat"
MODEL_DIM = 256


class ReasoningScore(BaseModel):
    """The reasoning score of a run.

    Attributes:
        score: the best cosine similarity over the solutions, in [-1, 1] (in practice [0, 1]);
            None when it could not be computed (``note`` says why).
        solution_id: the best-matching solution (None with ``score``).
        model: :func:`model_id`; weights_sha256: sha256 of the weight file embedded with.
        per_solution: ``{solution_id: similarity}``.
        summary: how the embedded text was obtained (as is, an LLM summary with its model and
            prompt sha256, or the extractive fallback); None: not given (no text, or scored
            from a text directly).
        note: which text was embedded (``summary.note``) and why there is no score, ``; ``
            between ('' when neither).
    """

    score: float | None = None
    solution_id: str | None = None
    model: str
    weights_sha256: str
    per_solution: dict[str, float] = Field(default_factory=dict)
    summary: SummaryInfo | None = None
    note: str = ""


def _import_wordllama() -> Any:
    """``import wordllama`` without its side effect on logging: wordllama 0.4 calls
    ``logging.basicConfig(level=INFO)`` when imported, which gave the root logger a stderr
    handler and sent every later INFO record of the process there (a campaign printed
    ncclient's whole NETCONF messages after the first run's reasoning score). The root
    logger's handlers and level are put back as they were."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
        import wordllama.inference  # noqa: F401 - its basicConfig too, now rather than later
    finally:
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)
    return wordllama


def _package_dir() -> Path:
    return Path(_import_wordllama().__file__).parent


def weights_path() -> Path:
    """The bundled weight file (``<wordllama>/weights/l2_supercat_256.safetensors``)."""
    return _package_dir() / "weights" / f"{MODEL_CONFIG}_{MODEL_DIM}.safetensors"


@functools.cache
def weights_sha256() -> str:
    """sha256 (hex) of :func:`weights_path`'s bytes. Raises FileNotFoundError if the wheel
    does not ship it."""
    return hashlib.sha256(weights_path().read_bytes()).hexdigest()


@functools.cache
def model_id() -> str:
    """``"wordllama <version> l2_supercat dim 256"``."""
    from importlib.metadata import version

    return f"wordllama {version('wordllama')} {MODEL_CONFIG} dim {MODEL_DIM}"


@functools.cache
def _model() -> Any:
    WordLlama = _import_wordllama().WordLlama

    return WordLlama.load(MODEL_CONFIG, dim=MODEL_DIM, disable_download=True, cache_dir=_package_dir())


def reasoning_text(events: Iterable[Mapping[str, Any]]) -> str | None:
    """The agent's reasoning from its trajectory events (module doc), or None if it wrote none."""
    parts: list[str] = []
    for ev in events:
        kind = ev.get("event")
        text = None
        if kind == "agent_turn":
            text = ev.get("content")
        elif kind == "agent_action" and ev.get("action") == "submit":
            text = ev.get("summary")
        if isinstance(text, str) and text.strip() and text.strip() not in parts:
            parts.append(text.strip())
    return "\n".join(parts) or None


def _cosine(a: Any, b: Any) -> float:
    import numpy as np

    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return 0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb))


def reasoning_score(text: str | None, solutions: Sequence[tuple[str, str]],
                    summary: SummaryInfo | None = None) -> ReasoningScore:
    """S_reasoning of ``text`` against ``solutions`` (``(solution_id, reasoning)``): the best
    cosine similarity (the first on a tie). ``score`` None (with ``note``) when ``text`` is
    empty or no solution has reasoning. ``summary``: how ``text`` was obtained
    (:func:`ani.netconfbench.reasoning_summary.reasoning_for_score`), kept and said in
    ``note``. Raises FileNotFoundError if the bundled weights are missing (a broken wordllama
    install)."""
    said = [summary.note] if summary is not None and summary.note else []
    base = {"model": model_id(), "weights_sha256": weights_sha256(), "summary": summary}
    if not text or not text.strip():
        return ReasoningScore(**base, note="; ".join([*said, "the agent wrote no reasoning text"]))
    scored = [(sid, r) for sid, r in solutions if isinstance(r, str) and r.strip()]
    if not scored:
        return ReasoningScore(**base, note="; ".join([*said, "no solution has reasoning to compare with"]))
    vecs = _model().embed([text, *(r for _, r in scored)], norm=False)
    per = {sid: round(_cosine(vecs[0], v), 6) for (sid, _), v in zip(scored, vecs[1:], strict=True)}
    best = max(per, key=lambda s: per[s])  # max keeps the first of equal values
    return ReasoningScore(**base, score=per[best], solution_id=best, per_solution=per, note="; ".join(said))
