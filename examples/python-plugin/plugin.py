#!/usr/bin/env python3
"""A bus plugin in Python, written from docs/protocol.md alone (pyzmq).

It consumes one stage, drops the event types it is told to drop, passes every
other event on unchanged, and for each `message.new` emits a `message.counted`
event to `diag` with a deterministic id (`<name>:<seq>:0`), so that a replay
after a crash republishes the same id and the broker drops the repeat.

    python3 plugin.py --name pyfilter --input in --output out \
        --command tcp://127.0.0.1:7750 --drop typing.start

Run it as a pipeline stage with `eventbus up --pipeline receipt-reducer,external:pyfilter`
(it connects by itself), or let `eventbus up` start it from a config file.
"""
import argparse
import json
import signal
import sys

import zmq


class Bus:
    """The command socket: requests with CORR, replies matched by CORR, EVTs buffered."""

    def __init__(self, endpoint):
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        self.counter = 0
        self.events = []

    def send(self, verb, *args):
        self.counter += 1
        corr = str(self.counter).encode()
        self.socket.send_multipart([b"EB1", verb.encode(), corr, *args])
        return corr

    def receive(self, timeout_ms):
        """One message within the timeout: EVTs are buffered, replies returned."""
        if not self.socket.poll(timeout_ms):
            return None
        frames = self.socket.recv_multipart()
        if frames[1] == b"EVT":
            _, _, _name, seq, topic, event = frames
            self.events.append((int(seq), topic.decode(), event))
            return None
        if frames[1] == b"END":
            raise SystemExit(f"consumer taken over: {frames[3].decode()}")
        return frames

    def call(self, verb, *args, timeout_ms=10000):
        corr = self.send(verb, *args)
        while True:
            frames = self.receive(timeout_ms)
            if frames is None and not self.socket.poll(0):
                if self.events:
                    continue
                raise SystemExit(f"no reply to {verb} within {timeout_ms} ms")
            if frames and frames[2] == corr:
                if frames[1] == b"ERR":
                    raise SystemExit(f"{verb} refused: {frames[3].decode()}: {frames[4].decode()}")
                return frames[3:]


def publish(bus, stage, events):
    """PUB (frame, size) pairs in chunks within the protocol's limits (1,000 events,
    4 MiB of the events appended: a reference counts the bytes it names), each confirmed."""
    chunk, size = [], 0
    for item in events + [None]:
        if item is None or len(chunk) == 1000 or size + item[1] > 4 * 1024 * 1024 - 65536:
            if chunk:
                bus.call("PUB", stage.encode(), *chunk)
            chunk, size = [], 0
        if item is not None:
            chunk.append(item[0])
            size += item[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="pyfilter")
    parser.add_argument("--input", default="in")
    parser.add_argument("--output", default="out")
    parser.add_argument("--command", default="tcp://127.0.0.1:7750")
    parser.add_argument("--data-dir", default=None, help="unused: this plugin keeps no state")
    parser.add_argument("--drop", action="append", default=[], help="an event type to drop (repeatable)")
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))

    bus = Bus(args.command)
    info = json.loads(bus.call("HELLO", json.dumps({"name": args.name, "role": "plugin", "version": "1"}).encode())[0])
    # A broker that offers it takes "@SEQ" for an event passed on unchanged: no bytes sent back.
    by_reference = "forward" in info.get("features", [])
    # A stateless plugin resumes after its last ACK.
    bus.call("CONSUME", args.name.encode(), b"resume", str(args.batch * 4).encode(), f"{args.input}/".encode())
    print(f"{args.name}: consuming {args.input}/ -> {args.output}", file=sys.stderr, flush=True)

    while not stopping:
        if not bus.events:
            bus.receive(100)
        while len(bus.events) < args.batch and bus.socket.poll(0):
            bus.receive(0)
        batch, bus.events = bus.events[: args.batch], bus.events[args.batch:]
        if not batch:
            continue
        forward, diag = [], []
        for seq, topic, event in batch:
            kind = topic.rsplit("/", 1)[-1]
            if kind in args.drop:
                continue  # filtered: it stops here
            # Passed on unchanged: same id, same bytes, by reference where the broker allows.
            forward.append((f"@{seq}".encode() if by_reference else event, len(event)))
            if kind == "message.new":
                body = json.loads(event)
                counted = {
                    "specversion": "1.0", "id": f"{args.name}:{seq}:0", "source": f"/plugins/{args.name}",
                    "type": "message.counted", "subject": body["subject"],
                    "data": {"seq": seq, "message_id": body["data"]["message"]["id"]},
                }
                if "time" in body:
                    counted["time"] = body["time"]  # the input's time: a replay makes the same bytes
                emitted = json.dumps(counted, separators=(",", ":")).encode()
                diag.append((emitted, len(emitted)))
        publish(bus, args.output, forward)
        publish(bus, "diag", diag)
        bus.send("ACK", args.name.encode(), str(batch[-1][0]).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
