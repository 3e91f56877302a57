"""ANI tools as the native tool objects of agent frameworks, one line each.

    from ani.integrations.langchain import tools        # pip install 'ani-sdk[langchain]'
    from ani.integrations.pydantic_ai import tools      # pip install 'ani-sdk[pydantic-ai]'
    from ani.integrations.openai_agents import tools    # pip install 'ani-sdk[openai-agents]'
    from ani.integrations.smolagents import tools       # pip install 'ani-sdk[smolagents]'

    agent_tools = tools(adapter)    # an opened adapter, e.g. ani.connect(lab_id, "a1")

Each ``tools(adapter)`` gives one framework tool per :class:`~ani.protocol.ToolSpec` of the
adapter, with what every framework needs handled once (:mod:`ani.integrations._common`): an
``ok=False`` result goes to the framework's own error channel as JSON that keeps the code and the
retriable flag; optional arguments stay optional (a null means "not given"); the strict schema
form where the framework demands it (openai-agents); the read-only / destructive hints where the
framework has a place for them; sync and async calls (async ones run the blocking adapter call in
a worker thread); several calls of one turn in parallel (adapters serialise what must be).
Importing a module without its framework raises an ImportError naming the extra. See
docs/frameworks.md. These modules only translate the protocol: nothing in ani imports them
statically.

``ani.integrations.<framework>_agent`` (``langchain_agent``, ``pydantic_ai_agent``,
``openai_agents_agent``, ``smolagents_agent``) run a framework's agent loop as an ani agent with
ani's budget and accounting (:mod:`ani.agents.framework`, which imports them by name).
"""
