"""A plugin runner: consume a stage, call a function per event, publish what it
sends on with deterministic ids, acknowledge once that is confirmed, resume after
a restart (docs/plugins.md, "Effectively once").

    from eventbus import PluginRunner

    def handle(delivery, output):
        if delivery.type != "typing.start":
            output.forward()                     # pass it on unchanged

    PluginRunner("pyfilter", handle, input="receipt-reducer", output="out").run()
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .client import DEFAULT_COMMAND, Client, Delivery, encode_event, make_event
from .errors import EventBusError, NoReplyError
from .keys import CurveKeys

__all__ = ["PluginRunner", "Output", "Query", "Handler"]


class Query:
    """A ``query`` event (a REQ travelling the pipeline): its service, method and params."""

    def __init__(self, event: Mapping[str, Any]) -> None:
        data = event.get("data") or {}
        self.service: str = str(data.get("service", event.get("subject", "")))
        self.method: str = str(data.get("method", ""))
        self.params: Dict[str, Any] = dict(data.get("params") or {})
        self.replyto: str = str(event.get("replyto", ""))


class Output:
    """What the handler sends on for one input event. Everything it emits gets the id
    ``<plugin>:<input SEQ>:<n>`` (``n`` counts this input's emissions from 0) and the
    plugin's ``source``, so a replay after a crash publishes the same identities and the
    broker drops the repeats."""

    def __init__(self, runner: "PluginRunner", delivery: Delivery) -> None:
        self._runner = runner
        self.delivery = delivery
        self._count = 0

    @property
    def query(self) -> Optional[Query]:
        """The query, when the input is a ``query`` event (else ``None``)."""
        return Query(self.delivery.event()) if self.delivery.type == "query" else None

    def forward(self) -> None:
        """Passes the input on to the output stage unchanged (same bytes, ``source`` and
        ``id``); as a reference ``@SEQ`` when the broker offers it."""
        self._runner._add(self._runner.output, self._runner._forward_frame(self.delivery))

    def emit(self, type: str, subject: str, data: Optional[Mapping[str, Any]] = None, *,
             time: Optional[str] = None, to: str = "output", **extra: Any) -> Dict[str, Any]:
        """Emits a new event to the output stage (``to="output"``) or to ``diag``
        (``to="diag"``) and returns it. Give it the input's time, never the clock's, so
        that a replay makes the same event."""
        stage = self._runner.output if to == "output" else to
        event = make_event(type, subject, data, source=self._runner.source, time=time, id=self._next_id(), **extra)
        frame = encode_event(event)
        self._runner._add(stage, (frame, len(frame)))
        return event

    def reply(self, result: Any = None, *, error_code: Optional[str] = None,
              error_message: Optional[str] = None) -> None:
        """Answers the input query: with ``result`` (any JSON value), or with an error
        (``error_code`` such as ``"bad_request"`` or ``"not_found"``, and a message). The
        reply travels the rest of the pipeline; the broker hands it to the requester."""
        query = self.query
        if query is None:
            raise EventBusError(f"event {self.delivery.seq} is a {self.delivery.type}, not a query")
        data: Dict[str, Any]
        if error_code is not None:
            data = {"error": {"code": error_code, "message": error_message or "the service refused the request"}}
        else:
            data = {"result": {} if result is None else result}
        self.emit("reply", query.service, data, replyto=query.replyto)

    def _next_id(self) -> str:
        id_ = f"{self._runner.name}:{self.delivery.seq}:{self._count}"
        self._count += 1
        return id_


#: A plugin's function: called once per input event, in SEQ order.
Handler = Callable[[Delivery, Output], None]


class PluginRunner:
    """Runs a plugin: CONSUME ``<input>/`` as consumer ``name``, call ``handler`` for
    each event, publish its outputs to ``output`` (and ``diag``), and ACK a batch only once
    its outputs are confirmed.

    Args:
        name: the plugin's name: its consumer name and the prefix of its output ids.
        handler: ``handler(delivery, output)``; an event it neither forwards nor replaces
            is dropped. An exception stops :meth:`run` without acknowledging the batch.
        input, output: the stage consumed and the stage published to.
        command: the broker's command socket.
        batch: the most events handled per publish and ACK.
        credit: the consumer's credit (4 × ``batch`` by default).
        services: services this plugin answers (declared in HELLO); see :meth:`Output.reply`.
        source: the ``source`` of emitted events (``/eventbus/<name>`` by default).
        data_dir: where state snapshots go (``state.snapshot``), for a plugin with state.
        snapshot, restore: the state as a JSON value, and how to load it back. With them,
            the runner saves the state with the SEQ of the last event it includes (after
            that event's outputs are confirmed, every ``snapshot_interval`` seconds and at
            the end), and on start restores it and consumes from the next SEQ. Without them,
            it resumes after its last ACK.
        curve: CURVE keys; by default from the environment (``EVENTBUS_SECRET_KEY`` and
            ``EVENTBUS_SERVER_KEY``, as ``eventbus up`` sets them).
    """

    def __init__(self, name: str, handler: Handler, *, input: str = "in", output: str = "out",
                 command: str = DEFAULT_COMMAND, batch: int = 200, credit: Optional[int] = None,
                 services: Sequence[str] = (), source: Optional[str] = None, data_dir: Optional[str] = None,
                 snapshot: Optional[Callable[[], Any]] = None, restore: Optional[Callable[[Any], None]] = None,
                 snapshot_interval: float = 10.0, curve: Optional[CurveKeys] = None, timeout: float = 10.0) -> None:
        if (snapshot is None) != (restore is None) or (snapshot is not None and data_dir is None):
            raise ValueError("snapshot and restore go together, with a data_dir")
        self.name = name
        self.handler = handler
        self.input = input
        self.output = output
        self.command = command
        self.batch = batch
        self.credit = credit or batch * 4
        self.services = list(services)
        self.source = source or f"/eventbus/{name}"
        self.data_dir = data_dir
        self.snapshot = snapshot
        self.restore = restore
        self.snapshot_interval = snapshot_interval
        self.curve = curve
        self.timeout = timeout
        #: The SEQ of the last input whose outputs are confirmed (0 before the first).
        self.last_applied_seq = 0
        self.client: Optional[Client] = None
        self._stopping = False
        self._by_reference = False
        self._pending: Dict[str, List[Tuple[bytes, int]]] = {}

    @property
    def snapshot_path(self) -> Optional[str]:
        """``<data_dir>/state.snapshot``, when the plugin keeps state."""
        return os.path.join(self.data_dir, "state.snapshot") if self.data_dir and self.snapshot else None

    def stop(self) -> None:
        """Asks :meth:`run` to return after the batch in hand (safe from a signal handler)."""
        self._stopping = True

    def run(self) -> None:
        """Serves until :meth:`stop`. Raises :class:`~eventbus.ConsumerEndedError` if another
        copy takes the consumer over, and whatever the handler raises."""
        self._stopping = False
        start: Any = "resume"
        if self.snapshot_path and os.path.exists(self.snapshot_path):
            with open(self.snapshot_path, encoding="utf-8") as f:
                saved = json.load(f)
            assert self.restore is not None
            self.restore(saved["state"])
            self.last_applied_seq = int(saved["seq"])
            if self.last_applied_seq:
                start = self.last_applied_seq + 1
        client = Client(self.command, name=self.name, role="plugin", services=self.services, curve=self.curve,
                        timeout=self.timeout)
        self.client = client
        try:
            self._by_reference = "forward" in client.features
            consumer = client.consume(self.name, f"{self.input}/", start=start, credit=self.credit)
            saved_seq, saved_at = self.last_applied_seq, time.monotonic()
            while not self._stopping:
                first = consumer.receive(0.1)
                if first is None:
                    continue
                deliveries = [first]
                while len(deliveries) < self.batch:
                    more = consumer.receive(0)
                    if more is None:
                        break
                    deliveries.append(more)
                self._pending = {}
                for delivery in deliveries:
                    self.handler(delivery, Output(self, delivery))
                for stage, frames in self._pending.items():
                    client.publish_frames(stage, frames)
                self._pending = {}
                self.last_applied_seq = deliveries[-1].seq
                if self.snapshot_path and time.monotonic() - saved_at >= self.snapshot_interval:
                    self._save()
                    saved_seq, saved_at = self.last_applied_seq, time.monotonic()
                consumer.ack(self.last_applied_seq)
            if self.snapshot_path and self.last_applied_seq != saved_seq:
                self._save()
            try:
                client.ping(timeout=1.0)  # the last ACK has reached the broker, if it is still there
            except NoReplyError:
                pass  # stopping with the broker: the events after the last ACK the broker has come again
        finally:
            self.client = None
            client.close()

    def _forward_frame(self, delivery: Delivery) -> Tuple[bytes, int]:
        if self._by_reference:
            return (b"@%d" % delivery.seq, len(delivery.data))
        return (delivery.data, len(delivery.data))

    def _add(self, stage: str, frame: Tuple[bytes, int]) -> None:
        self._pending.setdefault(stage, []).append(frame)

    def _save(self) -> None:
        """The state and its SEQ in one atomic file replace (mode 0600)."""
        assert self.data_dir is not None and self.snapshot is not None and self.snapshot_path is not None
        os.makedirs(self.data_dir, mode=0o700, exist_ok=True)
        body = json.dumps({"seq": self.last_applied_seq, "state": self.snapshot()}, separators=(",", ":"))
        fd, temporary = tempfile.mkstemp(prefix=".state.", dir=self.data_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.snapshot_path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
