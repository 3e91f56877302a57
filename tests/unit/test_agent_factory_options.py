"""create_agent checks options against the kind's factory signature and names a wrong key in the
campaign's terms (issue 5 pass: ``ani run --agent scripted --agent-config <llm campaign>`` printed
``ScriptedAgent.__init__() got an unexpected keyword argument 'mode'``)."""

from __future__ import annotations

import pytest

from ani.agents import factory
from ani.agents.factory import create_agent
from ani.agents.scripted import ScriptedAgent
from ani.errors import ConfigError


def test_unknown_option_of_the_scripted_agent_is_named_with_the_known_ones():
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": "scripted", "mode": "react"})
    assert str(exc.value) == (
        "agent.mode: unknown option for kind scripted; known: mistakes, validate_pause_s, validate_tries"
    )


def test_an_llm_block_given_to_the_scripted_kind_names_every_foreign_key():
    llm = {"kind": "scripted", "base_url": "http://127.0.0.1:9/v1", "model": "m", "mode": "react",
           "validate_tries": 2}
    with pytest.raises(ConfigError) as exc:
        create_agent(llm)
    msg = str(exc.value)
    assert msg.startswith("agent.base_url, agent.mode, agent.model: unknown options for kind scripted;")
    assert "__init__" not in msg and "keyword argument" not in msg


def test_known_options_reach_the_agent():
    agent = create_agent({"kind": "scripted", "validate_tries": 3, "validate_pause_s": 0.0})
    assert isinstance(agent, ScriptedAgent)
    assert (agent.validate_tries, agent.validate_pause_s) == (3, 0.0)


class _Got:
    """An agent (it has ``run``) that keeps what its factory was given."""

    name = "got"

    def __init__(self, value):
        self.value = value

    def run(self, task, adapter, budget):
        raise NotImplementedError

    def __eq__(self, other):
        return other == self.value


def test_registered_factories_required_none_and_kwargs(monkeypatch):
    def needs_url(url: str, retries: int = 1) -> _Got:
        return _Got((url, retries))

    def takes_nothing() -> _Got:
        return _Got("ok")

    def takes_anything(**options):
        return _Got(options)

    monkeypatch.setitem(factory.AGENT_KINDS, "needs-url", needs_url)
    monkeypatch.setitem(factory.AGENT_KINDS, "bare", takes_nothing)
    monkeypatch.setitem(factory.AGENT_KINDS, "open", takes_anything)
    with pytest.raises(ConfigError, match=r"^agent\.url: required for kind needs-url$"):
        create_agent({"kind": "needs-url", "retries": 2})
    assert create_agent({"kind": "needs-url", "url": "u"}) == ("u", 1)
    with pytest.raises(ConfigError, match=r"^agent\.x: unknown option for kind bare; known: none$"):
        create_agent({"kind": "bare", "x": 1})
    assert create_agent({"kind": "open", "anything": 1}) == {"anything": 1}  # validates its own
