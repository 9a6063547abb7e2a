"""examples/python-plugin/plugin.py as an external stage of `eventbus up`.

Its events flow in -> identity -> pyfilter -> out; it drops one type, passes the
rest on unchanged (by reference, `@SEQ`), emits `message.counted` to diag with deterministic ids, and
after a SIGKILL and restart nothing reaches `out` or `diag` twice.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import pytest
import zmq

from conftest import eventbus_binary, example_binary

PLUGIN = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python-plugin", "plugin.py")


def envelope(type_, data, id_):
    return json.dumps({"specversion": "1.0", "id": id_, "source": "/py-test", "type": type_,
                       "subject": "messaging:general", "time": "2026-11-22T03:10:00.123Z", "data": data}).encode()


def new_message(n):
    return envelope("message.new", {"cid": "messaging:general",
                                    "message": {"id": f"m{n}", "user_id": "ann", "created_at": "2026-11-22T03:10:00.123Z"}}, f"new-{n}")


def delivered(n):
    return envelope("message.delivered", {"cid": "messaging:general", "user_id": "bob", "message_id": f"m{n}"}, f"del-{n}")


class Up:
    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="eventbus-up-")
        self.command = f"ipc://{self.directory}/command.sock"
        self.log = open(os.path.join(self.directory, "up.log"), "w+")
        # identity is an example plugin (examples/plugins), not beside `eventbus`: a command of its own.
        config = os.path.join(self.directory, "up.yaml")
        with open(config, "w") as f:
            f.write("pipeline:\n  - name: identity\n    command: [%s]\n  - name: pyfilter\n    external: true\n"
                    % json.dumps(example_binary("plugins", "identity")))
        self.process = subprocess.Popen(
            [eventbus_binary(), "up", "--config", config, "--data-dir",
             os.path.join(self.directory, "data"), "--command", self.command, "--stream", f"ipc://{self.directory}/stream.sock"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.plugin = None

    def start_plugin(self):
        self.plugin = subprocess.Popen(
            [sys.executable, PLUGIN, "--name", "pyfilter", "--input", "identity", "--output", "out",
             "--command", self.command, "--drop", "message.delivered", "--batch", "50"],
            stdout=subprocess.DEVNULL, stderr=self.log)

    def wait_for(self, text, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            self.log.seek(0)
            if text in self.log.read():
                return
            assert self.process.poll() is None, "eventbus up exited"
            time.sleep(0.05)  # a poll interval
        self.log.seek(0)
        raise AssertionError(f"{text!r} not logged; log:\n{self.log.read()}")

    def close(self):
        for p in (self.plugin, self.process):
            if p and p.poll() is None:
                p.terminate()
        status = self.process.wait(timeout=20)
        if self.plugin:
            self.plugin.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)
        return status


@pytest.fixture
def up():
    bus = Up()
    yield bus
    bus.close()


def call(socket, verb, *args):
    corr = uuid.uuid4().hex[:8].encode()
    socket.send_multipart([b"EB1", verb.encode(), corr, *args])
    while True:
        frames = socket.recv_multipart()
        if frames[2] == corr:
            return frames


def read_ids(context, endpoint, prefix, count, name):
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.RCVTIMEO, 20000)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    assert call(socket, "CONSUME", name.encode(), b"earliest", b"10000", prefix.encode())[1] == b"OK"
    ids = []
    while len(ids) < count:
        frames = socket.recv_multipart()
        if frames[1] == b"EVT":
            ids.append(json.loads(frames[5])["id"])
    socket.close()
    return ids


def test_python_plugin_filters_passes_and_emits_as_an_external_stage(up, context):
    up.start_plugin()
    up.wait_for("eventbus ready")
    publisher = context.socket(zmq.DEALER)
    publisher.setsockopt(zmq.RCVTIMEO, 20000)
    publisher.setsockopt(zmq.LINGER, 0)
    publisher.connect(up.command)
    seqs = {}
    for n in range(300):
        reply = call(publisher, "PUB", b"in", new_message(n), delivered(n))
        assert reply[1] == b"OK", reply
        seqs[n] = int(reply[3])
        if n == 150:
            up.plugin.send_signal(signal.SIGKILL)  # mid-stream, with work in hand
            up.plugin.wait()
            up.start_plugin()
    # Deliveries were dropped; every message.new passed on unchanged, once, in order.
    assert read_ids(context, up.command, "out/", 300, "check-out") == [f"new-{n}" for n in range(300)]
    # message.counted carries the id derived from the identity stage's SEQ; count them once each.
    counted = read_ids(context, up.command, "diag/", 300, "check-diag")
    assert len(counted) == len(set(counted)) == 300
    assert all(i.startswith("pyfilter:") and i.endswith(":0") for i in counted)
    stats = json.loads(call(publisher, "STATS")[3])
    assert stats["stages"]["out"] == 300
    assert stats["stages"]["diag"] == 300
    # Passes go by reference ("@SEQ"), which the broker offers in HELLO: the identity stage's 600
    # events and the plugin's 300 message.new, none appended twice by the replay after the kill.
    assert stats["forwarded"] == 900
    publisher.close()


def test_up_stops_cleanly_on_sigterm(up):
    up.start_plugin()
    up.wait_for("eventbus ready")
    up.process.send_signal(signal.SIGTERM)
    assert up.process.wait(timeout=20) == 0
