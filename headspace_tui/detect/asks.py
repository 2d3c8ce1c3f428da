"""Does an agent's last reply ask the user something?  Read from its text alone.

An agent that ends its turn with a question typed in its reply waits for you
(``input``), though nothing on screen is a dialog and Claude's own status file
calls it idle.  Where the question mark sits varies (issue 37, measured on
real replies of Claude Code 2.0.60 to 2.1.330):

* at the very end ("… or leave them alone?"): always a question for you;
* before what the question offers: a list of choices ("I found three failing
  tests. Which one should I look at first?" then a numbered list), a code
  block ("Should I apply this?" then the code), or a short last remark
  ("Want me to update the changelog too? It still describes the old
  behaviour.").

Most questions inside a reply are not for you, though: a rhetorical one the
reply answers itself ("Why did the build fail? The cache …"), a quoted one
('printed "Is the server running?"'), one heading a list of what was done
("What changed in this pass?").  So a question that is not the reply's last
word counts only when it is put *to you* (``should I``, ``do you``, ``want
me to``, …) and nothing but choices, code or one short remark follow it.

Pure: the caller hands over the reply's lines, indent removed, blank lines
kept (paragraph breaks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A list item: "1. …", "2) …", "- …", "* …", "• …".
LIST_ITEM = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*•])\s+\S")
# Quoted or inline-code spans: a question inside one is someone else's words.
QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|`[^`\n]*`|«[^»\n]*»")
# A sentence: up to . ! ? (and closing brackets) followed by a space, or to the end ("0.5" does not end one).
SENTENCE = re.compile(r"\S.*?(?:[.!?]+[)\]]*(?=\s)|$)", re.S)
# A question put to the reader: asking leave to act, or asking what they want.
TO_YOU = re.compile(
    r"\b(?:should|shall|can|could|may|would|do|will)\s+(?:i|we)\b"
    r"|\b(?:do|would|could|can|will|are|did)\s+you\s+(?:want|like|prefer|need|agree|mind|see|have|know)\b"
    r"|\b(?:would|could|can|will)\s+you\b"
    r"|\bdo\s+you\b"
    r"|\bwant\s+me\s+to\b"
    r"|\b(?:are|is)\s+(?:you|that|this)\s+(?:ok|okay|fine|alright|happy)\b"
    r"|\b(?:sound|sounds|look|looks)\s+(?:good|right|ok|okay)\b"
    r"|\b(?:shall|should)\s+(?:i|we)\b"
    r"|\bok\s+(?:to|with you)\b"
    r"|\bany\s+preference\b"
    r"|\bwhich\s+(?:one|ones|option|approach|of\s+(?:these|them|the))\b.*\b(?:i|we|you)\b",
    re.I,
)
# What may follow such a question in the last paragraph, or as the paragraph after it: one short remark.
SHORT_REMARK = 80  # characters: "It still describes the old behaviour.", "Let me know and I will do it in the same commit."
# Lines of code, as Claude draws a fenced block without its fences: brackets, operators, keywords,
# indentation, a shell command and its flags, a table's box lines.
CODE_LINE = re.compile(
    r"[{}();\[\]│┃┌┐└┘├┤┬┴┼]|\s(?:=|==|!=|->|=>|:=|\+=|&&|\|\||\|)\s|\s--?[A-Za-z][\w-]*"
    r"|^\s*(?:def|class|fn|func|function|import|from|return|if|elif|else|for|while|let|const|var|pub|use|#include)\b"
    r"|^\s*(?:git|npm|npx|pnpm|yarn|pip|uv|python3?|cargo|go|make|cd|ls|rm|mv|cp|docker|kubectl|curl)\s"
    r"|^\s{2,}\S|^\s*[$#>]\s|^\s*(?://|#|--)\s?"
)
# A remark that answers the question before it: the reply asked itself ("Should I worry? No, …").
ANSWERS_IT = re.compile(r"^(?:yes|no|nope|not\b|because|probably|turns out|it turns out|short answer|the answer)\b", re.I)


@dataclass(frozen=True)
class Asked:
    """The paragraph that asks, as one line (soft wraps joined), and how it was found."""

    paragraph: str
    row: int  # the index, in the lines given, of the paragraph's first line
    how: str  # "ends-with-question" | "question-before-choices" | "question-then-remark"
    question: str = ""  # the sentence that asks


def _blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(first row, lines) of each block between blank lines."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for i, line in enumerate(lines):
        if line.strip():
            if not current:
                start = i
            current.append(line.rstrip())
        elif current:
            blocks.append((start, current))
            current = []
    if current:
        blocks.append((start, current))
    return blocks


def _joined(block: list[str]) -> str:
    return " ".join(" ".join(line.split()) for line in block)


def _is_list(block: list[str]) -> bool:
    """Items, each maybe wrapped onto indented lines under it."""
    return bool(LIST_ITEM.match(block[0])) and all(LIST_ITEM.match(line) or line[:1].isspace() for line in block)


def _is_code(block: list[str]) -> bool:
    """Most of its lines read as code, and it does not end like a sentence."""
    coded = sum(1 for line in block if CODE_LINE.search(line))
    return coded * 2 >= len(block) and not re.search(r"[A-Za-z][.!?]$", block[-1].strip())


def _last_question(text: str) -> tuple[str, str] | None:
    """(the last sentence that asks, outside quotes and inline code; what follows it), or None."""
    plain = QUOTED.sub(lambda m: "_" * len(m.group(0)), text)
    sentences = [(m.start(), m.end()) for m in SENTENCE.finditer(plain)]
    for start, end in reversed(sentences):
        if plain[start:end].rstrip().rstrip(")]").endswith("?"):
            return text[start:end].strip(), text[end:].strip()
    return None


def _to_you(question: str) -> bool:
    return TO_YOU.search(question) is not None


def asked(lines: list[str]) -> Asked | None:
    """The paragraph of the reply that asks the user something, or None (see the module's rules)."""
    blocks = _blocks(lines)
    if not blocks:
        return None
    last_row, last = blocks[-1]
    last_text = _joined(last)
    if last_text.endswith("?"):
        found = _last_question(last_text)
        return Asked(last_text, last_row, "ends-with-question", found[0] if found else last_text)
    # Walk back over what a question may come before: choices (a list), code, one short remark.
    remarks = 0
    for n in range(len(blocks) - 1, -1, -1):
        row, block = blocks[n]
        text = _joined(block)
        after = n < len(blocks) - 1  # there are blocks below this one
        if _is_list(block) or _is_code(block):
            continue
        found = _last_question(text)
        if found is not None and _to_you(found[0]):
            question, rest = found
            if after and (not rest or not remarks and len(rest) <= SHORT_REMARK and rest.endswith(":")):
                return Asked(text, row, "question-before-choices", question)  # "…? Here they are:" and the list
            if rest and len(rest) <= SHORT_REMARK and not after and _last_question(rest) is None and not ANSWERS_IT.match(rest):
                return Asked(text, row, "question-then-remark", question)
        if remarks or len(text) > SHORT_REMARK or found is not None:
            return None  # a paragraph of prose that asks nothing of you: the reply is a statement
        remarks += 1
    return None


__all__ = ["Asked", "asked"]
