"""CURVE keys (docs/security.md): read from files or the environment, as the CLI and
the plugins do.

The environment variables are those of the ``eventbus`` CLI and the plugin SDK:
``EVENTBUS_SECRET_KEY_FILE`` and ``EVENTBUS_SERVER_KEY_FILE`` name key files
(written by ``eventbus keygen``), or ``EVENTBUS_SECRET_KEY`` and
``EVENTBUS_SERVER_KEY`` hold the keys themselves (40 Z85 characters each), as
``eventbus up`` hands them to the plugins it starts.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Mapping, Optional

import zmq
from zmq.utils import z85

from .errors import KeyFileError


def _check_key(text: str, where: str) -> bytes:
    key = text.strip()
    if len(key) != 40:
        raise KeyFileError(f"{where}: a CURVE key is 40 characters of Z85, found {len(key)} characters")
    try:
        z85.decode(key)
    except Exception as error:  # pyzmq raises ValueError or KeyError on a bad character
        raise KeyFileError(f"{where}: not a Z85 key ({error})") from None
    return key.encode("ascii")


def read_key_file(path: str, secret: bool = False) -> bytes:
    """The key in a key file: lines starting with ``#`` are comments, the key is the one
    other line. A secret key file that the group or others may read is refused (``chmod
    600`` it), as the broker and the CLI refuse it."""
    try:
        if secret:
            mode = os.stat(path).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise KeyFileError(f"{path}: a secret key file must not be readable by group or others "
                                   f"(mode {oct(mode & 0o777)}): chmod 600 {path}")
        with open(path, encoding="ascii") as f:
            lines = [line for line in f.read().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    except OSError as error:
        raise KeyFileError(f"{path}: {error.strerror}") from None
    if len(lines) != 1:
        raise KeyFileError(f"{path}: expected one key line besides comments, found {len(lines)}")
    return _check_key(lines[0], path)


@dataclass(frozen=True)
class CurveKeys:
    """A client's CURVE keys: its secret key, its public key (derived from the secret
    one) and the broker's public key. Pass to :class:`~eventbus.Client` or
    :class:`~eventbus.Subscription`, which set them on their sockets before connecting."""

    secret_key: bytes
    server_key: bytes

    @property
    def public_key(self) -> bytes:
        """The client's public key, derived from its secret key."""
        return zmq.curve_public(self.secret_key)

    @classmethod
    def from_files(cls, secret_key_file: str, server_key_file: str) -> "CurveKeys":
        """The keys in a ``.secret`` file (mode 0600) and the broker's ``.pub`` file."""
        return cls(read_key_file(secret_key_file, secret=True), read_key_file(server_key_file))

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> Optional["CurveKeys"]:
        """The keys named by the environment, or ``None`` when it names none.

        ``EVENTBUS_SECRET_KEY`` / ``EVENTBUS_SERVER_KEY`` (the keys) win over
        ``EVENTBUS_SECRET_KEY_FILE`` / ``EVENTBUS_SERVER_KEY_FILE`` (files); one key of
        a pair without the other is an error."""
        env = os.environ if environ is None else environ
        secret, server = env.get("EVENTBUS_SECRET_KEY"), env.get("EVENTBUS_SERVER_KEY")
        secret_file, server_file = env.get("EVENTBUS_SECRET_KEY_FILE"), env.get("EVENTBUS_SERVER_KEY_FILE")
        secret_key = _check_key(secret, "EVENTBUS_SECRET_KEY") if secret else (
            read_key_file(secret_file, secret=True) if secret_file else None)
        server_key = _check_key(server, "EVENTBUS_SERVER_KEY") if server else (
            read_key_file(server_file) if server_file else None)
        if secret_key is None and server_key is None:
            return None
        if secret_key is None or server_key is None:
            raise KeyFileError("CURVE needs both keys: set EVENTBUS_SECRET_KEY(_FILE) and EVENTBUS_SERVER_KEY(_FILE)")
        return cls(secret_key, server_key)

    def apply(self, socket: "zmq.Socket[bytes]") -> None:
        """Sets the three CURVE options on a socket; call before ``connect``."""
        socket.curve_serverkey = self.server_key
        socket.curve_publickey = self.public_key
        socket.curve_secretkey = self.secret_key
