"""The chat-completions endpoint as the LLM agent (:mod:`ani.agents.llm`) and NetConfBench's
reasoning summariser (:mod:`ani.netconfbench.reasoning_summary`) meet it: bounding a request,
telling transient failures from final ones, the Retry-After wait, the words an endpoint failure
is reported in (URL, cause, bound; never the key), and a response's text and token counts.
Below both users (docs/architecture.md, "Layers"); ``ani.agents.llm_endpoint`` is the same module.

    body = check_body(resp)                  # raises NotACompletion / ErrorInBody
    value = bounded(fn, seconds, on_abandon) # raises AniTimeout past seconds + ABANDON_GRACE_S
    is_transient(exc) -> bool                # 429, 5xx, timeouts, refused connections
    retry_after_s(exc) -> seconds | None     # Retry-After / retry-after-ms of a 429 / 503
    endpoint_cause(exc, timeout_s, url) -> "POST <url>: connection refused" ...
    redact_url(url) -> url with passwords and query values as ***
    message_text(message) -> str | None      # a response message's text (or its refusal)
    token_count(value) -> int | None         # a usage field, None when not reported
"""

from __future__ import annotations

import datetime
import email.utils
import json
import math
import re
import socket
import threading
from collections.abc import Callable
from typing import Any

from ani.errors import AgentError, AniTimeout
from ani.host.threads import thread

#: seconds past a request's timeout before it is abandoned (the client's own timeout goes first)
ABANDON_GRACE_S = 1.0
#: what an abandoned request's AniTimeout says timed out
ABANDONED = "no complete response; abandoned"


class NotACompletion(AgentError):
    """An HTTP 200 body that is not a chat completion (an HTML page, a JSON string or list)."""


class ErrorInBody(AgentError):
    """An HTTP 200 body holding ``error`` and no choices (gateways report upstream failures so);
    transient: retried like a 5xx."""


def check_body(resp: Any) -> Any:
    """``resp`` if it is a chat completion; raises NotACompletion or ErrorInBody (naming it)."""
    if isinstance(resp, (str, bytes, list, int, float)) or resp is None:
        snippet = " ".join(str(resp).split())[:200]
        raise NotACompletion(
            f"the endpoint answered HTTP 200 with a body that is not a chat completion: {snippet!r}"
        )
    error = getattr(resp, "error", None)
    if error is not None and not getattr(resp, "choices", None):
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ErrorInBody(f"the endpoint answered HTTP 200 with an error: {str(message)[:300]}")
    if not isinstance(getattr(resp, "choices", None), list):
        # no choices list at all: not the model's reply (an empty list is: e.g. a content filter)
        snippet = " ".join(str(resp).split())[:200]
        raise NotACompletion(
            f"the endpoint answered HTTP 200 with a body that has no choices list: {snippet}"
        )
    return resp


def bounded(fn: Callable[[], Any], seconds: float, on_abandon: Callable[[], None]) -> Any:
    """``fn()`` in a daemon thread, waited for at most ``seconds`` (wall time).

    The HTTP client's timeout bounds each read, not the whole response: an endpoint that drips
    a byte now and then (a stuck proxy, a server streaming keep-alive blanks) is never timed
    out by it. Past ``seconds`` the call is abandoned: ``on_abandon()`` runs (it closes the
    client, so its sockets are released) and :class:`ani.errors.AniTimeout` is raised (``what``:
    ``no complete response; abandoned``; transient, so the retry policy and the wall clock decide
    what follows). Exceptions of ``fn`` propagate.
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            done.set()

    thread(target, name="llm-request").start()
    if not done.wait(seconds):
        on_abandon()
        raise AniTimeout(seconds, ABANDONED, f"no complete response within {seconds:g} s (abandoned)")
    if "error" in box:
        raise box["error"]
    return box["value"]


class EndpointError(AgentError):
    """The endpoint failed for good (not transient, or retries exhausted)."""


def is_transient(exc: BaseException) -> bool:
    """HTTP 429, 5xx, a timeout or a connection error: worth retrying."""
    import openai

    if isinstance(exc, (AniTimeout, ErrorInBody)):
        return True
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


#: HTTP statuses whose Retry-After header is honoured
RETRY_AFTER_STATUSES = (429, 503)


def retry_after_s(exc: BaseException) -> float | None:
    """The delay an HTTP 429/503 response asks for, seconds (None: no usable header).

    Reads ``retry-after-ms`` (milliseconds) first, then ``Retry-After`` as seconds or as an
    HTTP date (the delay from now). Negative, non-finite or unparsable values are ignored.
    """
    if getattr(exc, "status_code", None) not in RETRY_AFTER_STATUSES:
        return None
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = float("nan")
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        value = max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
    return value if math.isfinite(value) and value >= 0 else None


def describe_error(exc: BaseException) -> str:
    """``ClassName (HTTP 429): message`` without request headers (the key never appears)."""
    status = getattr(exc, "status_code", None)
    msg = str(getattr(exc, "message", "") or exc)
    text = f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {msg[:300]}"
    body = getattr(exc, "body", None)
    response = getattr(exc, "response", None)
    if status and not isinstance(body, dict) and response is not None:
        # a body that is not the API's JSON error (a proxy's HTML page, plain text): show it
        try:
            raw = " ".join(str(response.text).split())
        except Exception:  # noqa: BLE001 - a streamed or closed response has no text
            raw = ""
        if raw:
            text += f"; body: {raw[:200]}"
    cause = exc.__cause__ or exc.__context__
    if status is None and cause is not None and str(cause) and str(cause) not in text:
        # "Connection error." alone does not say refused / unknown host / reset
        text += f" ({type(cause).__name__}: {' '.join(str(cause).split())[:200]})"
    if isinstance(exc, json.JSONDecodeError):
        text = f"the response body is not JSON ({exc.msg} at char {exc.pos})"
    return text


_KEYLIKE = re.compile(r"\b(sk|key|api)[-_][A-Za-z0-9_\-*]{4,}")


def _root_causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes/contexts, outermost first (cycles cut)."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen and len(seen) < 10:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def endpoint_cause(exc: BaseException, timeout_s: float | None = None,
                   key_env: str | None = None) -> str:
    """What went wrong with a request, in words, without the key.

    ``connection refused``, ``host not found (llm.example)``, ``timeout after 2 s``,
    ``HTTP 404 (is base_url up to /v1?): <server message>``, ``HTTP 401 (check the key in
    $OPENAI_API_KEY): ...``, ``HTTP 503: ...``, or the message of a body that is not a chat
    completion. Key-like words in a server's message (``sk-...``) are replaced by ``***``.
    """
    import openai

    if isinstance(exc, (AniTimeout, openai.APITimeoutError)):
        bound = f"{timeout_s:g} s" if timeout_s is not None else "the request timeout"
        extra = f" ({exc.what})" if isinstance(exc, AniTimeout) and exc.what else ""
        return f"timeout after {bound}{extra}"
    if isinstance(exc, (NotACompletion, ErrorInBody)):
        return str(exc)
    if isinstance(exc, openai.APIConnectionError):
        chain = _root_causes(exc)
        words = " ".join(str(c) for c in chain).lower()
        if any(isinstance(c, ConnectionRefusedError) for c in chain) or "connection refused" in words:
            return "connection refused"
        if (any(isinstance(c, socket.gaierror) for c in chain) or "name or service not known" in words
                or "temporary failure in name resolution" in words or "nodename nor servname" in words
                or "no address associated" in words):
            host = getattr(getattr(getattr(exc, "request", None), "url", None), "host", None)
            return f"host not found{f' ({host})' if host else ''}"
        inner = chain[-1] if len(chain) > 1 else exc
        detail = " ".join(str(inner).split())[:200] or type(inner).__name__
        return f"connection failed ({type(inner).__name__}: {detail})"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        hint = ""
        if status in (401, 403):
            hint = f" (check the API key{f' in ${key_env}' if key_env else ''})"
        elif status == 404:
            hint = " (is base_url up to /v1? is the model name right?)"
        msg = " ".join(str(getattr(exc, "message", "") or exc).split())
        msg = re.sub(rf"^Error code: {status}( - )?", "", msg)[:300]
        text = f"HTTP {status}{hint}" + (f": {msg}" if msg else "")
        body = getattr(exc, "body", None)
        response = getattr(exc, "response", None)
        if not isinstance(body, dict) and response is not None:
            try:
                raw = " ".join(str(response.text).split())
            except Exception:  # noqa: BLE001 - a streamed or closed response has no text
                raw = ""
            if raw and raw not in text:
                text += f"; body: {raw[:200]}"
        return _KEYLIKE.sub(r"\1-***", text)
    if isinstance(exc, json.JSONDecodeError):
        return f"the response body is not JSON ({exc.msg} at char {exc.pos})"
    return _KEYLIKE.sub(r"\1-***", describe_error(exc))


def redact_url(url: str) -> str:
    """``url`` fit for logs: a password in it (``http://user:secret@host``) and the values of its
    query string (``?api-key=...``, as some gateways take the key) become ``***``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{host}" if ":" in userinfo else f"***@{host}"
        query = parts.query
        if query:
            query = urlencode(
                [(k, "***") for k, _v in parse_qsl(query, keep_blank_values=True)], safe="*"
            )
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "***"


def token_count(value: Any) -> int | None:
    """A usage field as a token count: a non-negative integer (an integral float is accepted);
    anything else (negative, fractional, huge float, text, bool, missing) is None: not reported."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value < 2**63:
        return value
    return None


def message_text(message: Any) -> str | None:
    """The text of a response message: ``content`` as a string (a list of content parts is
    joined from their text; another type is written as JSON); a refusal when there is no content."""
    content = getattr(message, "content", None) if message is not None else None
    if isinstance(content, list):
        parts = []
        for part in content:
            text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            parts.append(text if isinstance(text, str) else json.dumps(part, default=str))
        content = "\n".join(parts)
    elif content is not None and not isinstance(content, str):
        content = json.dumps(content, default=str)
    if not content:
        refusal = getattr(message, "refusal", None) if message is not None else None
        if isinstance(refusal, str) and refusal:
            return refusal
    return content
