"""eventbus: a Python client for the eventbus broker (the EB1 protocol of docs/protocol.md).

- :class:`Client`: publish with confirms (``publish``), queries (``request``,
  ``unread_counts``, ``message_receipts``, ``channel_state``), durable consumers
  (``consume`` → :class:`Consumer`), ``stats``.
- :class:`Subscription`: the live stream of ``out`` and ``diag``.
- :class:`PluginRunner`: a pipeline plugin in a function.
- :class:`CurveKeys`: CURVE keys from files or the environment.
- Errors: :class:`BusError` and one subclass per wire code.
"""
from .client import (DEFAULT_COMMAND, DEFAULT_STREAM, VERSION, Client, Consumer, Delivery, Event, encode_event,
                     make_event)
from .errors import (BadArgsError, BadEventError, BadFrameError, BadJsonError, BadRequestError, BadVerbError,
                     BusError, BusyError, ConsumerEndedError, ERRORS_BY_CODE, EventBusError, ForbiddenError,
                     KeyFileError, NoReplyError, NotFoundError, RequestTimeoutError, TooLargeError,
                     UnknownServiceError, UnknownStageError, UnknownTypeError, error_from_reply)
from .keys import CurveKeys, read_key_file
from .plugin import Handler, Output, PluginRunner, Query
from .stream import StreamEvent, Subscription

__version__ = VERSION

__all__ = [
    "Client", "Consumer", "Delivery", "Event", "encode_event", "make_event", "DEFAULT_COMMAND", "DEFAULT_STREAM",
    "Subscription", "StreamEvent", "PluginRunner", "Output", "Query", "Handler", "CurveKeys", "read_key_file",
    "EventBusError", "BusError", "NoReplyError", "ConsumerEndedError", "KeyFileError", "ERRORS_BY_CODE",
    "error_from_reply", "BadFrameError", "BadVerbError", "BadJsonError", "BadArgsError", "BadEventError",
    "UnknownTypeError", "TooLargeError", "ForbiddenError", "UnknownStageError", "UnknownServiceError",
    "BadRequestError", "NotFoundError", "RequestTimeoutError", "BusyError", "__version__",
]
