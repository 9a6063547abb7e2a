"""The command socket: publish with confirms, durable consumers, queries, STATS.

One :class:`Client` is one DEALER connection to the broker (one *peer* in
docs/protocol.md). It is not thread-safe: use it from one thread, or give each
thread its own. Everything waits by polling its socket, so a reply, an event and
a reconnection are handled as they arrive.
"""
from __future__ import annotations

import json
import math
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import (Any, Callable, Deque, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Union)

import zmq
from zmq.utils.monitor import recv_monitor_message

from .errors import (BadArgsError, BusError, BusyError, ConsumerEndedError, EventBusError, NoReplyError,
                     error_from_reply)
from .keys import CurveKeys
from .topic import TopicFields

__all__ = ["Client", "Consumer", "Delivery", "Event", "make_event", "encode_event",
           "DEFAULT_COMMAND", "DEFAULT_STREAM"]

DEFAULT_COMMAND = "tcp://127.0.0.1:7750"
DEFAULT_STREAM = "tcp://127.0.0.1:7751"
VERSION = "0.1.0"

#: An event to publish: a CloudEvent as a mapping (encoded as compact JSON) or its bytes.
Event = Union[bytes, Mapping[str, Any]]

#: Where a consumer starts: ``"earliest"``, ``"latest"``, ``"resume"`` or a SEQ (≥ 1).
Start = Union[str, int]


def make_event(type: str, subject: str, data: Optional[Mapping[str, Any]] = None, *, source: str = "/python",
               id: Optional[str] = None, time: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
    """A CloudEvents 1.0 event as a dict, with a fresh UUID as ``id`` unless one is given.

    Keep the dict (or its id) if you may publish it again: a retry must carry the same
    ``source`` and ``id`` for the broker to recognise it. ``extra`` adds attributes such
    as ``replyto`` or ``traceparent``."""
    event: Dict[str, Any] = {"specversion": "1.0", "id": id or str(uuid.uuid4()), "source": source,
                             "type": type, "subject": subject}
    if time is not None:
        event["time"] = time
    event.update(extra)
    if data is not None:
        event["data"] = dict(data)
    return event


def encode_event(event: Event) -> bytes:
    """An event's frame: bytes as they are, a mapping as compact UTF-8 JSON."""
    if isinstance(event, (bytes, bytearray, memoryview)):
        return bytes(event)
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Delivery(TopicFields):
    """One event delivered to a durable consumer (an EVT, or one event of an EVTS).

    ``data`` holds the event's bytes exactly as logged; :meth:`event` parses them."""

    consumer: str
    seq: int
    topic: str
    data: bytes


def _decode_evts(name: str, batch: bytes) -> List[Delivery]:
    """The events of an EVTS BATCH: per event ``SEQ TOPIC_LENGTH EVENT_LENGTH\\n TOPIC EVENT``."""
    deliveries = []
    position = 0
    while position < len(batch):
        end = batch.index(b"\n", position)
        seq, topic_length, event_length = (int(x) for x in batch[position:end].split(b" "))
        topic = batch[end + 1:end + 1 + topic_length]
        body = batch[end + 1 + topic_length:end + 1 + topic_length + event_length]
        deliveries.append(Delivery(name, seq, topic.decode(), body))
        position = end + 1 + topic_length + event_length
    return deliveries


@dataclass
class _Pending:
    frames: List[bytes]
    reply: Optional[List[bytes]] = None
    on_reply: Optional[Callable[[List[bytes]], None]] = None


def _seqs(reply: List[bytes]) -> List[int]:
    """The SEQs of a PUB's OK, in either form: one frame per event, or compact (one frame)."""
    return [int(part) for frame in reply for part in frame.split(b" ")]


class Client:
    """A connection to the broker's command socket.

    Args:
        endpoint: the command socket, ``tcp://127.0.0.1:7750`` by default.
        name, role, version: what HELLO tells the broker (informational).
        services: service names this client answers (a plugin's), declared in HELLO.
        batch: ask for batched delivery (EVTS) for this connection's consumers.
        compact_ok: ask for compact confirms (every SEQ of a PUB in one frame).
        use_pubs: send batches as PUBS (one frame) when the broker offers it.
        curve: CURVE keys; by default read from the environment
            (:meth:`CurveKeys.from_env`), none if it names none.
        timeout: seconds to wait for a reply before :class:`NoReplyError`.
        context: a ZeroMQ context to use (a new one by default).

    HELLO is sent with the first command that needs it. When the connection is lost
    and comes back (a broker restart, for one), the client sends HELLO again, attaches
    its consumers again after the last event it handed out, and sends again every
    request still waiting for its reply (all of them are safe to repeat).
    """

    def __init__(self, endpoint: str = DEFAULT_COMMAND, *, name: str = "eventbus-python", role: str = "backend",
                 version: str = VERSION, services: Sequence[str] = (), batch: bool = True, compact_ok: bool = True,
                 use_pubs: bool = True, curve: Optional[CurveKeys] = None, timeout: float = 10.0,
                 context: Optional["zmq.Context[Any]"] = None) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.use_pubs = use_pubs
        self._hello: Dict[str, Any] = {"name": name, "role": role, "version": version}
        if services:
            self._hello["services"] = list(services)
        self._hello["batch"] = batch
        self._hello["compact_ok"] = compact_ok
        self.info: Optional[Dict[str, Any]] = None
        self._own_context = context is None
        self._context: "zmq.Context[Any]" = context if context is not None else zmq.Context()
        self._socket: "zmq.Socket[bytes]" = self._context.socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.SNDTIMEO, int(timeout * 1000))
        keys = curve if curve is not None else CurveKeys.from_env()
        if keys is not None:
            keys.apply(self._socket)
        self._monitor: "zmq.Socket[bytes]" = self._socket.get_monitor_socket(zmq.EVENT_CONNECTED)
        self._socket.connect(endpoint)
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)
        self._counter = 0
        self._pending: Dict[bytes, _Pending] = {}
        self._ack_corrs: Dict[bytes, Tuple[str, int]] = {}
        self._consumers: Dict[str, Consumer] = {}
        self._connections = 0
        self._resync_needed = False
        self._closed = False

    # -- the connection ---------------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the socket (and the context, if the client made it). Consumers stay
        known to the broker with their offsets; a later CONSUME with ``resume`` goes on."""
        if self._closed:
            return
        self._closed = True
        self._socket.disable_monitor()
        self._monitor.close(linger=0)
        self._socket.close(linger=0)
        if self._own_context:
            self._context.term()

    @property
    def features(self) -> List[str]:
        """The extensions the broker offers (HELLO's ``features``); sends HELLO if needed."""
        return list(self.hello().get("features", []))

    @property
    def limits(self) -> Dict[str, int]:
        """The broker's limits (HELLO's ``limits``); sends HELLO if needed."""
        return dict(self.hello().get("limits", {}))

    def hello(self) -> Dict[str, Any]:
        """The broker's answer to this client's HELLO (sent once, then remembered)."""
        if self.info is None:
            self.info = json.loads(self._call(b"HELLO", encode_event(self._hello))[0])
        return self.info

    def ping(self, timeout: Optional[float] = None) -> None:
        """A PING, answered once the broker has handled every earlier command of this
        connection (ACKs included)."""
        self._call(b"PING", timeout=timeout)

    def stats(self) -> Dict[str, Any]:
        """The broker's STATS (an ``admin`` only, with keys)."""
        value = json.loads(self._call(b"STATS")[0])
        assert isinstance(value, dict)
        return value

    # -- publishing ---------------------------------------------------------------------

    def publish(self, events: Iterable[Event], stage: str = "in", *, attempts: int = 3,
                on_retry: Optional[Callable[[int, EventBusError], None]] = None) -> List[int]:
        """Publishes events to a stage and returns their SEQs once the broker confirmed them
        (made them durable), in the order of the events.

        The events are sent in batches within the broker's limits (1,000 events, 4 MiB),
        as PUBS when offered; a batch is appended whole or not at all. An event already
        logged (same stage, ``source`` and ``id``) is not appended again: its original SEQ
        is returned. So a batch that got no reply (:class:`NoReplyError`) or ``busy`` is
        sent again, up to ``attempts`` times in all, and ``on_retry(attempt, error)`` is
        called before each new attempt. A refused batch raises the :class:`BusError` of
        its code (``BadEventError`` …, with ``event_index`` counted in that batch)."""
        frames = [encode_event(event) for event in events]
        return self.publish_frames(stage, [(frame, len(frame)) for frame in frames], attempts=attempts,
                                   on_retry=on_retry)

    def publish_one(self, event: Event, stage: str = "in", **options: Any) -> int:
        """Publishes one event and returns its SEQ (see :meth:`publish`)."""
        return self.publish([event], stage, **options)[0]

    def publish_frames(self, stage: str, frames: Sequence[Tuple[bytes, int]], *, attempts: int = 3,
                       on_retry: Optional[Callable[[int, EventBusError], None]] = None) -> List[int]:
        """Publishes EVENT frames given with the bytes each appends: an event's bytes, or a
        reference ``@SEQ`` (docs/protocol.md, "Forwarding by reference") with the size of
        the event it names. The rest is as :meth:`publish`."""
        if not frames:
            return []
        limits = self.limits
        max_events = int(limits.get("max_batch_events", 1000))
        max_bytes = int(limits.get("max_batch_bytes", 4 * 1024 * 1024))
        seqs: List[int] = []
        chunk: List[bytes] = []
        size = 0
        for frame, frame_size in frames:
            if chunk and (len(chunk) == max_events or size + frame_size > max_bytes):
                seqs.extend(self._publish_chunk(stage, chunk, attempts, on_retry))
                chunk, size = [], 0
            chunk.append(frame)
            size += frame_size
        seqs.extend(self._publish_chunk(stage, chunk, attempts, on_retry))
        return seqs

    def _publish_chunk(self, stage: str, chunk: List[bytes], attempts: int,
                       on_retry: Optional[Callable[[int, EventBusError], None]]) -> List[int]:
        if self.use_pubs and "pubs" in self.features:
            verb, args = b"PUBS", [stage.encode(), b"".join(str(len(e)).encode() + b"\n" + e for e in chunk)]
        else:
            verb, args = b"PUB", [stage.encode(), *chunk]
        corr = self._next_corr()  # the same CORR for every attempt: whichever answer comes first counts
        attempt = 1
        while True:
            try:
                seqs = _seqs(self._call(verb, *args, corr=corr))
                if len(seqs) != len(chunk):
                    raise EventBusError(f"the broker confirmed {len(seqs)} SEQs for {len(chunk)} events")
                return seqs
            except (NoReplyError, BusyError) as error:
                if attempt >= attempts:
                    raise
                if on_retry is not None:
                    on_retry(attempt, error)
                if isinstance(error, BusyError):
                    time.sleep(min(0.01 * attempt, 1.0))  # the broker's log could not be written: back off
                attempt += 1

    # -- queries -----------------------------------------------------------------------

    def request(self, service: str, method: str, params: Optional[Mapping[str, Any]] = None, *,
                timeout: Optional[float] = None) -> Any:
        """A REQ to a service; returns its result, parsed from JSON. An error from the
        service or the broker raises the :class:`BusError` of its code (``NotFoundError``,
        ``BadRequestError``, ``UnknownServiceError``, ``RequestTimeoutError`` …). The wait
        is the broker's ``request_timeout_ms`` plus two seconds unless ``timeout`` is given."""
        body = encode_event({"method": method, "params": dict(params or {})})
        if timeout is None:
            timeout = int(self.limits.get("request_timeout_ms", 5000)) / 1000 + 2
        return json.loads(self._call(b"REQ", service.encode(), body, timeout=timeout)[0])

    def query(self, method: str, params: Optional[Mapping[str, Any]] = None, *, service: str = "receipts",
              timeout: Optional[float] = None) -> Any:
        """A query of the receipts service (or of ``service``): see docs/events.md, "Queries"."""
        return self.request(service, method, params, timeout=timeout)

    def unread_counts(self, user_id: str) -> Dict[str, Any]:
        """``unread_counts``: a user's unread messages and mentions, per channel and in total."""
        result: Dict[str, Any] = self.query("unread_counts", {"user_id": user_id})
        return result

    def message_receipts(self, cid: str, message_id: str, viewer: str, *, page_size: Optional[int] = None,
                         cursor: Optional[str] = None) -> Dict[str, Any]:
        """``message_receipts``: read and delivered counts of a message and one page of its
        readers, as ``viewer`` may see them; pass the reply's ``next_cursor`` for the next page."""
        params: Dict[str, Any] = {"cid": cid, "message_id": message_id, "viewer": viewer}
        if page_size is not None:
            params["page_size"] = page_size
        if cursor is not None:
            params["cursor"] = cursor
        result: Dict[str, Any] = self.query("message_receipts", params)
        return result

    def channel_state(self, cid: str, viewer: str, *, page_size: Optional[int] = None,
                      cursor: Optional[str] = None) -> Dict[str, Any]:
        """``channel_state``: each member's read and delivered watermarks, a page at a time."""
        params: Dict[str, Any] = {"cid": cid, "viewer": viewer}
        if page_size is not None:
            params["page_size"] = page_size
        if cursor is not None:
            params["cursor"] = cursor
        result: Dict[str, Any] = self.query("channel_state", params)
        return result

    # -- consuming ---------------------------------------------------------------------

    def consume(self, name: str, prefixes: Union[str, Sequence[str]], *, start: Start = "resume",
                credit: int = 1000) -> "Consumer":
        """Attaches durable consumer ``name`` to this connection (CONSUME) and returns it.

        ``prefixes`` select events by topic (end them with ``/``: ``"out/"``,
        ``"out/@bob/"``). ``start`` is ``"resume"`` (after the last ACK, the default),
        ``"earliest"``, ``"latest"`` or a SEQ. ``credit`` is the most events delivered
        and not yet acknowledged. Iterate over the consumer for its events, and
        :meth:`Consumer.ack` what you have finished."""
        if isinstance(prefixes, str):
            prefixes = [prefixes]
        consumer = Consumer(self, name, list(prefixes), credit, start)
        self.hello()  # the batch option applies to consumers attached after it
        previous = self._consumers.get(name)
        # Known before the CONSUME goes: its first events may come in the same read as the OK.
        self._consumers[name] = consumer
        try:
            reply = self._call(b"CONSUME", name.encode(), str(start).encode(), str(credit).encode(),
                               *[p.encode() for p in consumer.prefixes])
        except BaseException:
            if previous is None:
                del self._consumers[name]
            else:
                self._consumers[name] = previous
            raise
        consumer.first_seq = int(reply[0])
        if previous is not None:
            previous._ended = "attached again by this connection"
        return consumer

    # -- the machinery -----------------------------------------------------------------

    def _next_corr(self) -> bytes:
        self._counter += 1
        return b"py%x" % self._counter

    def _call(self, verb: bytes, *args: bytes, timeout: Optional[float] = None,
              corr: Optional[bytes] = None) -> List[bytes]:
        """Sends a request and returns the frames after CORR of its OK; ERR raises."""
        if self._closed:
            raise EventBusError("the client is closed")
        self._pump(0)
        corr = corr or self._next_corr()
        pending = _Pending([b"EB1", verb, corr, *args])
        self._pending[corr] = pending
        try:
            self._send(pending.frames)
            deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
            while pending.reply is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise NoReplyError(f"no reply to {verb.decode()} within {self.timeout if timeout is None else timeout} s "
                                       f"from {self.endpoint}")
                self._pump(remaining)
        finally:
            self._pending.pop(corr, None)
        reply = pending.reply
        if reply[1] == b"ERR":
            raise error_from_reply(reply[3].decode(errors="replace") if len(reply) > 3 else "",
                                   reply[4].decode(errors="replace") if len(reply) > 4 else "")
        return reply[3:]

    def _send(self, frames: List[bytes]) -> None:
        try:
            self._socket.send_multipart(frames)
        except zmq.Again:
            raise NoReplyError(f"could not send {frames[1].decode()} to {self.endpoint}: its queue is full") from None

    def _send_async(self, frames: List[bytes], on_reply: Callable[[List[bytes]], None]) -> None:
        """Sends a request whose reply goes to ``on_reply`` when it arrives (for resyncs)."""
        self._pending[frames[2]] = _Pending(frames, on_reply=on_reply)
        self._send(frames)

    def _pump(self, timeout: float) -> None:
        """Handles what arrives within ``timeout`` seconds (at most that long)."""
        ready = dict(self._poller.poll(math.ceil(max(timeout, 0) * 1000)))
        if self._monitor in ready:
            while True:
                try:
                    event = recv_monitor_message(self._monitor, zmq.NOBLOCK)
                except zmq.Again:
                    break
                if event["event"] == zmq.EVENT_CONNECTED:
                    self._connections += 1
                    if self._connections > 1:
                        self._resync_needed = True
        if self._socket in ready:
            for _ in range(100_000):
                try:
                    frames = self._socket.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                self._dispatch(frames)
        if self._resync_needed:
            self._resync()
        for consumer in list(self._consumers.values()):
            if consumer._restart_needed:
                self._restart(consumer)

    def _dispatch(self, frames: List[bytes]) -> None:
        if len(frames) < 3 or frames[0] != b"EB1":
            return
        kind, key = frames[1], frames[2]
        if kind in (b"OK", b"ERR"):
            pending = self._pending.get(key)
            if pending is not None:
                if pending.on_reply is not None:
                    del self._pending[key]
                    pending.on_reply(frames)
                elif pending.reply is None:
                    pending.reply = frames
                return
            acked = self._ack_corrs.pop(key, None)
            if acked is not None and kind == b"ERR":
                consumer = self._consumers.get(acked[0])
                if consumer is not None:
                    consumer._ack_failed(error_from_reply(frames[3].decode(), frames[4].decode()), acked[1])
            return
        consumer = self._consumers.get(key.decode(errors="replace"))
        if consumer is None:
            return
        if kind == b"EVT" and len(frames) >= 6:
            consumer._deliver([Delivery(consumer.name, int(frames[3]), frames[4].decode(), frames[5])])
        elif kind == b"EVTS" and len(frames) >= 4:
            consumer._deliver(_decode_evts(consumer.name, frames[3]))
        elif kind == b"END":
            consumer._ended = frames[3].decode(errors="replace") if len(frames) > 3 else "ended"
            consumer._buffer.clear()

    def _resync(self) -> None:
        """After a reconnection: HELLO again, every consumer again, every pending request again."""
        self._resync_needed = False
        for corr in [corr for corr, pending in self._pending.items() if pending.on_reply is not None]:
            del self._pending[corr]  # an earlier resync's, unanswered: replaced by this one's
        if self.info is not None:
            def took_hello(frames: List[bytes]) -> None:
                if frames[1] == b"OK":
                    self.info = json.loads(frames[3])
            self._send_async([b"EB1", b"HELLO", self._next_corr(), encode_event(self._hello)], took_hello)
        for consumer in list(self._consumers.values()):
            self._restart(consumer)
        for pending in list(self._pending.values()):
            if pending.on_reply is None and pending.reply is None:
                self._send(pending.frames)

    def _restart(self, consumer: "Consumer") -> None:
        """Attaches a consumer again after the last event it handed out (the broker forgot it:
        a restart, or a lost connection); the events it held but had not handed out come again."""
        consumer._restart_needed = False
        if consumer._ended is not None or consumer._cancelled:
            return
        consumer._restarts += 1
        consumer._buffer.clear()
        # After what it handed out; after an ACK beyond that (a skip ahead, or a SEQ the broker
        # may refuse), where the broker's offset is; else where it first started.
        start: Start
        if consumer._last_handed_out >= consumer.last_acked and consumer._last_handed_out:
            start = consumer._last_handed_out + 1
        elif consumer.last_acked:
            start = "resume"
        else:
            start = consumer.first_seq or consumer.start  # 0: its CONSUME is not answered yet

        def attached(frames: List[bytes]) -> None:
            if frames[1] == b"ERR":
                consumer._error = error_from_reply(frames[3].decode(), frames[4].decode())

        self._send_async([b"EB1", b"CONSUME", self._next_corr(), consumer.name.encode(), str(start).encode(),
                          str(consumer.credit).encode(), *[p.encode() for p in consumer.prefixes]], attached)
        if consumer.last_acked and consumer.last_acked != consumer._bad_ack:
            self._send_ack(consumer.name, consumer.last_acked)

    def _send_ack(self, name: str, seq: int) -> bytes:
        corr = self._next_corr()
        if len(self._ack_corrs) > 10_000:  # successful ACKs get no reply: forget the oldest
            for old in list(self._ack_corrs)[:5_000]:
                del self._ack_corrs[old]
        self._ack_corrs[corr] = (name, seq)
        self._send([b"EB1", b"ACK", corr, name.encode(), str(seq).encode()])
        return corr


class Consumer:
    """A durable consumer attached to a :class:`Client` (made by :meth:`Client.consume`).

    Iterate over it for its :class:`Delivery` objects, in SEQ order; it waits for more
    when it has none. :meth:`events` stops after a quiet period instead. Delivery is at
    least once: an event not acknowledged comes again after a reconnection or a restart,
    with the same SEQ and bytes.
    """

    def __init__(self, client: Client, name: str, prefixes: List[str], credit: int, start: Start) -> None:
        self.client = client
        self.name = name
        self.prefixes = prefixes
        self.credit = credit
        #: The START of its CONSUME.
        self.start = start
        #: The SEQ the broker said the first delivery will have at the earliest.
        self.first_seq = 0
        #: The last SEQ acknowledged through this object (0 if none).
        self.last_acked = 0
        self._last_handed_out = 0
        self._buffer: Deque[Delivery] = deque()
        self._ended: Optional[str] = None
        self._cancelled = False
        self._error: Optional[BusError] = None
        self._restart_needed = False
        self._restarts = 0
        self._ack_retried: Optional[int] = None
        self._bad_ack: Optional[int] = None

    def _deliver(self, deliveries: List[Delivery]) -> None:
        floor = max(self.last_acked, self._last_handed_out)
        self._buffer.extend(d for d in deliveries if d.seq > floor)

    def _ack_failed(self, error: BusError, seq: int) -> None:
        # bad_args: the broker no longer has this consumer on this connection (it restarted,
        # or the connection was replaced): attach again and ACK again, as docs/protocol.md
        # says to, once; the same refusal after that is the ACK's own (a SEQ past the head).
        if isinstance(error, BadArgsError) and self._ended is None and not self._cancelled \
                and self._ack_retried != seq:
            self._ack_retried = seq
            self._restart_needed = True
            return
        if seq == self.last_acked:
            self._bad_ack = seq
            self.last_acked = min(self.last_acked, self._last_handed_out)
        self._error = error

    def _check(self) -> None:
        if self._ended is not None:
            raise ConsumerEndedError(self.name, self._ended)
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def receive(self, timeout: Optional[float] = None) -> Optional[Delivery]:
        """The next delivery, waiting up to ``timeout`` seconds (for ever if ``None``);
        ``None`` if none came in time or the consumer was cancelled. Raises
        :class:`ConsumerEndedError` once another connection took the consumer over."""
        deadline = None if timeout is None else time.monotonic() + timeout
        looked = False
        while True:
            self._check()
            if self._cancelled:
                return None
            if self._buffer:
                delivery = self._buffer.popleft()
                self._last_handed_out = max(self._last_handed_out, delivery.seq)
                return delivery
            remaining = 1.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0 and looked:
                return None
            looked = True  # at least one look at the socket, even with a time-out of 0
            self.client._pump(min(max(remaining, 0), 1.0))

    def __iter__(self) -> Iterator[Delivery]:
        return self.events()

    def events(self, idle_timeout: Optional[float] = None) -> Iterator[Delivery]:
        """The deliveries, one by one; ends when none came for ``idle_timeout`` seconds
        (never, if ``None``) or when the consumer is cancelled."""
        while True:
            delivery = self.receive(idle_timeout)
            if delivery is None:
                return
            yield delivery

    def ack(self, seq: Union[int, Delivery], *, wait: bool = False) -> None:
        """Acknowledges every delivery up to and including ``seq`` (cumulative).

        A successful ACK gets no reply from the broker. With ``wait=True`` this sends a
        PING after it and returns once the broker has handled both, raising the ACK's error
        if it had one; otherwise an error surfaces at the next call."""
        self._check()
        number = seq.seq if isinstance(seq, Delivery) else int(seq)
        corr = self.client._send_ack(self.name, number)
        self.last_acked = max(self.last_acked, number)
        if wait:
            restarts = self._restarts
            self.client.ping()
            if self._restarts != restarts:  # the broker had forgotten us: attached again, ACK sent again
                self.client.ping()
            self.client._ack_corrs.pop(corr, None)
            self._check()

    def cancel(self) -> None:
        """Stops delivery (CANCEL); the broker keeps the offset, for a later ``resume``."""
        self._check()
        self._cancelled = True
        self._buffer.clear()
        self.client._call(b"CANCEL", self.name.encode())
        if self.client._consumers.get(self.name) is self:
            del self.client._consumers[self.name]
