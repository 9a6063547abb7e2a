"""What a delivered event says about itself from its topic, shared by durable
deliveries and stream messages."""

from __future__ import annotations

import json
from typing import Any, Dict

__all__ = ["TopicFields"]


class TopicFields:
    """The ``STAGE/SUBJECT/TYPE`` topic read without parsing the event, and the event
    parsed on demand. Mixed into frozen dataclasses that have ``topic`` and ``data``."""

    topic: str
    data: bytes

    @property
    def stage(self) -> str:
        """The first segment of the topic: ``in``, ``out``, ``diag``, a plugin's stage."""
        return self.topic.split("/", 1)[0]

    @property
    def subject(self) -> str:
        """The event's subject, read from the topic without parsing the event."""
        return self.topic.split("/")[1]

    @property
    def type(self) -> str:
        """The event's type, read from the topic without parsing the event."""
        return self.topic.rsplit("/", 1)[-1]

    def event(self) -> Dict[str, Any]:
        """The event, parsed from its JSON bytes (each call parses again)."""
        value = json.loads(self.data)
        assert isinstance(value, dict)
        return value
