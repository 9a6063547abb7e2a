"""The stream: live events of ``out`` and ``diag`` on the broker's XPUB socket.

Best effort and live only (docs/protocol.md, "The stream"): a subscriber sees what
is committed after its subscription reaches the broker, and one that falls
100,000 messages behind misses newer ones. Use a durable consumer
(:meth:`eventbus.Client.consume`) for what must not be missed; the SEQ of a
stream event is where such a consumer would resume.
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Union

import zmq

from .client import DEFAULT_STREAM
from .errors import NoReplyError
from .keys import CurveKeys
from .topic import TopicFields

if TYPE_CHECKING:
    from .client import Client

__all__ = ["Subscription", "StreamEvent"]


@dataclass(frozen=True)
class StreamEvent(TopicFields):
    """One stream message: its topic, its SEQ (sent as 8 bytes big-endian) and its bytes."""

    seq: int
    topic: str
    data: bytes


class Subscription:
    """A SUB socket on the stream, subscribed to topic prefixes.

    Args:
        endpoint: the stream socket, ``tcp://127.0.0.1:7751`` by default.
        prefixes: topic prefixes, such as ``"out/"``, ``"out/messaging:general/"``,
            ``"out/@bob/"`` or ``"diag/"`` (end them with ``/``); ``""`` is everything.
        curve: CURVE keys; by default from the environment (see :class:`CurveKeys`).
            With keys, the broker applies only the prefixes the client's role may see.
        context: a ZeroMQ context to use (a new one by default).
    """

    def __init__(self, endpoint: str = DEFAULT_STREAM, prefixes: Union[str, Sequence[str]] = ("out/",), *,
                 curve: Optional[CurveKeys] = None, context: Optional["zmq.Context[Any]"] = None) -> None:
        self.endpoint = endpoint
        self._own_context = context is None
        self._context: "zmq.Context[Any]" = context if context is not None else zmq.Context()
        self._socket: "zmq.Socket[bytes]" = self._context.socket(zmq.SUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        keys = curve if curve is not None else CurveKeys.from_env()
        if keys is not None:
            keys.apply(self._socket)
        self.prefixes: List[str] = []
        for prefix in [prefixes] if isinstance(prefixes, str) else prefixes:
            self.subscribe(prefix)
        self._socket.connect(endpoint)
        self._closed = False

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the socket (and the context, if the subscription made it)."""
        if not self._closed:
            self._closed = True
            self._socket.close(linger=0)
            if self._own_context:
                self._context.term()

    def subscribe(self, prefix: str) -> None:
        """Adds a topic prefix."""
        self._socket.setsockopt(zmq.SUBSCRIBE, prefix.encode())
        self.prefixes.append(prefix)

    def unsubscribe(self, prefix: str) -> None:
        """Removes a topic prefix added before."""
        self._socket.setsockopt(zmq.UNSUBSCRIBE, prefix.encode())
        self.prefixes.remove(prefix)

    def wait_until_subscribed(self, client: "Client", count: int = 1, timeout: float = 10.0) -> None:
        """Waits until the broker's STATS count at least ``count`` stream subscriptions, so
        that what is published next reaches this subscriber (a subscription travels to the
        broker a short moment after ``connect``). STATS needs the ``admin`` role with keys."""
        deadline = time.monotonic() + timeout
        while client.stats()["stream_subscriptions"] < count:
            if time.monotonic() > deadline:
                raise NoReplyError(f"the broker counts fewer than {count} stream subscriptions after {timeout} s")
            time.sleep(0.01)  # a poll interval

    def receive(self, timeout: Optional[float] = None) -> Optional[StreamEvent]:
        """The next event, waiting up to ``timeout`` seconds (for ever if ``None``);
        ``None`` if none came in time."""
        if not self._socket.poll(None if timeout is None else max(0, int(timeout * 1000))):
            return None
        topic, seq, body = self._socket.recv_multipart()[:3]
        return StreamEvent(struct.unpack(">Q", seq)[0], topic.decode(), body)

    def __iter__(self) -> Iterator[StreamEvent]:
        return self.events()

    def events(self, idle_timeout: Optional[float] = None) -> Iterator[StreamEvent]:
        """The events as they come; ends when none came for ``idle_timeout`` seconds
        (never, if ``None``)."""
        while True:
            event = self.receive(idle_timeout)
            if event is None:
                return
            yield event
