"""NETCONF message framing over SSH (RFC 6242 §4), without I/O.

Two framings:

* base:1.0 end-of-message: each message is followed by ``]]>]]>`` (RFC 6242 §4.3). Used for the
  ``<hello>`` of every session and for the whole session if either side lacks base:1.1.
* base:1.1 chunked (RFC 6242 §4.2): ``LF # chunk-size LF chunk-data`` repeated, ended by
  ``LF ## LF``; ``chunk-size`` is 1..4294967295 written without leading zeros. Used after the
  hello exchange when both sides announced ``urn:ietf:params:netconf:base:1.1``.

:class:`Decoder` is fed bytes as they arrive (any split, one byte at a time works) and hands out
complete messages one by one, so the caller can switch framing between two messages
(``decoder.chunked = True`` right after the hello). A malformed chunk header raises
:class:`FramingError`; RFC 6242 §4.2 then requires the session to be closed.
"""

from __future__ import annotations

from ani.errors import NetconfError

EOM = b"]]>]]>"
#: the largest chunk-size RFC 6242 §4.2 allows
MAX_CHUNK = 4294967295
_MAX_DIGITS = len(str(MAX_CHUNK))
_END = b"\n##\n"


class FramingError(NetconfError):
    """The peer broke RFC 6242 framing (bad chunk header or size). The session must be closed."""


def encode(message: bytes, chunked: bool, max_chunk: int = MAX_CHUNK) -> bytes:
    """Frame one message.

    Args:
        message: the XML document (UTF-8 bytes), non-empty.
        chunked: base:1.1 chunked framing if True, else base:1.0 ``]]>]]>``.
        max_chunk: largest chunk written (bytes, 1..MAX_CHUNK); longer messages are split.
    Raises:
        ValueError: empty message, or (base:1.0) a message containing ``]]>]]>``, which that
            framing cannot carry.
    """
    if not message:
        raise ValueError("cannot frame an empty NETCONF message")
    if not chunked:
        if EOM in message:
            raise ValueError("a base:1.0 message cannot contain ]]>]]>")
        return message + EOM
    if not 1 <= max_chunk <= MAX_CHUNK:
        raise ValueError(f"max_chunk must be 1..{MAX_CHUNK}")
    parts = []
    for i in range(0, len(message), max_chunk):
        piece = message[i : i + max_chunk]
        parts.append(b"\n#%d\n" % len(piece))
        parts.append(piece)
    parts.append(_END)
    return b"".join(parts)


class Decoder:
    """Incremental de-framer for one direction of one session.

    Usage::

        dec = Decoder()                 # base:1.0 until told otherwise
        dec.feed(data)
        while (msg := dec.next_message()) is not None:
            handle(msg)                 # may set dec.chunked = True after the hello

    Attributes:
        chunked: False for ``]]>]]>`` framing, True for chunked framing. May be changed between
            two ``next_message()`` calls; bytes already buffered are then parsed the new way.
        max_message: if set, a message growing beyond this many bytes raises FramingError
            (protection against a peer that never ends its message); None: unbounded.
    """

    def __init__(self, chunked: bool = False, max_message: int | None = None) -> None:
        self.chunked = chunked
        self.max_message = max_message
        self._buf = bytearray()
        self._scan = 0  # base:1.0: where the next search for ]]>]]> starts
        self._chunks: list[bytes] = []  # chunked: data of the message being assembled
        self._size = 0  # chunked: bytes in _chunks

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as part of a message."""
        return len(self._buf) + self._size

    def feed(self, data: bytes) -> None:
        """Append received bytes (any length, including empty)."""
        self._buf += data

    def next_message(self) -> bytes | None:
        """The next complete message (without framing), or None if more bytes are needed.

        Raises:
            FramingError: malformed chunk header / size, or ``max_message`` exceeded.
        """
        return self._next_chunked() if self.chunked else self._next_eom()

    def _next_eom(self) -> bytes | None:
        i = self._buf.find(EOM, self._scan)
        if i < 0:
            self._scan = max(0, len(self._buf) - len(EOM) + 1)
            self._check_size(len(self._buf))
            return None
        msg = bytes(self._buf[:i])
        del self._buf[: i + len(EOM)]
        self._scan = 0
        return msg

    def _next_chunked(self) -> bytes | None:
        buf = self._buf
        while True:
            # every chunk and the end marker start with LF '#'
            if len(buf) < 2:
                if buf and buf[0:1] != b"\n":
                    raise FramingError(f"expected LF '#' starting a chunk, got {bytes(buf[:1])!r}")
                return None
            if buf[0:2] != b"\n#":
                raise FramingError(f"expected LF '#' starting a chunk, got {bytes(buf[:2])!r}")
            if len(buf) < 3:
                return None
            if buf[2:3] == b"#":  # end-of-chunks: LF # # LF
                if len(buf) < 4:
                    return None
                if buf[3:4] != b"\n":
                    raise FramingError(f"bad end-of-chunks marker {bytes(buf[:4])!r}")
                if not self._chunks:
                    raise FramingError("end-of-chunks without any chunk")
                del buf[:4]
                msg = b"".join(self._chunks)
                self._chunks, self._size = [], 0
                return msg
            lf = buf.find(b"\n", 2, 2 + _MAX_DIGITS + 1)
            if lf < 0:
                digits = bytes(buf[2 : 2 + _MAX_DIGITS + 1])
                if not digits.isdigit() or digits.startswith(b"0") or len(digits) > _MAX_DIGITS:
                    raise FramingError(f"bad chunk-size {digits[:_MAX_DIGITS + 1]!r}")
                return None  # header not complete yet
            digits = bytes(buf[2:lf])
            if not digits.isdigit() or digits.startswith(b"0"):
                raise FramingError(f"bad chunk-size {digits!r}")
            size = int(digits)
            if size > MAX_CHUNK:
                raise FramingError(f"chunk-size {size} exceeds {MAX_CHUNK}")
            self._check_size(self._size + size)
            if len(buf) < lf + 1 + size:
                return None  # chunk data not complete yet
            self._chunks.append(bytes(buf[lf + 1 : lf + 1 + size]))
            self._size += size
            del buf[: lf + 1 + size]

    def _check_size(self, n: int) -> None:
        if self.max_message is not None and n > self.max_message:
            raise FramingError(f"message exceeds {self.max_message} bytes")
