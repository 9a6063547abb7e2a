"""The README's five-minute tour, run as written against `eventbus up` on the default endpoints."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from conftest import eventbus_binary

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def tour_script():
    readme = open(os.path.join(ROOT, "README.md")).read()
    section = readme.split("## A five-minute tour", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    assert "alias eventbus=" in block
    # Live and durable tails run until stopped: give them a few seconds and a count.
    wrapper = ('eventbus() { case "$1" in tail) timeout 5 "$EVENTBUS_BIN" "$@" --count 3 || true ;; '
               '*) "$EVENTBUS_BIN" "$@" ;; esac; }')
    return re.sub(r"^alias eventbus=.*$", wrapper, block, flags=re.M)


def test_readme_tour_runs_as_written():
    directory = tempfile.mkdtemp(prefix="eventbus-tour-")
    log = open(os.path.join(directory, "up.log"), "w+")
    up = subprocess.Popen([eventbus_binary(), "up", "--data-dir", os.path.join(directory, "data")],
                          stdout=subprocess.DEVNULL, stderr=log, cwd=directory)
    try:
        deadline = time.time() + 30
        while True:
            log.seek(0)
            if "eventbus ready" in log.read():
                break
            assert up.poll() is None and time.time() < deadline, "eventbus up did not get ready"
            time.sleep(0.05)  # a poll interval
        result = subprocess.run(["bash", "-e", "-c", tour_script()], capture_output=True, text=True, timeout=120,
                                env={**os.environ, "EVENTBUS_BIN": eventbus_binary()}, cwd=directory)
        assert result.returncode == 0, result.stderr
        out = result.stdout
        assert "published 3 events" in out
        lines = [line for line in out.splitlines() if line.startswith("{")]
        replies = [json.loads(line) for line in lines]
        assert {"total_unread_count": 0, "unread_channels": 0, "total_unread_mentions": 0, "channels": []} in replies
        receipts = next(r for r in replies if "read_count" in r)
        assert receipts["read_count"] == 1 and receipts["readers"][0]["user_id"] == "bob"
        assert any(r.get("topic", "").startswith("in/") for r in replies), "the durable tail printed events"
        assert "head seq" in out and "CONSUMER" in out, "stats printed its table"
    finally:
        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=20) == 0
        shutil.rmtree(directory, ignore_errors=True)
