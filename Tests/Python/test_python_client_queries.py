"""The eventbus package's queries (REQ) against `eventbus up` with the receipt reducer, and
the services a PluginRunner answers."""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from eventbus import (BadRequestError, BusError, Client, NotFoundError, PluginRunner, UnknownServiceError,
                      make_event)
from conftest import eventbus_binary

CID = "messaging:general"


class Up:
    """`eventbus up` with the given pipeline on ipc endpoints in a temp dir."""

    def __init__(self, pipeline):
        self.directory = tempfile.mkdtemp(prefix="eventbus-py-up-")
        self.command = f"ipc://{self.directory}/command.sock"
        self.stream = f"ipc://{self.directory}/stream.sock"
        self.log = open(os.path.join(self.directory, "up.log"), "w+")
        self.process = subprocess.Popen(
            [eventbus_binary(), "up", "--pipeline", pipeline, "--data-dir", os.path.join(self.directory, "data"),
             "--command", self.command, "--stream", self.stream], stdout=subprocess.DEVNULL, stderr=self.log)

    def wait_ready(self, seconds=30):
        deadline = time.monotonic() + seconds
        while True:
            self.log.seek(0)
            if "eventbus ready" in self.log.read():
                return
            assert self.process.poll() is None, "eventbus up exited"
            assert time.monotonic() < deadline, "eventbus up did not get ready"
            time.sleep(0.05)  # a poll interval

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=20)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        return status


@pytest.fixture
def receipts():
    up = Up("receipt-reducer")
    up.wait_ready()
    yield up
    assert up.close() == 0


def chat(type_, data, id_, subject=CID):
    return make_event(type_, subject, data, source="/py-client-test", id=id_, time="2026-11-22T09:00:00.000Z")


def test_receipts_queries_return_parsed_json(receipts):
    with Client(receipts.command) as bus:
        bus.publish([
            chat("channel.created", {"cid": CID, "members": ["ann", "bob", "cat"]}, "c1"),
            chat("message.new", {"cid": CID, "message": {"id": "m1", "user_id": "ann",
                                                         "created_at": "2026-11-22T09:00:00.000Z"}}, "n1"),
            chat("message.read", {"cid": CID, "user_id": "bob", "message_id": "m1"}, "r1"),
        ])
        # Read-your-writes: the query travels the log behind the events confirmed before it.
        receipts_ = bus.message_receipts(CID, "m1", "ann")
        assert receipts_["read_count"] == 1
        assert receipts_["unread_member_count"] == 1
        assert [r["user_id"] for r in receipts_["readers"]] == ["bob"]
        assert receipts_["next_cursor"] is None
        counts = bus.unread_counts("cat")
        assert counts["total_unread_count"] == 1
        assert [(c["cid"], c["first_unread_message_id"]) for c in counts["channels"]] == [(CID, "m1")]
        assert bus.unread_counts("bob")["total_unread_count"] == 0
        state = bus.channel_state(CID, "ann", page_size=2)
        assert [m["user_id"] for m in state["members"]] == ["ann", "bob"]
        assert state["next_cursor"] is not None
        rest = bus.channel_state(CID, "ann", page_size=2, cursor=state["next_cursor"])
        assert [m["user_id"] for m in rest["members"]] == ["cat"]
        assert bus.query("unread_counts", {"user_id": "bob"})["total_unread_count"] == 0

        # Errors from the service and from the broker, each with its code.
        with pytest.raises(NotFoundError) as refused:
            bus.message_receipts("messaging:nope", "m1", "ann")
        assert refused.value.code == "not_found"
        with pytest.raises(BadRequestError) as refused:
            bus.query("unread_counts", {})
        assert refused.value.code == "bad_request" and "user_id" in refused.value.message
        with pytest.raises(BadRequestError) as refused:
            bus.query("no_such_method")
        assert refused.value.code == "bad_request"
        with pytest.raises(UnknownServiceError) as refused:
            bus.request("weather", "today")
        assert refused.value.code == "unknown_service"


@pytest.fixture
def echo_plugin(broker):
    """A PluginRunner that answers the service `echo`, as the only plugin (py-plugin)."""
    def handle(delivery, output):
        query = output.query
        if query is not None and query.service == "echo":
            if query.method == "say":
                output.reply({"echo": query.params})
            else:
                output.reply(error_code="not_found", error_message=f"no method {query.method}")
        else:
            output.forward()

    runner = PluginRunner("py-plugin", handle, input="in", output="out", command=broker.command,
                          services=["echo"], batch=10)
    thread = threading.Thread(target=runner.run)
    thread.start()
    yield runner
    runner.stop()
    thread.join(timeout=20)
    assert not thread.is_alive()


def test_a_plugin_runner_answers_its_service(broker, echo_plugin):
    with Client(broker.command) as bus:
        deadline = time.monotonic() + 20
        while True:  # until the runner's HELLO has declared the service
            try:
                answer = bus.request("echo", "say", {"x": [1, 2]})
                break
            except UnknownServiceError:
                assert time.monotonic() < deadline, "the runner never declared its service"
                time.sleep(0.02)  # a poll interval
        assert answer == {"echo": {"x": [1, 2]}}
        with pytest.raises(NotFoundError) as refused:
            bus.request("echo", "shout")
        assert isinstance(refused.value, BusError)
        assert (refused.value.code, refused.value.message) == ("not_found", "no method shout")
