"""The eventbus package with CURVE keys (docs/security.md): read from the environment as
the CLI and the plugins read them, or from key files; each role as its table row says."""
import os

import pytest
import zmq

from eventbus import Client, CurveKeys, ForbiddenError, KeyFileError, Subscription, make_event
from test_curve import secure_broker, write_key  # noqa: F401 (the fixture: a broker with keys)

CID = "messaging:general"


def read_ack(user, message):
    return make_event("message.read", CID, {"cid": CID, "user_id": user, "message_id": message},
                      source="/py-client-test", time="2026-11-22T03:10:00.123Z")


def test_keys_from_the_environment_and_the_roles(secure_broker, monkeypatch):
    server_public = secure_broker.keys["broker"][0]
    backend_public, backend_secret = secure_broker.keys["backend"]
    monkeypatch.setenv("EVENTBUS_SECRET_KEY", backend_secret.decode())
    monkeypatch.setenv("EVENTBUS_SERVER_KEY", server_public.decode())
    keys = CurveKeys.from_env()
    assert keys is not None and keys.public_key == backend_public
    with Client(secure_broker.command) as backend:  # the keys of the environment
        assert backend.publish([read_ack("bob", "m1")]) == [1]
        with pytest.raises(ForbiddenError) as refused:
            backend.stats()
        assert refused.value.code == "forbidden"
    monkeypatch.delenv("EVENTBUS_SECRET_KEY")
    monkeypatch.delenv("EVENTBUS_SERVER_KEY")
    assert CurveKeys.from_env() is None

    watcher_keys = CurveKeys(secure_broker.keys["watcher"][1], server_public)
    admin_keys = CurveKeys(secure_broker.keys["ops"][1], server_public)
    with Client(secure_broker.command, curve=watcher_keys) as watcher, \
            Client(secure_broker.command, curve=admin_keys) as admin, \
            Subscription(secure_broker.stream, "out/", curve=watcher_keys) as subscription:
        with pytest.raises(ForbiddenError) as refused:
            watcher.publish([read_ack("eve", "m1")])
        assert refused.value.code == "forbidden" and "PUB" in refused.value.message
        # A subscriber reads out/ durably under its own consumer names, and live.
        consumer = watcher.consume("watcher.out", "out/", start="earliest")
        subscription.wait_until_subscribed(admin, 1)
        seq = admin.publish_one(read_ack("bob", "m2"), stage="out")
        assert consumer.receive(10).seq == seq
        streamed = subscription.receive(10)
        assert streamed is not None and streamed.seq == seq


def test_key_files_and_their_mode(tmp_path, monkeypatch):
    public, secret = zmq.curve_keypair()
    server_public, _ = zmq.curve_keypair()
    write_key(str(tmp_path / "me.secret"), secret, secret=True)
    write_key(str(tmp_path / "broker.pub"), server_public, secret=False)
    keys = CurveKeys.from_files(str(tmp_path / "me.secret"), str(tmp_path / "broker.pub"))
    assert (keys.secret_key, keys.public_key, keys.server_key) == (secret, public, server_public)
    monkeypatch.setenv("EVENTBUS_SECRET_KEY_FILE", str(tmp_path / "me.secret"))
    monkeypatch.setenv("EVENTBUS_SERVER_KEY_FILE", str(tmp_path / "broker.pub"))
    assert CurveKeys.from_env() == keys
    # A secret key that others may read is refused, as the broker and the CLI refuse it.
    os.chmod(tmp_path / "me.secret", 0o644)
    with pytest.raises(KeyFileError) as refused:
        CurveKeys.from_env()
    assert "chmod 600" in str(refused.value)
    monkeypatch.delenv("EVENTBUS_SECRET_KEY_FILE")
    with pytest.raises(KeyFileError):  # one key of the pair alone
        CurveKeys.from_env()
    monkeypatch.setenv("EVENTBUS_SECRET_KEY", "too short")
    with pytest.raises(KeyFileError):
        CurveKeys.from_env()
