"""The eventbus package (clients/python) against a real broker: publish with confirms and
dedup on retry, typed errors, durable consumers (EVT and EVTS, credit, ACK, CANCEL, takeover,
resume after a new connection and after a broker restart), the stream, and STATS."""
import itertools
import os
import signal
import threading

import pytest

from eventbus import (BadArgsError, BadEventError, BusError, Client, ConsumerEndedError, NoReplyError,
                      Subscription, TooLargeError, UnknownStageError, UnknownTypeError, make_event)

CID = "messaging:general"
TIME = "2026-11-22T03:10:00.123Z"


def read_ack(user, message, id_=None):
    return make_event("message.read", CID, {"cid": CID, "user_id": user, "message_id": message},
                      source="/py-client-test", id=id_, time=TIME)


@pytest.fixture
def client(broker):
    bus = Client(broker.command, timeout=10)
    yield bus
    bus.close()


def consumer_stats(client, name):
    return next(c for c in client.stats()["consumers"] if c["name"] == name)


@pytest.mark.parametrize("pubs", [True, False], ids=["PUBS", "PUB"])
def test_publish_returns_the_seqs_and_a_retry_is_deduplicated(broker, pubs):
    with Client(broker.command, use_pubs=pubs, compact_ok=pubs) as bus:
        assert ("pubs" in bus.features) is True
        events = [read_ack(user, "m1") for user in ("ann", "bob", "cat")]
        assert bus.publish(events) == [1, 2, 3]
        # The same events again (same source and id): the original SEQs, nothing appended.
        assert bus.publish(events) == [1, 2, 3]
        assert bus.publish_one(events[1]) == 2
        # Bytes are published as they are; a new id is a new event.
        assert bus.publish([read_ack("dan", "m1")]) == [4]
        stats = bus.stats()
        assert stats["stages"]["in"] == 4
        assert stats["dedup_hits"] == 4


def test_a_large_publish_is_split_into_batches_within_the_limits(client):
    events = [read_ack(f"u{n}", "m1") for n in range(2500)]
    seqs = client.publish(events)
    assert seqs == list(range(1, 2501))
    assert client.publish(events[1000:1003]) == [1001, 1002, 1003]


@pytest.mark.parametrize("pubs", [True, False], ids=["PUBS", "PUB"])
def test_a_bad_event_raises_its_code_and_names_the_field(broker, pubs):
    with Client(broker.command, use_pubs=pubs) as bus:
        bad = read_ack("bo b", "m1")
        with pytest.raises(BadEventError) as refused:
            bus.publish([read_ack("ann", "m1"), bad, read_ack("cat", "m1")])
        error = refused.value
        assert isinstance(error, BusError)
        assert error.code == "bad_event"
        assert error.event_index == 1
        assert error.field == "data.user_id"
        assert "must match" in error.message

        liked = make_event("message.liked", CID, {"cid": CID}, source="/py-client-test")
        with pytest.raises(UnknownTypeError) as refused:
            bus.publish([liked])
        assert (refused.value.code, refused.value.event_index, refused.value.field) == ("unknown_type", 0, "type")

        with pytest.raises(UnknownStageError) as refused:
            bus.publish([read_ack("ann", "m1")], stage="nowhere")
        assert refused.value.code == "unknown_stage"

        huge = read_ack("ann", "m1")
        huge["data"]["padding"] = "x" * 70_000
        with pytest.raises(TooLargeError) as refused:
            bus.publish([huge])
        assert refused.value.code == "too_large" and refused.value.event_index == 0

        # All or nothing: not one of those events was appended.
        assert bus.stats()["head_seq"] == 0
        assert bus.stats()["rejected"] == {"bad_event": 1, "unknown_type": 1, "unknown_stage": 1, "too_large": 1}


def test_a_publish_without_a_reply_is_sent_again_and_not_appended_twice(broker):
    pid = broker.process.pid
    events = [read_ack(user, "m1") for user in ("ann", "bob")]
    with Client(broker.command, timeout=0.5) as bus:
        assert bus.publish([read_ack("zed", "m0")]) == [1]
        os.kill(pid, signal.SIGSTOP)
        try:
            # No answer in time: the client cannot know whether the batch was appended.
            with pytest.raises(NoReplyError):
                bus.publish(events, attempts=1)
        finally:
            os.kill(pid, signal.SIGCONT)
        # The retry, with the same ids, answers the SEQs the first attempt got.
        assert bus.publish(events, attempts=20) == [2, 3]

        # The client's own retry: the first attempt times out, the broker resumes before the second.
        retries = []

        def resume(attempt, error):
            retries.append((attempt, type(error)))
            os.kill(pid, signal.SIGCONT)

        more = [read_ack(user, "m2") for user in ("ann", "bob", "cat")]
        os.kill(pid, signal.SIGSTOP)
        try:
            assert bus.publish(more, attempts=20, on_retry=resume) == [4, 5, 6]
        finally:
            os.kill(pid, signal.SIGCONT)
        assert retries[0] == (1, NoReplyError)
        bus.timeout = 10
        stats = bus.stats()
        assert stats["stages"]["in"] == 6
        assert stats["dedup_hits"] >= 2


def test_a_publish_across_a_broker_restart_is_confirmed_once(broker):
    events = [read_ack(user, "m1") for user in ("ann", "bob")]
    with Client(broker.command, timeout=30) as bus:
        assert bus.publish([read_ack("zed", "m0")]) == [1]
        broker.stop()
        # The broker starts again while the client publishes: the PUB waits in the socket for
        # the new connection (or, lost with the old one, is sent again once the client sees
        # the reconnection), and the answer comes without a retry of the caller's.
        starter = threading.Thread(target=broker.start)
        starter.start()
        try:
            assert bus.publish(events, attempts=1) == [2, 3]
        finally:
            starter.join()
        assert bus.publish(events) == [2, 3]
        assert bus.stats()["stages"]["in"] == 3


@pytest.mark.parametrize("batch", [True, False], ids=["EVTS", "EVT"])
def test_consume_iterates_acks_and_resumes_on_a_new_connection(broker, client, batch):
    client.publish([read_ack("bob", f"m{i}") for i in range(5)], stage="py-plugin")
    with Client(broker.command, batch=batch) as reader:
        consumer = reader.consume("py-reader", "py-plugin/", start="earliest", credit=10)
        assert consumer.first_seq == 1
        seen = list(itertools.islice(consumer, 5))
        assert [d.seq for d in seen] == [1, 2, 3, 4, 5]
        assert seen[0].topic == "py-plugin/messaging:general/message.read"
        assert (seen[0].stage, seen[0].subject, seen[0].type) == ("py-plugin", CID, "message.read")
        assert [d.event()["data"]["message_id"] for d in seen] == [f"m{i}" for i in range(5)]
        consumer.ack(seen[2], wait=True)
        assert consumer_stats(client, "py-reader")["acked"] == 3
    # A new connection resumes after the last ACK: 4 and 5 come again.
    with Client(broker.command, batch=batch) as again:
        consumer = again.consume("py-reader", ["py-plugin/"])
        assert consumer.first_seq == 4
        assert [consumer.receive(10).seq for _ in range(2)] == [4, 5]


def test_credit_bounds_the_events_in_flight(broker, client):
    client.publish([read_ack("bob", f"m{i}") for i in range(5)], stage="py-plugin")
    with Client(broker.command) as reader:
        consumer = reader.consume("py-credit", "py-plugin/", start="earliest", credit=2)
        assert [consumer.receive(10).seq for _ in range(2)] == [1, 2]
        assert consumer_stats(client, "py-credit")["in_flight"] == 2
        consumer.ack(1)
        assert consumer.receive(10).seq == 3
        assert consumer_stats(client, "py-credit")["in_flight"] == 2


def test_a_consumer_attaches_again_after_the_broker_restarts(broker, client):
    client.publish([read_ack("bob", f"m{i}") for i in range(3)], stage="py-plugin")
    reader = Client(broker.command)
    try:
        consumer = reader.consume("py-restart", "py-plugin/", start="earliest", credit=100)
        assert [d.seq for d in itertools.islice(consumer, 3)] == [1, 2, 3]
        consumer.ack(2, wait=True)
        broker.stop()
        broker.start()
        # The broker came back without this consumer attached: the client sees the
        # reconnection and attaches it again, after what it handed out.
        with Client(broker.command) as publisher:
            assert publisher.publish([read_ack("bob", f"m{i}") for i in range(3, 5)], stage="py-plugin") == [4, 5]
            assert [consumer.receive(10).seq for _ in range(2)] == [4, 5]
            consumer.ack(5, wait=True)
            state = consumer_stats(publisher, "py-restart")
            assert state["acked"] == 5 and state["connected"] is True
    finally:
        reader.close()


def test_a_consumer_taken_over_ends_and_cancel_keeps_the_offset(broker, client):
    client.publish([read_ack("bob", f"m{i}") for i in range(4)], stage="py-plugin")
    first = Client(broker.command)
    second = Client(broker.command)
    try:
        mine = first.consume("py-shared", "py-plugin/", start="earliest", credit=10)
        assert mine.receive(10).seq == 1
        mine.ack(1, wait=True)
        theirs = second.consume("py-shared", "py-plugin/", credit=10)
        assert theirs.first_seq == 2
        with pytest.raises(ConsumerEndedError) as ended:
            while True:  # until the END arrives
                mine.receive(10)
        assert ended.value.name == "py-shared" and "taken over" in ended.value.reason
        assert theirs.receive(10).seq == 2
        theirs.ack(2, wait=True)
        theirs.cancel()
        state = consumer_stats(client, "py-shared")
        assert state["connected"] is False and state["acked"] == 2
        # An ACK of a SEQ past the head is refused with its code.
        again = second.consume("py-shared", "py-plugin/")
        assert again.first_seq == 3
        with pytest.raises(BadArgsError):
            again.ack(99, wait=True)
    finally:
        first.close()
        second.close()


def test_the_stream_brings_out_and_diag_with_their_seqs(broker, client):
    with Subscription(broker.stream, f"out/{CID}/") as subscription:
        subscription.wait_until_subscribed(client, 1)
        subscription.subscribe("diag/")
        subscription.wait_until_subscribed(client, 2)
        client.publish([read_ack("bob", "m1")])  # stage in: never on the stream
        out_seq = client.publish_one(read_ack("bob", "m2"), stage="out")
        diag_seq = client.publish_one(read_ack("bob", "m3"), stage="diag")
        first, second = subscription.receive(10), subscription.receive(10)
        assert (first.seq, first.topic, first.stage) == (out_seq, f"out/{CID}/message.read", "out")
        assert first.event()["data"]["message_id"] == "m2"
        assert (second.seq, second.stage, second.type) == (diag_seq, "diag", "message.read")
