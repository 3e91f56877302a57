"""Moved to :mod:`ani.llm_endpoint` (the chat-completions endpoint: bounded requests, transient
failures, the words of a failure): NetConfBench's reasoning summariser uses it too, a layer
below the agents (docs/architecture.md, "Layers"). ``ani.agents.llm_endpoint`` is the same
module object, so code written against it is unchanged."""

import sys

from ani import llm_endpoint

sys.modules[__name__] = llm_endpoint
