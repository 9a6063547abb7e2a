"""docs/protocol.md spoken from Python with pyzmq alone: PUB, CONSUME/ACK, the stream.

Proof that the bus is usable from any language with a ZeroMQ binding.
"""
import json
import pathlib
import struct
import time
import uuid

import zmq


class Peer:
    """A DEALER speaking EB1."""

    def __init__(self, context, endpoint):
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.RCVTIMEO, 5000)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        self.counter = 0

    def send(self, verb, *args):
        self.counter += 1
        corr = f"py{self.counter}".encode()
        self.socket.send_multipart([b"EB1", verb.encode(), corr, *[a if isinstance(a, bytes) else a.encode() for a in args]])
        return corr

    def call(self, verb, *args):
        corr = self.send(verb, *args)
        while True:
            frames = self.socket.recv_multipart()
            if len(frames) >= 3 and frames[2] == corr:
                return frames

    def next_event(self):
        while True:
            frames = self.socket.recv_multipart()
            if frames[1] == b"EVT":
                _, _, name, seq, topic, event = frames
                return int(seq), topic.decode(), json.loads(event)


def event(type_, subject, data, id_=None):
    return json.dumps({
        "specversion": "1.0", "id": id_ or str(uuid.uuid4()), "source": "/python-test",
        "type": type_, "subject": subject, "time": "2026-11-22T03:10:00.123Z", "data": data,
    }).encode()


def read_ack(user, message, cid="messaging:general"):
    return event("message.read", cid, {"cid": cid, "user_id": user, "message_id": message})


def test_publish_with_confirm_returns_seqs(broker, context):
    peer = Peer(context, broker.command)
    reply = peer.call("PUB", "in", read_ack("bob", "m1"), read_ack("ann", "m1"))
    assert reply[1] == b"OK"
    assert [int(x) for x in reply[3:]] == [1, 2]


def test_compact_ok_brings_every_seq_of_a_pub_in_one_frame(broker, context):
    peer = Peer(context, broker.command)
    info = json.loads(peer.call("HELLO", json.dumps({"name": "py", "role": "backend", "version": "1", "compact_ok": True}))[3])
    assert info["compact_ok"] is True and "compact_ok" in info["features"]
    first = read_ack("bob", "m1")
    reply = peer.call("PUB", "in", first, read_ack("ann", "m1"), first)
    assert reply[1] == b"OK" and len(reply) == 4
    assert [int(x) for x in reply[3].split(b" ")] == [1, 2, 1]


def test_a_plugin_forwards_an_event_by_reference(broker, context):
    peer = Peer(context, broker.command)
    info = json.loads(peer.call("HELLO", json.dumps({"name": "py-plugin", "role": "plugin", "version": "1"}))[3])
    assert "forward" in info["features"]
    ack = read_ack("bob", "m1")
    assert peer.call("PUB", "in", ack)[3] == b"1"
    # The only plugin publishes to `out`, from `in`: "@1" appends the logged bytes there.
    assert peer.call("PUB", "out", b"@1")[3:] == [b"2"]
    assert peer.call("CONSUME", "py-out", "earliest", "10", "out/")[1] == b"OK"
    seq, topic, body = peer.next_event()
    assert (seq, topic) == (2, "out/messaging:general/message.read")
    assert body == json.loads(ack)
    # Only the stage before may be named, and only a logged SEQ.
    wrong = peer.call("PUB", "out", b"@2")
    assert wrong[1] == b"ERR" and wrong[3] == b"bad_event" and b"@2 is an event of stage out" in wrong[4]
    missing = peer.call("PUB", "out", b"@99")
    assert missing[1] == b"ERR" and missing[3] == b"bad_args" and b"@99 names no logged event" in missing[4]


def test_pubs_carries_a_batch_in_one_frame(broker, context):
    peer = Peer(context, broker.command)
    info = json.loads(peer.call("HELLO", json.dumps({"name": "py", "role": "backend", "version": "1"}))[3])
    assert "pubs" in info["features"]
    events = [read_ack("bob", "m1"), read_ack("ann", "m1"), read_ack("cat", "m1")]
    # The encoding of docs/protocol.md ("Batched publish"), run as written: each event is
    # its length in ASCII decimal, a newline, its bytes.
    docs = pathlib.Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
    section = docs.read_text().split("#### Batched publish (PUBS)")[1]
    code = section.split("```python\n")[1].split("```")[0]
    scope = {"events": events, "socket": peer.socket}
    exec(code, scope)
    reply = peer.socket.recv_multipart()
    assert reply[1] == b"OK" and reply[2] == b"b10" and [int(x) for x in reply[3:]] == [1, 2, 3]
    batch = scope["batch"]
    # The same bytes again as a PUB: deduplicated to the same SEQs.
    assert [int(x) for x in peer.call("PUB", "in", *events)[3:]] == [1, 2, 3]
    broken = peer.call("PUBS", "in", batch + b"99\n{}")
    assert broken[1] == b"ERR" and broken[3] == b"bad_frame" and b"event 3" in broken[4]


def test_error_reply_names_the_field(broker, context):
    peer = Peer(context, broker.command)
    bad = event("message.read", "messaging:general", {"cid": "messaging:general", "user_id": "@bob", "message_id": "m1"})
    reply = peer.call("PUB", "in", bad)
    assert reply[1] == b"ERR"
    assert reply[3] == b"bad_event"
    assert b"user_id" in reply[4]


def test_durable_consumer_with_ack_and_resume(broker, context):
    publisher = Peer(context, broker.command)
    publisher.call("PUB", "py-plugin", *[read_ack("bob", f"m{i}") for i in range(5)])
    consumer = Peer(context, broker.command)
    reply = consumer.call("CONSUME", "py-consumer", "earliest", "10", "py-plugin/")
    assert reply[1] == b"OK" and reply[3] == b"1"
    seen = [consumer.next_event() for _ in range(5)]
    assert [s for s, _, _ in seen] == [1, 2, 3, 4, 5]
    assert seen[0][1] == "py-plugin/messaging:general/message.read"
    consumer.send("ACK", "py-consumer", "3")
    assert consumer.call("PING")[1] == b"OK"
    # A new connection resumes after the last ACK.
    again = Peer(context, broker.command)
    assert again.call("CONSUME", "py-consumer", "resume", "10", "py-plugin/")[3] == b"4"
    assert again.next_event()[0] == 4


def test_batched_delivery_brings_many_events_per_evts_message(broker, context):
    publisher = Peer(context, broker.command)
    publisher.call("PUB", "py-plugin", *[read_ack("bob", f"m{i}") for i in range(300)])
    consumer = Peer(context, broker.command)
    hello = consumer.call("HELLO", json.dumps({"name": "py-batch", "batch": True}))
    assert hello[1] == b"OK" and json.loads(hello[3])["batch"] is True
    assert consumer.call("CONSUME", "py-batched", "earliest", "1000", "py-plugin/")[1] == b"OK"
    # The decoding loop of docs/protocol.md ("Batched delivery"), run as written.
    docs = pathlib.Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
    section = docs.read_text().split("#### Batched delivery (EVTS)")[1]
    decoder = section.split("```python\n")[1].split("```")[0]
    seqs, messages = [], 0
    while len(seqs) < 300:
        frames = consumer.socket.recv_multipart()
        if frames[1] != b"EVTS":
            continue
        assert len(frames) == 4 and frames[2] == b"py-batched"
        scope = {"batch": frames[3]}
        exec(decoder, scope)
        for seq, topic, body in scope["events"]:
            assert topic == b"py-plugin/messaging:general/message.read"
            assert json.loads(body)["data"]["message_id"] == f"m{len(seqs)}"
            seqs.append(seq)
        messages += 1
    assert seqs == list(range(seqs[0], seqs[0] + 300))
    assert messages < 300


def test_stream_subscriber_gets_out_events_with_binary_seq(broker, context):
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.RCVTIMEO, 5000)
    sub.setsockopt(zmq.SUBSCRIBE, b"out/messaging:general/")
    sub.connect(broker.stream)
    peer = Peer(context, broker.command)
    # The subscription travels to the broker: wait until STATS counts it, not for a fixed time.
    deadline = time.monotonic() + 10
    while json.loads(peer.call("STATS")[3])["stream_subscriptions"] < 1:
        assert time.monotonic() < deadline, "the subscription never reached the broker"
        time.sleep(0.01)  # a poll interval
    peer.call("PUB", "in", read_ack("bob", "m1"))
    peer.call("PUB", "out", read_ack("bob", "m1"))
    topic, seq, body = sub.recv_multipart()
    assert topic == b"out/messaging:general/message.read"
    assert struct.unpack(">Q", seq)[0] == 2
    assert json.loads(body)["data"]["user_id"] == "bob"


def test_stats_reports_stages_and_consumers(broker, context):
    peer = Peer(context, broker.command)
    peer.call("PUB", "in", read_ack("bob", "m1"))
    peer.call("CONSUME", "watcher", "earliest", "5", "in/")
    stats = json.loads(peer.call("STATS")[3])
    assert stats["head_seq"] == 1
    assert stats["stages"]["in"] == 1
    assert any(c["name"] == "watcher" and c["connected"] for c in stats["consumers"])
