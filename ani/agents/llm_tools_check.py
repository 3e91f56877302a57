"""Did the endpoint put the tools into the model's prompt? Judged from the first turn's prompt
tokens (issue 16: llama-cpp-python's server with ``chatml-function-calling`` renders no tools
when a request has ``tools`` but no ``tool_choice``: 54 prompt tokens instead of 230, and the
model never calls a tool).

::

    check = tools_check(prompt_tokens=54, messages=[...], tools=[...])
    check.seen            # False: fewer tokens than the messages and the tools need at least
    check.min_tokens      # the floor (tokens) the prompt must reach if the tools were rendered

The floor is the text's length over :data:`CHARS_PER_TOKEN_MAX`, more characters than a token
of a chat model's tokenizer covers on this kind of text (English prose and JSON Schema), so a
prompt below the floor cannot hold the tools; the measured prompts with the tools were above it,
those without below (``docs/llm.md``, "Did the model see the tools?").
A server that renders tools more compactly than their JSON could be judged wrongly: the
warning says what was compared, and ``tool_choice`` (``docs/llm.md``) is the fix to try.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

#: the most characters one token covers on prompts of this agent (prose + JSON Schema): a
#: conservative bound (measured with gemma-3 at A1: 1335 prompt tokens with the tools, 469
#: without, a floor of 981; docs/llm.md, "Did the model see the tools?")
CHARS_PER_TOKEN_MAX = 6.0


class ToolsCheck(NamedTuple):
    """The verdict of :func:`tools_check`.

    Attributes:
        seen: True (the prompt is long enough to hold the tools), False (it is not), None (the
            endpoint reported no prompt tokens: no verdict).
        prompt_tokens: the first turn's prompt tokens as reported (None: not reported).
        min_tokens: the floor, tokens: ``(message chars + tool chars) / CHARS_PER_TOKEN_MAX``.
        message_chars: characters of the messages' text (roles and contents).
        tool_chars: characters of the tool list as compact JSON.
    """

    seen: bool | None
    prompt_tokens: int | None
    min_tokens: int
    message_chars: int
    tool_chars: int


def _message_chars(messages: list[dict[str, Any]]) -> int:
    chars = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif content is not None:
            chars += len(json.dumps(content, ensure_ascii=False))
        if m.get("tool_calls"):
            chars += len(json.dumps(m["tool_calls"], ensure_ascii=False, separators=(",", ":")))
    return chars


def tools_check(
    prompt_tokens: int | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> ToolsCheck:
    """Whether a request with ``messages`` and ``tools`` (chat-completions shapes) that the
    endpoint counted as ``prompt_tokens`` tokens had its tools in the prompt.

    Returns:
        :class:`ToolsCheck`; ``seen`` is None when ``prompt_tokens`` is None. Never raises.
    """
    message_chars = _message_chars(messages)
    tool_chars = len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
    floor = int((message_chars + tool_chars) / CHARS_PER_TOKEN_MAX)
    seen = None if prompt_tokens is None else prompt_tokens >= floor
    return ToolsCheck(seen, prompt_tokens, floor, message_chars, tool_chars)
