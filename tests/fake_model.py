"""A scripted model that onboards the requested site at A3-T in every agent mode, served by the
fake chat-completions server (:mod:`chat_server`): for trying ``campaigns/agent-modes.yaml`` and
``campaigns/models.yaml`` without a model, and for their integration tests.

    .venv/bin/python tests/fake_model.py              # serves http://127.0.0.1:8000/v1 (the files' base_url)
    OPENAI_API_KEY=fake .venv/bin/ani campaign run campaigns/agent-modes.yaml --variants 1

How it answers one chat-completions request (:func:`onboard_model`):

- a planning request (``tool_choice: none``, planner-executor): a two-step plan as text;
- single-turn mode (its system prompt asks for exactly one reply): ``apply`` of the onboard
  intent of ``site.yaml`` and ``submit`` in one reply;
- otherwise ``apply`` until one was sent, then ``submit``.

Every reply reports usage (100 prompt, 10 completion tokens), so a run's tokens are 110 per turn.
Only the A3-T tools are known: at another level (no ``apply`` offered) it submits at once, so
``campaigns/level-sweep-llm.yaml`` runs against it too (A3-T onboards, the other cells fail
cleanly)::

    .venv/bin/ani campaign run campaigns/level-sweep-llm.yaml --variants 1 \
        --agent-option base_url=http://127.0.0.1:8000/v1 --agent-option model=fake

:func:`framework_model` (``--framework``) is the model of the framework agents'
examples (``examples/agents/``, docs/frameworks.md), which have no ``submit`` tool: it ends with
an answer (a text reply, or smolagents' ``final_answer`` tool when offered). At A3-T: ``apply``
of the onboard intent, ``list_services``, the answer (2 tool calls); at A1: ``get_topology``,
``get_running_config`` of the site's edge, ``list_snapshots`` of it, the answer (3 calls).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_server import ChatServer, call, reply  # noqa: E402

#: the usage each reply reports: (prompt, completion) tokens
USAGE = (100, 10)


def site_of(body: dict[str, Any]) -> dict[str, Any]:
    """The ``site.yaml`` attached to the first user message (the intent form of onboard-site)."""
    first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if isinstance(first_user, list):  # content parts (smolagents sends them)
        first_user = "\n".join(p.get("text", "") for p in first_user if isinstance(p, dict))
    m = re.search(r"Attached file site\.yaml:\n```\n(.*?)\n```", first_user, re.S)
    if not m:
        raise ValueError("the request carries no site.yaml (onboard-site in the intent form)")
    return yaml.safe_load(m.group(1))


def onboard_change(body: dict[str, Any]) -> dict[str, Any]:
    """The A3-T ``tenant-site`` onboard change of the requested site."""
    s = site_of(body)
    return {
        "type": "tenant-site", "action": "onboard", "tenant": s["tenant"], "site": s["site"],
        "edge": s["edge"], "interface": f"to-{s['site']}", "prefix": s["prefix"], "gateway": s["gateway"],
    }


def _applied(body: dict[str, Any]) -> bool:
    return any(
        tc["function"]["name"] == "apply"
        for m in body["messages"] if m["role"] == "assistant"
        for tc in (m.get("tool_calls") or [])
    )


def onboard_model(body: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request (see the module docstring)."""
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if body.get("tool_choice") == "none":
        return reply(content="1. apply the onboard intent of site.yaml\n2. submit", usage=USAGE)
    if "apply" not in tools:  # a level it does not know: it gives up at once (a clean failure)
        return reply(call("submit", {"summary": "cannot do this at this level"}, "c0"), usage=USAGE)
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    if "exactly one reply" in system:  # single-turn
        return reply(call("apply", {"changes": [onboard_change(body)]}, "c0"),
                     call("submit", {"summary": "onboarded"}, "c1"), usage=USAGE)
    if not _applied(body):
        return reply(call("apply", {"changes": [onboard_change(body)]}, "c0"), usage=USAGE)
    return reply(call("submit", {"summary": "onboarded"}, "c1"), usage=USAGE)


#: the text a framework agent's run ends with
ANSWER = "onboarded"


def _turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def _answer(tools: set[str]) -> dict[str, Any]:
    if "final_answer" in tools:  # smolagents ends a run with its final_answer tool
        return reply(call("final_answer", {"answer": ANSWER}, "cf"), usage=USAGE)
    return reply(content=ANSWER, usage=USAGE)


def framework_model(body: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request of a framework agent (see the module docstring)."""
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    turn = _turns(body)
    if "apply" in tools:
        script = [lambda: call("apply", {"changes": [onboard_change(body)]}, "c0"),
                  lambda: call("list_services", {}, "c1")]
    elif "update_config" in tools:
        edge = site_of(body)["edge"]
        script = [lambda: call("get_topology", {}, "c0"),
                  lambda: call("get_running_config", {"device": edge}, "c1"),
                  lambda: call("list_snapshots", {"device": edge}, "c2")]
    else:
        raise ValueError(f"neither an A1 nor an A3-T tool list: {sorted(tools)}")
    return reply(script[turn](), usage=USAGE) if turn < len(script) else _answer(tools)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    parser.add_argument("--framework", action="store_true",
                        help="the framework agents' model (framework_model), not the LLM agent's")
    args = parser.parse_args()
    server = ChatServer(responder=framework_model if args.framework else onboard_model, port=args.port)
    print(f"fake model at {server.url} (Ctrl-C stops it)", flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        for err in server.responder_errors:
            print(f"responder error: {err}", file=sys.stderr)


if __name__ == "__main__":
    main()
