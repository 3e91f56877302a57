"""An openai-agents agent as an ani agent, for ``ani run`` and campaign files
(docs/frameworks.md, "Your framework agent in ani run and campaigns")::

    agent: {kind: "openai_agents_agent:make_agent", base_url: "http://127.0.0.1:8000/v1", model: qwen2.5-7b}

The model speaks chat completions (``OpenAIChatCompletionsModel``), which every OpenAI-compatible
server has; the Responses API is OpenAI's own.
"""

from __future__ import annotations

import os
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel
from openai import AsyncOpenAI

from ani.agents.framework import FrameworkAgent

INSTRUCTIONS = ("You are a network operations agent. Carry out the operator's request with the tools "
                "you are given, check your work with them, and answer with a short summary when done.")


def make_agent(base_url: str, model: str, api_key_env: str | None = None) -> FrameworkAgent:
    """An ani agent running an openai-agents ``Agent`` on a chat-completions endpoint.

    Args:
        base_url: the endpoint, up to ``/v1``.
        model: the model's name at the endpoint.
        api_key_env: the variable holding the key (None: no key; KeyError if it is not set).
    """
    key = os.environ[api_key_env] if api_key_env else "no-key"

    def build(tools: list[Any], task: Any) -> Agent:
        client = AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0)  # one per run: its own event loop
        return Agent(name="netops", instructions=INSTRUCTIONS, tools=tools,
                     model=OpenAIChatCompletionsModel(model=model, openai_client=client))

    return FrameworkAgent("openai_agents", build, name="openai-agents")
