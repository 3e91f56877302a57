"""A LangChain agent (``create_agent``, LangGraph underneath) as an ani agent, for ``ani run``
and campaign files (docs/frameworks.md, "Your framework agent in ani run and campaigns")::

    agent: {kind: "langchain_agent:make_agent", base_url: "http://127.0.0.1:8000/v1", model: qwen2.5-7b}

Needs ``pip install 'ani-sdk[langchain]'`` (langchain, langchain-openai).
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI

from ani.agents.framework import FrameworkAgent

INSTRUCTIONS = ("You are a network operations agent. Carry out the operator's request with the tools "
                "you are given, check your work with them, and answer with a short summary when done.")


def make_agent(base_url: str, model: str, api_key_env: str | None = None) -> FrameworkAgent:
    """An ani agent running a LangChain ``create_agent`` on a chat-completions endpoint.

    Args:
        base_url: the endpoint, up to ``/v1``.
        model: the model's name at the endpoint.
        api_key_env: the variable holding the key (None: no key; KeyError if it is not set).
    """
    key = os.environ[api_key_env] if api_key_env else "no-key"

    def build(tools: list[Any], task: Any) -> Any:
        chat = ChatOpenAI(model=model, base_url=base_url, api_key=key, max_retries=0)
        return create_agent(chat, tools, system_prompt=INSTRUCTIONS)

    return FrameworkAgent("langchain", build, name="langchain")
