"""A pydantic-ai agent as an ani agent, for ``ani run`` and campaign files
(docs/frameworks.md, "Your framework agent in ani run and campaigns")::

    agent: {kind: "pydantic_ai_agent:make_agent", base_url: "http://127.0.0.1:8000/v1", model: qwen2.5-7b}
"""

from __future__ import annotations

import os
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ani.agents.framework import FrameworkAgent

INSTRUCTIONS = ("You are a network operations agent. Carry out the operator's request with the tools "
                "you are given, check your work with them, and answer with a short summary when done.")


def make_agent(base_url: str, model: str, api_key_env: str | None = None) -> FrameworkAgent:
    """An ani agent running a pydantic-ai ``Agent`` on a chat-completions endpoint.

    Args:
        base_url: the endpoint, up to ``/v1``.
        model: the model's name at the endpoint.
        api_key_env: the variable holding the key (None: no key; KeyError if it is not set).
    """
    provider = OpenAIProvider(base_url=base_url, api_key=os.environ[api_key_env] if api_key_env else "no-key")

    def build(tools: list[Any], task: Any) -> Agent:
        return Agent(OpenAIChatModel(model, provider=provider), tools=tools, instructions=INSTRUCTIONS)

    return FrameworkAgent("pydantic_ai", build, name="pydantic-ai")
