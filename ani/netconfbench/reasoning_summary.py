"""The agent's reasoning as the reasoning score embeds it (NetConfBench draft §3.1: "for ReAct
agents, the interleaved reasoning steps are first summarised by an auxiliary LLM").

    cfg = SummaryConfig.parse(spec_value)                   # None | "off" | False | {base_url, model, api_key_env, ...}
    s = reasoning_for_score(events, cfg, agent_config)      # ReasoningText(text, summary: SummaryInfo | None, note)

Which text (:func:`reasoning_for_score`)
    - No model text at all (the scripted agents): None, and no summary.
    - One model turn (``single-turn`` mode, or a run that submitted in its first reply): its
      text and its ``submit`` summary (:func:`ani.netconfbench.reasoning.reasoning_text`),
      embedded as is (``summary.method == "as-is"``).
    - More than one model turn (``react``, ``planner-executor``, a recovery reply): the
      interleaved steps (:func:`transcript`: each turn's text, each tool call as a short line,
      the submit summary) are summarised by one chat-completions request
      (``summary.method == "llm"``), by default to the run's own endpoint and model (the
      agent config's ``base_url``, ``model``, ``api_key_env``, ``seed``), temperature 0, the
      system prompt :data:`SUMMARY_PROMPT` (its sha256 in ``summary.prompt_sha256``).
    - When that request cannot be made or fails (the agent config names no endpoint, the key
      variable is unset, the endpoint is down, the reply has no text) or the summary is
      ``off``: the deterministic extractive summary (:func:`extractive_summary`,
      ``summary.method == "extractive"``), with ``summary.note`` saying why.

The extractive summary: the model's own text only (each turn's text and the submit
summary; tool calls and tool results left out), fenced code blocks and lines that repeat a tool
result verbatim (a "tool echo": a line that is a line of an ``agent_observation`` text)
dropped, cut into lines and sentences (wordllama's ``split_sentences``), exact repeats and near
duplicates (wordllama's ``deduplicate``, cosine >= :data:`DEDUP_THRESHOLD` with the reasoning
score's own model) dropped, the first of each kept, in order, joined with spaces.

Configuration (a campaign's ``reasoning_summary:``; ``ani run --reasoning-summary``)::

    reasoning_summary: off                 # never call a model: the extractive summary
    reasoning_summary:                     # another endpoint / model (unset keys: the agent's)
      base_url: http://127.0.0.1:8001/v1
      model: qwen2.5-7b-instruct
      api_key_env: SUMMARY_KEY             # unset: the agent's on its endpoint, else no key
      request_timeout_s: 60
      max_retries: 2
      max_tokens: 400

Errors: :meth:`SummaryConfig.parse` raises ConfigError naming the field. Nothing else here
raises for a failing endpoint: it falls back, and says so.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ani.errors import ConfigError

__all__ = ["DEDUP_THRESHOLD", "SUMMARY_PROMPT", "ReasoningText", "SummaryConfig", "SummaryInfo",
           "extractive_summary", "model_turns", "prompt_sha256", "reasoning_for_score", "summarise",
           "transcript"]

#: the summariser's system prompt (its sha256 is in every LLM summary's record)
SUMMARY_PROMPT = """\
You summarise the reasoning of an agent that configured a network of FRR routers. You are given \
its steps in order: the text of each of its turns, the tool calls it made (one short line each) \
and its final summary. Write the agent's reasoning as one paragraph of at most five sentences: \
what it found, what it changed on which device and why, and how it checked the result. Use the \
agent's own facts (devices, prefixes, protocols, values); add nothing it did not say or do; do \
not copy tool calls or configuration lines. Reply with the paragraph only."""

#: near-duplicate sentences of the extractive summary: cosine similarity at or above this
#: (wordllama's own default for ``deduplicate``)
DEDUP_THRESHOLD = 0.9
#: characters of one turn's text, of one tool call's arguments, and of the whole transcript
TURN_CHARS, CALL_CHARS, TRANSCRIPT_CHARS = 2000, 160, 24000

_FENCE = re.compile(r"```.*?(```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.S)


def prompt_sha256() -> str:
    """sha256 (hex) of :data:`SUMMARY_PROMPT` (UTF-8)."""
    return hashlib.sha256(SUMMARY_PROMPT.encode()).hexdigest()


class SummaryConfig(BaseModel):
    """How a multi-turn run's reasoning is summarised (module doc). Unset ``base_url`` /
    ``model`` are taken from the run's agent config.

    Attributes:
        enabled: False: never call a model (the extractive summary).
        base_url / model: the chat-completions endpoint and the model name.
        api_key_env: the NAME of the variable holding the key; unset: the agent's when the
            endpoint is the agent's, else no key.
        request_timeout_s: bound of the one request, seconds (each attempt).
        max_retries: extra attempts on HTTP 429 / 5xx / connection errors (the ``openai``
            client's own backoff).
        max_tokens: the summary's completion-token cap.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    base_url: str | None = None
    model: str | None = Field(None, min_length=1)
    api_key_env: str | None = None
    request_timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    max_tokens: int = Field(400, ge=16)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if value is None or value is True:
            return {}
        if value is False or (isinstance(value, str) and value.strip().lower() == "off"):
            return {"enabled": False}
        return value

    @classmethod
    def parse(cls, value: Any, where: str = "reasoning_summary") -> SummaryConfig:
        """From a spec value (None / True: the agent's endpoint; ``"off"`` / False; a mapping).
        Raises ConfigError ``"<where>.<field>: <message>"``."""
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            problems = "; ".join(
                f"{where}{''.join(f'.{p}' for p in e['loc'])}: "
                + ("unknown option" if e["type"] == "extra_forbidden" else e["msg"])
                for e in exc.errors())
            raise ConfigError(problems) from None

    def endpoint(self, agent_config: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
        """``({base_url, model, api_key_env, seed}, "")``, or ``(None, why not)``: this config's
        keys, the agent config's where unset (an agent of kind ``llm``, or any with
        ``base_url`` and ``model``)."""
        if not self.enabled:
            return None, "the summariser is off (reasoning_summary: off)"
        agent = dict(agent_config or {})
        base_url = self.base_url or agent.get("base_url")
        model = self.model or agent.get("model")
        if not base_url or not model:
            kind = agent.get("kind", "?")
            return None, f"no summariser endpoint (the agent, kind {kind}, has no base_url and model)"
        if self.api_key_env:
            key_env = self.api_key_env
        elif base_url == agent.get("base_url"):  # the agent's endpoint: its key (the LLM agent's default)
            key_env = agent.get("api_key_env", "OPENAI_API_KEY")
        else:
            key_env = None
        return {"base_url": str(base_url), "model": str(model), "api_key_env": key_env,
                "seed": agent.get("seed")}, ""


class SummaryInfo(BaseModel):
    """How the embedded text was obtained (``ReasoningScore.summary``).

    Attributes:
        method: ``as-is`` (one model turn), ``llm`` (summarised by a chat-completions request),
            ``extractive`` (the deterministic fallback, module doc).
        turns: the run's model turns.
        source_chars: characters of what was summarised (the transcript for ``llm``, the
            model's text for the others).
        model: the summariser model asked for (``llm``); served_model: the model the reply
            names; base_url: the endpoint (a password or query values as ``***``).
        prompt_sha256: sha256 of :data:`SUMMARY_PROMPT` (``llm``).
        prompt_tokens / completion_tokens: the summary request's usage (None: not reported).
        note: which was used and, for a fallback, why.
    """

    method: Literal["as-is", "llm", "extractive"]
    turns: int = 0
    source_chars: int = 0
    model: str | None = None
    served_model: str | None = None
    base_url: str | None = None
    prompt_sha256: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    note: str = ""


class ReasoningText(BaseModel):
    """What :func:`reasoning_for_score` gives: ``text`` (None: the agent wrote none) and how."""

    text: str | None = None
    summary: SummaryInfo | None = None


# -- the run's text --------------------------------------------------------------------------


def model_turns(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The run's ``agent_turn`` events, in order."""
    return [ev for ev in events if ev.get("event") == "agent_turn"]


def _clip(text: str, n: int) -> str:
    text = text.strip()
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def transcript(events: Iterable[Mapping[str, Any]]) -> str:
    """The interleaved steps the summariser reads: per model turn ``[turn N]`` (``[plan]``
    for a planning reply) and its text, then ``  call <tool>(<arguments>)`` per tool call
    (arguments cut at :data:`CALL_CHARS`), then ``[submit] <summary>``; tool results left
    out. Each turn's text cut at :data:`TURN_CHARS`, the whole at :data:`TRANSCRIPT_CHARS`
    (its start kept)."""
    lines: list[str] = []
    n = 0
    for ev in events:
        kind = ev.get("event")
        if kind == "agent_turn":
            n += 1
            text = _clip(_THINK.sub("", str(ev.get("content") or "")), TURN_CHARS)
            lines.append(f"[{'plan' if ev.get('plan') else f'turn {n}'}] {text}".rstrip())
            for tc in ev.get("tool_calls") or []:
                name = str(tc.get("name") or "?")
                if name == "submit":
                    continue
                args = " ".join(str(tc.get("arguments") or "").split())
                lines.append(f"  call {name}({_clip(args, CALL_CHARS)})")
        elif kind == "agent_action" and ev.get("action") == "submit" and str(ev.get("summary") or "").strip():
            lines.append(f"[submit] {' '.join(str(ev['summary']).split())}")
    out = "\n".join(lines)
    return out if len(out) <= TRANSCRIPT_CHARS else out[:TRANSCRIPT_CHARS] + "\n[... cut]"


def _echo_lines(events: Iterable[Mapping[str, Any]]) -> set[str]:
    out: set[str] = set()
    for ev in events:
        if ev.get("event") == "agent_observation":
            out.update(s for ln in str(ev.get("text") or "").splitlines() if (s := " ".join(ln.split())))
    return out


def extractive_summary(events: Iterable[Mapping[str, Any]]) -> str | None:
    """The deterministic summary of the model's own text (module doc); None when it wrote none.
    Pure but for the embedding model (wordllama, loaded once)."""
    from wordllama.algorithms.splitter import split_sentences

    from ani.netconfbench.reasoning import _model

    evs = list(events)
    echoes = _echo_lines(evs)
    texts = [str(ev.get("content") or "") for ev in model_turns(evs)]
    texts += [str(ev.get("summary") or "") for ev in evs
              if ev.get("event") == "agent_action" and ev.get("action") == "submit"]
    sentences: list[str] = []
    for raw in texts:
        text = _FENCE.sub("\n", _THINK.sub("", raw))
        for line in text.splitlines():
            body = " ".join(line.split())
            if not body or body in echoes:
                continue
            for s in split_sentences(body):
                if (s := s.strip()) and s not in sentences:
                    sentences.append(s)
    if not sentences:
        return None
    if len(sentences) > 1:
        sentences = [str(s) for s in _model().deduplicate(sentences, threshold=DEDUP_THRESHOLD)]
    return " ".join(sentences)


# -- the summary -----------------------------------------------------------------------------


def summarise(text: str, endpoint: Mapping[str, Any], cfg: SummaryConfig) -> tuple[str, dict[str, Any]]:
    """One chat-completions request: :data:`SUMMARY_PROMPT` and ``text`` (a :func:`transcript`)
    to ``endpoint`` (:meth:`SummaryConfig.endpoint`). Returns ``(summary, {served_model,
    prompt_tokens, completion_tokens})``. Raises ConfigError (the key variable is unset),
    ValueError (a reply without text), or what the ``openai`` client raises (after its
    retries), AniTimeout (no complete response within the bound)."""
    from openai import OpenAI

    from ani.llm_endpoint import ABANDON_GRACE_S, bounded, check_body, message_text, token_count

    env = endpoint.get("api_key_env")
    key = "no-key" if env is None else os.environ.get(str(env))
    if not key:
        raise ConfigError(f"environment variable {env} (the summariser's api_key_env) is not set")
    client = OpenAI(base_url=str(endpoint["base_url"]), api_key=key, timeout=cfg.request_timeout_s,
                    max_retries=cfg.max_retries)
    request: dict[str, Any] = {
        "model": str(endpoint["model"]), "temperature": 0.0, "max_tokens": cfg.max_tokens,
        "messages": [{"role": "system", "content": SUMMARY_PROMPT}, {"role": "user", "content": text}],
    }
    if endpoint.get("seed") is not None:
        request["seed"] = int(endpoint["seed"])
    # every attempt bounded, with the openai client's backoff (at most 8 s each) between them
    bound = (cfg.request_timeout_s + 8.0) * (cfg.max_retries + 1) + ABANDON_GRACE_S
    try:
        resp = check_body(bounded(lambda: client.chat.completions.create(**request), bound, client.close))
    finally:
        client.close()
    choices = getattr(resp, "choices", None) or []
    content = message_text(getattr(choices[0], "message", None)) if choices else None
    summary = " ".join(_THINK.sub("", content or "").split())
    if not summary:
        raise ValueError("the summariser's reply has no text")
    usage = getattr(resp, "usage", None)
    return summary, {"served_model": getattr(resp, "model", None) or None,
                     "prompt_tokens": token_count(getattr(usage, "prompt_tokens", None)),
                     "completion_tokens": token_count(getattr(usage, "completion_tokens", None))}


def reasoning_for_score(events: Iterable[Mapping[str, Any]], cfg: SummaryConfig | None = None,
                        agent_config: Mapping[str, Any] | None = None) -> ReasoningText:
    """The text the reasoning score embeds, and how it was obtained (module doc). ``cfg``
    None: the default (the agent's endpoint). Never raises for a failing endpoint."""
    from ani.llm_endpoint import endpoint_cause, redact_url
    from ani.netconfbench.reasoning import reasoning_text

    evs = list(events)
    cfg = cfg or SummaryConfig()
    whole = reasoning_text(evs)
    if whole is None:
        return ReasoningText()
    turns = len(model_turns(evs))
    if turns <= 1:
        return ReasoningText(text=whole, summary=SummaryInfo(
            method="as-is", turns=turns, source_chars=len(whole),
            note="one model turn: its reasoning embedded as is"))
    endpoint, why = cfg.endpoint(agent_config)
    if endpoint is not None:
        steps = transcript(evs)
        try:
            text, usage = summarise(steps, endpoint, cfg)
        except Exception as exc:  # noqa: BLE001 - a diagnostic: fall back, say why
            cause = str(exc) if isinstance(exc, (ConfigError, ValueError)) else endpoint_cause(
                exc, cfg.request_timeout_s, endpoint.get("api_key_env"))
            why = f"the summariser request to {redact_url(str(endpoint['base_url']))} failed: {cause}"
        else:
            return ReasoningText(text=text, summary=SummaryInfo(
                method="llm", turns=turns, source_chars=len(steps), model=str(endpoint["model"]),
                base_url=redact_url(str(endpoint["base_url"])), prompt_sha256=prompt_sha256(), **usage,
                note=f"{turns} model turns summarised by {endpoint['model']} (chat completions)"))
    text = extractive_summary(evs)
    return ReasoningText(text=text, summary=SummaryInfo(
        method="extractive", turns=turns, source_chars=len(whole),
        note=f"{turns} model turns, extractive summary: {why}"))
