"""eventbus.PluginRunner against a real broker: deterministic ids, ACK after confirms,
exactly one copy of each output after a SIGKILL and a restart, and state that resumes
from its snapshot."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from eventbus import Client, PluginRunner, UnknownServiceError, UnknownStageError, make_event

CID = "messaging:general"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python", "src")

# A plugin as a process of its own, so that it can be killed: it passes every event on and
# emits two events to diag for each message.new.
COUNTING_PLUGIN = """
import sys
from eventbus import PluginRunner

def handle(delivery, output):
    output.forward()
    if delivery.type == "message.new":
        time = delivery.event().get("time")
        output.emit("message.counted", delivery.subject, {"seq": delivery.seq}, time=time, to="diag")
        output.emit("message.counted", delivery.subject, {"seq": delivery.seq, "again": True}, time=time, to="diag")

PluginRunner("py-plugin", handle, input="in", output="out", command=sys.argv[1], batch=7, credit=20).run()
"""


def new_message(n):
    return make_event("message.new", CID, {"cid": CID, "message": {"id": f"m{n}", "user_id": "ann",
                                                                   "created_at": "2026-11-22T03:10:00.123Z"}},
                      source="/py-client-test", id=f"new-{n}", time="2026-11-22T03:10:00.123Z")


def read_all(bus, name, prefix, count):
    """The first `count` events of a stage, through a durable consumer of its own."""
    consumer = bus.consume(name, prefix, start="earliest", credit=10000)
    deliveries = [consumer.receive(20) for _ in range(count)]
    assert None not in deliveries, f"fewer than {count} events on {prefix}"
    return deliveries


def wait_acked(bus, name, seq, seconds=30):
    deadline = time.monotonic() + seconds
    while True:
        acked = next((c["acked"] for c in bus.stats()["consumers"] if c["name"] == name), 0)
        if acked >= seq:
            return acked
        assert time.monotonic() < deadline, f"{name} acked {acked}, not {seq}"
        time.sleep(0.02)  # a poll interval


def test_a_killed_plugin_resumes_and_each_output_is_there_once_with_its_id(broker, tmp_path):
    script = tmp_path / "counting_plugin.py"
    script.write_text(COUNTING_PLUGIN)
    env = {**os.environ, "PYTHONPATH": SOURCE}

    def start():
        return subprocess.Popen([sys.executable, str(script), broker.command], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    plugin = start()
    try:
        with Client(broker.command) as bus:
            in_seqs = []
            for round_ in range(20):
                in_seqs += bus.publish([new_message(round_ * 10 + n) for n in range(10)])
                if round_ == 9:
                    # Killed with work in hand, once it has acknowledged some of it.
                    wait_acked(bus, "py-plugin", 1)
                    plugin.send_signal(signal.SIGKILL)
                    plugin.wait()
                    plugin = start()
            wait_acked(bus, "py-plugin", in_seqs[-1])
            out = read_all(bus, "check-out", "out/", 200)
            assert [d.event()["id"] for d in out] == [f"new-{n}" for n in range(200)]
            diag = read_all(bus, "check-diag", "diag/", 400)
            # <plugin>:<input SEQ>:<n>, n counting each input's outputs from 0, in input order.
            assert [d.event()["id"] for d in diag] == [f"py-plugin:{s}:{n}" for s in in_seqs for n in (0, 1)]
            assert all(d.event()["source"] == "/eventbus/py-plugin" for d in diag)
            stats = bus.stats()
            assert stats["stages"]["out"] == 200 and stats["stages"]["diag"] == 400
            # Passed on by reference, once each: the replay's repeats were deduplicated.
            assert stats["forwarded"] == 200
    finally:
        plugin.kill()
        plugin.wait()


class Counter:
    """A plugin with state: counts message.new and answers the service `count`."""

    def __init__(self):
        self.count = 0

    def handle(self, delivery, output):
        query = output.query
        if query is not None and query.service == "count":
            output.reply({"count": self.count})
            return
        if delivery.type == "message.new":
            self.count += 1
        output.forward()

    def runner(self, broker, data_dir):
        return PluginRunner("py-plugin", self.handle, input="in", output="out", command=broker.command, batch=4,
                            services=["count"], data_dir=str(data_dir), snapshot=lambda: {"count": self.count},
                            restore=lambda state: setattr(self, "count", state["count"]))


def run_counter(broker, data_dir, messages, first):
    """Runs a Counter until it has answered a count after `messages` more message.new; returns
    the count it answered."""
    counter = Counter()
    runner = counter.runner(broker, data_dir)
    thread = threading.Thread(target=runner.run)
    thread.start()
    try:
        with Client(broker.command) as bus:
            bus.publish([new_message(n) for n in range(first, first + messages)])
            deadline = time.monotonic() + 20
            while True:  # until the runner's HELLO has declared the service
                try:
                    return bus.request("count", "get")["count"]
                except UnknownServiceError:
                    assert time.monotonic() < deadline, "the runner never declared its service"
                    time.sleep(0.02)  # a poll interval
    finally:
        runner.stop()
        thread.join(timeout=20)
        assert not thread.is_alive()


def test_a_plugin_with_state_resumes_from_its_snapshot(broker, tmp_path):
    data_dir = tmp_path / "py-plugin"
    assert run_counter(broker, data_dir, 10, 0) == 10
    snapshot = json.loads((data_dir / "state.snapshot").read_text())
    assert snapshot["state"] == {"count": 10} and snapshot["seq"] >= 10
    assert oct(os.stat(data_dir / "state.snapshot").st_mode & 0o777) == "0o600"
    shutil.copy(data_dir / "state.snapshot", tmp_path / "first.snapshot")
    # Restarted: its state comes back, and the events after the snapshot are counted once.
    assert run_counter(broker, data_dir, 5, 10) == 15
    # As if it had crashed after its ACKs but before the second snapshot: the state of the
    # first, and the events after it handled again, whatever the consumer's offset.
    shutil.copy(tmp_path / "first.snapshot", data_dir / "state.snapshot")
    assert run_counter(broker, data_dir, 2, 15) == 17
    with Client(broker.command) as bus:
        out = read_all(bus, "check-out", "out/", 17)
        assert [d.event()["id"] for d in out] == [f"new-{n}" for n in range(17)]
        assert bus.stats()["stages"]["out"] == 17 + 3  # and the three replies, each once


def test_a_runner_whose_outputs_are_refused_acknowledges_nothing(broker):
    def handle(delivery, output):
        output.forward()
        output.emit("message.counted", delivery.subject, {"seq": delivery.seq}, to="diag")

    with Client(broker.command) as bus:
        in_seqs = bus.publish([new_message(n) for n in range(5)])
        # Its output stage does not exist: the PUB is refused, run() raises the bus's error,
        # and no ACK went, so nothing is lost.
        wrong = PluginRunner("py-plugin", handle, input="in", output="nowhere", command=broker.command)
        with pytest.raises(UnknownStageError) as refused:
            wrong.run()
        assert refused.value.code == "unknown_stage"
        assert next(c for c in bus.stats()["consumers"] if c["name"] == "py-plugin")["acked"] == 0
        assert bus.stats()["stages"]["diag"] == 0
        # The next run, with the right stage, starts from the first event.
        right = PluginRunner("py-plugin", handle, input="in", output="out", command=broker.command)
        thread = threading.Thread(target=right.run)
        thread.start()
        try:
            wait_acked(bus, "py-plugin", in_seqs[-1])
        finally:
            right.stop()
            thread.join(timeout=20)
        diag = read_all(bus, "check-diag", "diag/", 5)
        assert [d.event()["id"] for d in diag] == [f"py-plugin:{s}:0" for s in in_seqs]
