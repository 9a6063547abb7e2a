"""CURVE from Python with pyzmq alone, from docs/security.md: keys made by
pyzmq, a security file, and each role doing what its table row says."""
import os
import shutil
import tempfile

import pytest
import zmq
import zmq.utils.monitor

from conftest import BrokerProcess
from test_protocol import read_ack


def write_key(path, key, secret):
    # The key file format of docs/security.md: comment lines, one Z85 key line.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if secret else 0o644)
    with os.fdopen(fd, "w") as f:
        f.write("# written by test_curve.py\n" + key.decode() + "\n")


@pytest.fixture
def secure_broker():
    directory = tempfile.mkdtemp(prefix="eventbus-py-curve-")
    keys = {name: zmq.curve_keypair() for name in ("broker", "backend", "watcher", "ops", "stranger")}
    write_key(os.path.join(directory, "broker.secret"), keys["broker"][1], secret=True)
    with open(os.path.join(directory, "security.yaml"), "w") as f:
        f.write("secret_key_file: broker.secret\nclients:\n"
                f"  - name: backend\n    public_key: \"{keys['backend'][0].decode()}\"\n    role: backend\n"
                f"  - name: watcher\n    public_key: \"{keys['watcher'][0].decode()}\"\n    role: subscriber\n"
                f"  - name: ops\n    public_key: \"{keys['ops'][0].decode()}\"\n    role: admin\n")
    bus = BrokerProcess(directory, "--pipeline", "py-plugin", "--security", os.path.join(directory, "security.yaml"))
    bus.start()
    bus.keys = keys
    yield bus
    bus.stop()
    shutil.rmtree(directory, ignore_errors=True)


def curve_socket(context, kind, keys, server_public, endpoint):
    socket = context.socket(kind)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 3000)
    socket.curve_serverkey = server_public
    socket.curve_publickey, socket.curve_secretkey = keys
    socket.connect(endpoint)
    return socket


def call(socket, *frames):
    socket.send_multipart([b"EB1", *[f if isinstance(f, bytes) else f.encode() for f in frames]])
    while True:
        reply = socket.recv_multipart()
        if reply[2] == frames[1].encode():
            return reply


def test_roles_and_the_stream_over_curve(secure_broker, context):
    server = secure_broker.keys["broker"][0]
    backend = curve_socket(context, zmq.DEALER, secure_broker.keys["backend"], server, secure_broker.command)
    watcher = curve_socket(context, zmq.DEALER, secure_broker.keys["watcher"], server, secure_broker.command)

    assert call(backend, "PUB", "c1", "in", read_ack("bob", "m1"))[1] == b"OK"
    refused = call(backend, "STATS", "c2")
    assert refused[1] == b"ERR" and refused[3] == b"forbidden"
    refused = call(watcher, "PUB", "c3", "in", read_ack("eve", "m1"))
    assert refused[3] == b"forbidden" and b"PUB" in refused[4]
    assert call(watcher, "CONSUME", "c4", "watcher.out", "earliest", "10", "out/")[1] == b"OK"
    assert call(watcher, "CONSUME", "c5", "watcher.in", "earliest", "10", "in/")[3] == b"forbidden"

    # The stream: the subscriber's empty prefix is narrowed to diag/ and out/.
    sub = curve_socket(context, zmq.SUB, secure_broker.keys["watcher"], server, secure_broker.stream)
    sub.setsockopt(zmq.RCVTIMEO, 200)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    admin = curve_socket(context, zmq.DEALER, secure_broker.keys["ops"], server, secure_broker.command)
    stages = set()
    for round_ in range(30):
        for stage in ("in", "py-plugin", "out", "diag"):
            assert call(admin, "PUB", f"a{round_}{stage}", stage, read_ack("bob", f"m{round_}"))[1] == b"OK"
        try:
            while True:
                stages.add(sub.recv_multipart()[0].split(b"/")[0])
        except zmq.Again:
            pass
        if stages >= {b"out", b"diag"}:
            break
    assert stages == {b"out", b"diag"}


def refused_handshake(socket, endpoint):
    """Connects `socket` with a monitor and returns once the broker refused its handshake
    (a positive control: a wait for "no answer" alone passes on a machine too slow to answer)."""
    monitor = socket.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                                        | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_SUCCEEDED)
    monitor.setsockopt(zmq.RCVTIMEO, 20000)
    socket.connect(endpoint)
    try:
        socket.send_multipart([b"EB1", b"PING", b"p"], flags=zmq.DONTWAIT)
    except zmq.Again:
        pass
    event = zmq.utils.monitor.recv_monitor_message(monitor)["event"]
    socket.disable_monitor()
    monitor.close()
    return event != zmq.EVENT_HANDSHAKE_SUCCEEDED


def test_unknown_key_and_clear_text_get_no_answer(secure_broker, context):
    server = secure_broker.keys["broker"][0]
    stranger = context.socket(zmq.DEALER)
    stranger.setsockopt(zmq.LINGER, 0)
    stranger.curve_serverkey = server
    stranger.curve_publickey, stranger.curve_secretkey = secure_broker.keys["stranger"]
    clear = context.socket(zmq.DEALER)
    clear.setsockopt(zmq.LINGER, 0)
    for socket in (stranger, clear):
        assert refused_handshake(socket, secure_broker.command)
        # Refused: nothing can be waiting, nor come later on this connection.
        with pytest.raises(zmq.Again):
            socket.recv_multipart(flags=zmq.NOBLOCK)
        socket.close()
