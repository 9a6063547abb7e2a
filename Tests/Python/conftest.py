"""Starts a real `eventbus broker` process for each test, on ipc endpoints in a temp dir."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
import zmq

# The eventbus package (clients/python) is imported from this checkout: no install step, and
# never a copy installed from elsewhere.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python", "src"))


def eventbus_binary():
    path = os.environ.get("EVENTBUS_BIN") or os.path.join(
        os.path.dirname(__file__), "..", "..", ".build", "debug", "eventbus")
    if not os.path.exists(path):
        raise RuntimeError(f"eventbus binary not found at {path}: run `swift build` first")
    return path


def example_binary(package, name):
    """An example's executable: examples/PACKAGE is a package of its own, built into its own
    .build (`make test` builds it); EVENTBUS_EXAMPLE_<PACKAGE>_BIN names another folder."""
    variable = "EVENTBUS_EXAMPLE_" + package.upper().replace("-", "_") + "_BIN"
    folder = os.environ.get(variable) or os.path.join(
        os.path.dirname(__file__), "..", "..", "examples", package, ".build", "debug")
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        raise RuntimeError(f"{name} not found at {path}: run `swift build --package-path examples/{package}` first")
    return path


class BrokerProcess:
    def __init__(self, directory, *extra):
        self.directory = directory
        self.command = f"ipc://{directory}/command.sock"
        self.stream = f"ipc://{directory}/stream.sock"
        self.extra = list(extra)
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [eventbus_binary(), "broker", "--data-dir", os.path.join(self.directory, "data"),
             "--command", self.command, "--stream", self.stream, *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(self.directory, "command.sock")):
            if self.process.poll() is not None:
                raise RuntimeError("broker exited: " + self.process.stderr.read().decode())
            if time.time() > deadline:
                raise RuntimeError("broker did not bind its command socket")
            time.sleep(0.02)  # a poll interval

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def broker():
    directory = tempfile.mkdtemp(prefix="eventbus-py-")
    bus = BrokerProcess(directory, "--pipeline", "py-plugin")
    bus.start()
    yield bus
    bus.stop()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def context():
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)
