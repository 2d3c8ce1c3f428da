"""The facade's plain data as JSON, and back: what a client of the resident service receives is what an in-process front end holds.

The facade speaks in frozen dataclasses (``Agent``, ``Observation``,
``Report``, ``Explanation``...) and a few enums.  To serve it over a socket
each value is written as JSON with its class named: ``{"~t": "Agent", "f":
{...fields}}``, ``{"~e": "AgentState", "v": "permission"}``, a tuple as
``{"~u": [...]}`` and a dict (whose keys need not be strings) as ``{"~d":
[[key, value], ...]}``.  Why not pickle: decoding builds only the classes
named in ``CLASSES`` and ``ENUMS``, through their own constructors, so an
answer can never make the client run anything.  Why not a schema library:
the dataclasses are the schema, and a field added to one travels with no
second place to change.

Anything else (a class not listed, a field the class does not have, a wrong
enum value, nesting deeper than ``MAX_DEPTH``) is a ``WireError``.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from ..answering.keys import KeyStroke
from ..answering.policy import Intent, IntentKind
from ..answering.report import ChannelReport, Report
from ..changes.model import Diff, DiffLine, FileDiff, Hunk
from ..detect.fusion import Explanation, Verdict
from ..detect.sources import Source
from ..events import AgentChanged, AgentRemoved, Answered, CallBlocked, Notice, PaneCaptured, ProblemChanged, Rung
from ..hooks.calls import PendingCall
from ..model import Agent, AgentState, Blocked, Channel, Evidence, Observation, Option, Prompt
from ..notifications.snooze import Snooze
from ..state.eventlog import StoredEvent
from ..usage.model import PlanUse, Spent, SpentRow, Tokens, Usage
from .facade import Jump

CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Agent,
        Observation,
        Prompt,
        Option,
        Evidence,
        Verdict,
        Explanation,
        ChannelReport,
        PendingCall,
        Answered,
        StoredEvent,
        Report,
        Snooze,
        KeyStroke,
        Intent,
        AgentChanged,
        AgentRemoved,
        PaneCaptured,
        ProblemChanged,
        Notice,
        Blocked,
        CallBlocked,
        Rung,
        Usage,
        Tokens,
        PlanUse,
        Spent,
        SpentRow,
        Diff,
        FileDiff,
        Hunk,
        DiffLine,
        Jump,
    )
}
ENUMS: dict[str, type[Enum]] = {cls.__name__: cls for cls in (AgentState, Channel, IntentKind, Source)}
MAX_DEPTH = 40  # an Agent inside an Answered inside a ChannelReport is 8 deep


class WireError(ValueError):
    """A value that is not the facade's data."""


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data; WireError for anything the facade does not speak."""
    if isinstance(value, Enum):
        if type(value).__name__ not in ENUMS:
            raise WireError(f"not an enum of the facade: {type(value).__name__}")
        return {"~e": type(value).__name__, "v": value.value}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if CLASSES.get(name) is not type(value):
            raise WireError(f"not a class of the facade: {name}")
        return {"~t": name, "f": {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value) if field.init}}
    if isinstance(value, tuple):
        return {"~u": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {"~d": [[encode(key), encode(item)] for key, item in value.items()]}
    raise WireError(f"not data of the facade: {type(value).__name__}")


def decode(data: Any, depth: int = 0) -> Any:
    """What ``encode`` wrote, built again; WireError for anything else."""
    if depth > MAX_DEPTH:
        raise WireError("nested too deep")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(item, depth + 1) for item in data]
    if not isinstance(data, dict):
        raise WireError(f"not JSON data: {type(data).__name__}")
    if "~u" in data and isinstance(data["~u"], list):
        return tuple(decode(item, depth + 1) for item in data["~u"])
    if "~d" in data and isinstance(data["~d"], list):
        out = {}
        for pair in data["~d"]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("a dict entry is not a pair")
            key = decode(pair[0], depth + 1)
            try:
                out[key] = decode(pair[1], depth + 1)
            except TypeError:
                raise WireError("a dict key that cannot be one") from None
        return out
    if "~e" in data:
        enum = ENUMS.get(data["~e"]) if isinstance(data["~e"], str) else None
        if enum is None:
            raise WireError(f"not an enum of the facade: {str(data['~e'])[:40]!r}")
        try:
            return enum(data.get("v"))
        except ValueError:
            raise WireError(f"not a value of {enum.__name__}") from None
    if "~t" in data:
        cls = CLASSES.get(data["~t"]) if isinstance(data["~t"], str) else None
        fields = data.get("f")
        if cls is None or not isinstance(fields, dict):
            raise WireError(f"not a class of the facade: {str(data['~t'])[:40]!r}")
        known = {field.name for field in dataclasses.fields(cls) if field.init}
        if not set(fields) <= known:
            raise WireError(f"{cls.__name__} has no field {sorted(set(fields) - known)[0][:40]!r}")
        try:
            return cls(**{name: decode(item, depth + 1) for name, item in fields.items()})
        except (TypeError, ValueError) as exc:
            raise WireError(f"{cls.__name__}: {exc}") from None
    raise WireError("a JSON object that is none of the facade's")
