"""Claude Code's session transcripts: ``<config>/projects/<encoded cwd>/<session id>.jsonl``.

Claude appends one JSON object per line while a session runs.  Only two line
types are conversation; everything else is bookkeeping and is skipped.

Facts from real 2.1.330 transcripts (tests/data/transcripts/, made with the
harness):

* ``"type": "user"`` lines hold what the user typed (``message.content`` a
  string) or tool results (``content`` a list of ``tool_result`` blocks, with
  ``toolUseResult`` and ``permissionDecision`` beside them).  A line marked
  ``isMeta`` is text Claude injected for itself, not typed by anyone.
* ``"type": "assistant"`` lines hold ONE content block each: a reply with text
  and a tool call is written as two lines that share ``message.id`` (and
  ``message.stop_reason``, the reply's final one).
* The rest: ``attachment``, ``system`` (``stop_hook_summary``,
  ``turn_duration``), ``api-request``, ``api-request-blob`` (a copy of the
  request, whose ``message.role`` can be ``user``: not a turn),
  ``api-request-shape``, ``file-history-snapshot``, ``mode``,
  ``permission-mode``, ``last-prompt``, ``tools-used``, ``cost-state``, ...
  New kinds appear between versions; unknown ones are skipped.
* The project folder is the cwd with every character outside ``[A-Za-z0-9]``
  replaced by ``-`` (per UTF-16 code unit); names longer than 200 characters are cut to 200 and
  given ``-<hash>`` (a 32-bit string hash of the cwd, in base 36).

Reading is I/O on one file; parsing is pure (``parse_line``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...shared.json_lines import JsonLinesTail
from ..turns import ToolOutcome, Turn

MAX_DIR_NAME = 200
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def _string_hash(text: str) -> int:
    """Java-style ``hashCode`` over UTF-16 code units, as a signed 32-bit int."""
    value = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        value = (value * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def encoded_project_dir(cwd: str) -> str:
    """The folder name Claude files a working directory's sessions under."""
    # Claude counts UTF-16 code units: a character beyond the BMP becomes "--".
    name = _NOT_ALNUM.sub(lambda m: "--" if ord(m.group()) > 0xFFFF else "-", str(cwd))
    if len(name) <= MAX_DIR_NAME:
        return name
    return f"{name[:MAX_DIR_NAME]}-{_base36(abs(_string_hash(str(cwd))))}"


def transcript_path(config_dir: Path | str, cwd: str, session_id: str) -> Path:
    """``<config_dir>/projects/<encoded cwd>/<session_id>.jsonl``."""
    return Path(config_dir) / "projects" / encoded_project_dir(cwd) / f"{session_id}.jsonl"


def _outcome(data: dict[str, Any], tool_use_id: str, text: str = "") -> ToolOutcome:
    decision = data.get("permissionDecision")
    denial = _str(data.get("toolDenialKind"))
    if isinstance(decision, dict):
        source = _str(decision.get("source"))
        by = "hook" if source == "hook" else "dialog" if source.startswith("user") else "rule" if source else ""
        verdict = _str(decision.get("decision"))
        accepted = True if verdict == "accept" else False if verdict == "reject" else None
        code = _str(decision.get("reasonCode"))
        # Auto mode's refusal (2.1.330: reasonCode "classifier:auto-mode", toolDenialKind "automode-blocked"): its reason in its words.
        found = CLASSIFIER_REASON.search(text) if accepted is False and (code.startswith("classifier") or denial == "automode-blocked") else None
        said = found.group(1).strip() if found else ""
        return ToolOutcome(tool_use_id, by, accepted, code if code not in ("", "unknown") else source, said)
    if denial:
        return ToolOutcome(tool_use_id, "", False, denial)
    return ToolOutcome(tool_use_id, "", None)


# "Permission for this action was denied by the Claude Code auto mode classifier. Reason: Sends data out. If you have ..."
CLASSIFIER_REASON = re.compile(r"denied by the Claude Code auto mode classifier\.\s*Reason:\s*(.{1,500}?)(?:\.\s+If you have\b|\.\s*$|$)", re.S)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in _blocks(content) if p.get("type") == "text" and isinstance(p.get("text"), str))


def _usage(value: Any) -> tuple[int, ...]:
    """A reply's ``message.usage``: (input, output, cache read, cache write) tokens; () when it has none."""
    if not isinstance(value, dict):
        return ()

    def count(key: str) -> int:
        number = value.get(key)
        return number if isinstance(number, int) and not isinstance(number, bool) and number >= 0 else 0

    return (count("input_tokens"), count("output_tokens"), count("cache_read_input_tokens"), count("cache_creation_input_tokens"))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def parse_line(data: Any) -> Turn | None:
    """The turn one decoded transcript line holds, or None for every other line."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind == "permission-mode" and isinstance(data.get("permissionMode"), str):
        return Turn(role="mode", text=data["permissionMode"][:40])
    message = data.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    blocks = _blocks(message.get("content"))
    text = "\n".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
    common: dict[str, Any] = {"uuid": _str(data.get("uuid")), "timestamp": _str(data.get("timestamp"))}
    if kind == "assistant":
        calls = [b for b in blocks if b.get("type") == "tool_use" and isinstance(b.get("name"), str)]
        return Turn(
            role="agent",
            text=text,
            tool_uses=tuple((b["name"], dict(b["input"]) if isinstance(b.get("input"), dict) else {}) for b in calls),
            tool_use_ids=tuple(_str(b.get("id")) for b in calls),
            stop_reason=_str(message.get("stop_reason")),
            message_id=_str(message.get("id")),
            model=_str(message.get("model")),
            usage=_usage(message.get("usage")),
            sidechain=data.get("isSidechain") is True,
            cwd=_str(data.get("cwd")),
            **common,
        )
    if data.get("isMeta"):
        return None
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if results and not text:
        return Turn(
            role="tool_result",
            text="\n".join(_result_text(b) for b in results),
            is_error=any(b.get("is_error") is True for b in results),
            outcomes=tuple(_outcome(data, _str(b.get("tool_use_id")), _result_text(b)) for b in results),
            **common,
        )
    if not text:
        return None
    return Turn(role="user", text=text, **common)


class TranscriptTail(JsonLinesTail):
    """Follows one transcript file, returning the turns added since the last read.

    Lines that are not JSON, not objects or not conversation are skipped
    (the following itself: shared/json_lines.py).
    """

    def read_new(self) -> list[Turn]:
        """Turns added since the last call."""
        turns = []
        for data in self.read_objects():
            turn = parse_line(data)
            if turn is not None:
                turns.append(turn)
        return turns
