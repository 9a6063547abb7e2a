"""docs/python.md run as written: its plugin block as the `audit` stage of `eventbus up`, and
the blocks of its tour in order in one session, on this test's endpoints."""
import contextlib
import io
import os
import re
import signal
import subprocess
import sys

from eventbus import Client
from test_python_client_queries import Up

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def blocks(info):
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    return [m.group(1) for m in re.finditer(r"^```" + re.escape(info) + r"\n(.*?)^```$", text, re.S | re.M)]


def on(up, code):
    return code.replace("tcp://127.0.0.1:7750", up.command).replace("tcp://127.0.0.1:7751", up.stream)


def test_the_python_page_runs_as_written(tmp_path):
    tour, (plugin,) = blocks("python"), blocks("python plugin")
    assert len(tour) == 5
    up = Up("receipt-reducer,external:audit")
    script = tmp_path / "audit.py"
    script.write_text(on(up, plugin))
    audit = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "clients", "python", "src")})
    try:
        up.wait_ready()  # every stage has its consumer: audit too
        printed = io.StringIO()
        scope = {"__name__": "docs_python"}
        with contextlib.redirect_stdout(printed):
            for block in tour:
                exec(on(up, block), scope)
        out = printed.getvalue()
        assert "published as [1, 2, 3]" in out
        assert "bad_event 0 data.user_id" in out
        assert "m1 read by ['bob']" in out
        assert "bob has 0 unread" in out
        consumed = [line.split() for line in out.splitlines() if line.split()[0].isdigit()]
        # What the reducer made of events 2 (message.new) and 3 (message.read), with its ids.
        assert [line[1:] for line in consumed][:2] == [["out/messaging:general/message.new", "receipt-reducer:2:0"],
                                                       ["out/messaging:general/message.read", "receipt-reducer:3:0"]]
        assert re.search(r"^live: \d+ message\.new m2$", out, re.M)
        # The plugin's record, on diag, with its deterministic id.
        with Client(up.command) as bus:
            record = bus.consume("check-audit", "diag/", start="earliest").receive(20)
            assert record is not None and record.type == "audit.read"
            assert record.event()["id"] == f"audit:{record.event()['data']['seq']}:0"
            assert record.event()["data"]["user_id"] == "bob"
        audit.send_signal(signal.SIGTERM)
        assert audit.wait(timeout=20) == 0, audit.stderr.read().decode()
    finally:
        if audit.poll() is None:
            audit.kill()
            audit.wait()
        assert up.close() == 0
