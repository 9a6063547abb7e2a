"""Exceptions: the bus's error replies as typed exceptions, and the client's own failures.

Every ``"EB1" "ERR" CORR CODE MESSAGE`` reply becomes a :class:`BusError` whose
subclass matches CODE (docs/protocol.md, "Errors"): catch :class:`BadEventError`
for ``bad_event``, :class:`BusyError` for ``busy``, or :class:`BusError` for all.
CODE is the stable part; MESSAGE is for people.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Type


class EventBusError(Exception):
    """The base of every exception this package raises."""


class BusError(EventBusError):
    """An ERR reply from the broker (or from a service, relayed by the broker).

    Attributes:
        code: the wire code, such as ``"bad_event"`` or ``"not_found"``.
        message: the broker's sentence naming the frame, event or field at fault.
        event_index: for an error inside a PUB batch, the 0-based position of the
            event (the ``event N: `` prefix of the message), else ``None``.
        field: the field path the message names first after that prefix, such as
            ``"data.user_id"``, when the message has that shape, else ``None``.
            Read from the message on a best-effort basis: rely on ``code``.
    """

    code: str = ""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        match = re.match(r"event (\d+): (.*)$", message, re.S)
        rest = message
        self.event_index: Optional[int] = None
        if match:
            self.event_index = int(match.group(1))
            rest = match.group(2)
        field = re.match(r"([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?)*): ", rest)
        self.field: Optional[str] = field.group(1) if field else None


class BadFrameError(BusError):
    """``bad_frame``: a frame is missing or malformed."""


class BadVerbError(BusError):
    """``bad_verb``: the verb is not a request verb."""


class BadJsonError(BusError):
    """``bad_json``: a frame that must be JSON is not valid UTF-8 JSON."""


class BadArgsError(BusError):
    """``bad_args``: a malformed or out-of-range argument (NAME, START, CREDIT, SEQ…)."""


class BadEventError(BusError):
    """``bad_event``: the event's envelope or data fails validation."""


class UnknownTypeError(BusError):
    """``unknown_type``: an event published to ``in`` whose type is not an ingress type."""


class TooLargeError(BusError):
    """``too_large``: an event or a batch over the limits."""


class ForbiddenError(BusError):
    """``forbidden``: the client's role does not allow this (with keys configured)."""


class UnknownStageError(BusError):
    """``unknown_stage``: no such stage, or a prefix that matches none."""


class UnknownServiceError(BusError):
    """``unknown_service``: no service of that name, or nothing in the pipeline answers it."""


class BadRequestError(BusError):
    """``bad_request``: a REQ the broker or the service refuses (the message names the param)."""


class NotFoundError(BusError):
    """``not_found``: the service does not know the channel or message."""


class RequestTimeoutError(BusError):
    """``timeout``: the service did not answer within the broker's ``request_timeout_ms``."""


class BusyError(BusError):
    """``busy``: the broker could not write its log; nothing was appended, retry later."""


ERRORS_BY_CODE: Dict[str, Type[BusError]] = {
    "bad_frame": BadFrameError,
    "bad_verb": BadVerbError,
    "bad_json": BadJsonError,
    "bad_args": BadArgsError,
    "bad_event": BadEventError,
    "unknown_type": UnknownTypeError,
    "too_large": TooLargeError,
    "forbidden": ForbiddenError,
    "unknown_stage": UnknownStageError,
    "unknown_service": UnknownServiceError,
    "bad_request": BadRequestError,
    "not_found": NotFoundError,
    "timeout": RequestTimeoutError,
    "busy": BusyError,
}


def error_from_reply(code: str, message: str) -> BusError:
    """The exception for an ERR reply: the subclass of its code, or :class:`BusError`."""
    return ERRORS_BY_CODE.get(code, BusError)(code, message)


class NoReplyError(EventBusError, TimeoutError):
    """The broker did not answer within the client's own timeout (it may be down or
    restarting). A PUB that got no reply may or may not have been appended: publish the
    same events again (same ``source`` and ``id``) and the broker's deduplication answers
    the original SEQs."""


class ConsumerEndedError(EventBusError):
    """The broker took this durable consumer away from this connection (``END``): another
    CONSUME of the same name, from another connection, took it over."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"consumer {name} ended: {reason}")
        self.name = name
        self.reason = reason


class KeyFileError(EventBusError):
    """A CURVE key (file or environment variable) that cannot be used."""
