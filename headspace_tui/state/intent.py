"""What a turn means: command, answer, question, progress or completion (PRD FR2, FR5).

User turns are decided by the state alone: a user speaking while the agent
waits for input answers it; anything else starts a command.

Agent turns are decided by regular expressions over the text, read the way a
person reads a reply: by how it *ends*.  Real Claude Code replies ask a
question half-way and then answer it themselves, quote dialogs, paste code
full of question marks, say "not done yet", and announce the next step
("Let me run the tests.") right after reporting a fix.  So, in order:

1. **question**: the last sentence ends with ``?`` or asks the user for
   something ("Would you like…", "Should I…", "Let me know which…").  Three
   shapes of a real ending count too: a hedge after the question ("If so,
   I'll…"), the options after it ("Which do you prefer?" then a list), and a
   sentence or two of context after a question put to the user, as long as
   the agent did not go on by itself ("Should I use X? Looking at Y, I'll…"
   is not a question).  Code blocks, inline code, quotes, tables, block
   quotes and indented screens are ignored, so a quoted "Do you want to
   proceed?" never makes a question.
2. **progress**: the last sentence (or its last clause) looks ahead ("Let
   me…", "Now I'll…", "Running the tests…", "Almost done…").  This wins over
   completion words earlier in the text: "I've fixed it. Let me run the
   tests." is not done.
3. **completion**: a completion phrase ("Done", "I've fixed…", "the build is
   green", "all tests pass", "now returns…", "Ready for review") that is not
   negated or conditional ("not done yet", "isn't complete", "once it's
   done"); a sentence that says the work is unfinished ("2 tests still
   fail") is skipped.
4. a negated completion with nothing else → **progress**.
5. a substantial reply (several sentences, a list, a heading or code) that
   ends on a plain statement → **completion**, with lower confidence: a turn
   that reports and stops is how Claude ends most answers, and a missed
   completion leaves the command stuck in ``processing``.
6. otherwise **progress** (FR5's default; also for empty text, FR10).

Every pattern is precompiled, and a huge reply is read by its first and last
lines only: a typical turn takes well under a millisecond, a 100 KB paste a
few (the unit tests hold it to the PRD's 10 ms budget).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

log = logging.getLogger(__name__)


class TurnIntent(str, Enum):
    """What a turn is for (FR2).  ``command``/``answer`` are the user's, the rest the agent's."""

    COMMAND = "command"
    ANSWER = "answer"
    QUESTION = "question"
    PROGRESS = "progress"
    COMPLETION = "completion"


USER_INTENTS = frozenset({TurnIntent.COMMAND, TurnIntent.ANSWER})
AGENT_INTENTS = frozenset({TurnIntent.QUESTION, TurnIntent.PROGRESS, TurnIntent.COMPLETION})

# Regex matches are sure (the PRD's 1.0); the fallbacks say they are guesses.
SURE = 1.0
REPORT_GUESS = 0.6
DEFAULT_GUESS = 0.5


@dataclass(frozen=True)
class IntentResult:
    """The intent, how sure we are, and the words that decided it (for "explain")."""

    intent: TurnIntent
    confidence: float
    matched: str  # the text that matched, or "" for a default
    rule: str = ""  # which rule decided: ends-with-?, ask-phrase, look-ahead, ...


_ACTORS = {"user": "user", "human": "user", "agent": "agent", "assistant": "agent"}


def normalize_actor(actor: Any) -> str:
    """``user`` or ``agent`` (``human``/``assistant`` as transcripts spell them are accepted)."""
    key = str(getattr(actor, "value", actor)).strip().lower()
    if key not in _ACTORS:
        raise ValueError(f"unknown actor {actor!r}: expected 'user' or 'agent'")
    return _ACTORS[key]


# --------------------------------------------------------------------------
# Cleaning: what a reader skips when judging what a reply asks or reports.

_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r'"[^"\n]{0,300}"|“[^”\n]{0,300}”')
_SKIPPED_LINE = re.compile(r"^[ \t]*(?:>|\|)")  # block quotes and table rows
_INDENTED_LINE = re.compile(r"^(?: {2,}|\t)(?![-*+•]|\d+[.)])")  # a quoted screen, not a nested list
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+")
# A list item, or an option written as "**A.** ..." / "**Option 1**: ...".
_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d+[.)]|[A-Za-z][.)](?=\s)|\*\*[^*\n]{1,40}\*\*(?=[\s:—–-]))[ \t]*")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[ \t]+(?=\S)")
_TRAILING = re.compile(r"[\s*_)\]\"'”’»`~\u2600-\u27bf\U0001f300-\U0001faff]+$")
_WORD = re.compile(r"\w")
# A huge reply is read by its first and last lines (how it starts and how it
# ends is what counts), so a 1 MB paste costs what a normal reply does.
HEAD_LINES, TAIL_LINES, LONGEST_LINE = 40, 80, 2_000
LONGEST = 300  # characters kept from each end of an absurdly long sentence
# Completion phrases are looked for in the first and last sentences only.
FIRST_SENTENCES, LAST_SENTENCES = 15, 25


@dataclass(frozen=True)
class _Sentence:
    text: str
    item: bool = False  # from a list item: an option or a summary line
    heading: bool = False


def _prose_lines(text: str) -> tuple[list[str], bool]:
    """The lines outside code fences (first and last ones only), and whether there was code."""
    lines = text.splitlines()
    had_code = False
    if "```" in text or "~~~" in text:
        kept: list[str] = []
        fence = ""
        for line in lines:
            mark = line.lstrip()[:3]
            if fence:
                if mark == fence:
                    fence = ""
                continue
            if mark in ("```", "~~~"):
                fence, had_code = mark, True
                kept.append("")
                continue
            kept.append(line)
        lines = kept
    if len(lines) > HEAD_LINES + TAIL_LINES:
        lines = lines[:HEAD_LINES] + [""] + lines[-TAIL_LINES:]
    return [line if len(line) <= LONGEST_LINE else line[: LONGEST_LINE // 2] + " " + line[-LONGEST_LINE // 2 :] for line in lines], had_code


def _sentences(text: str) -> tuple[list[_Sentence], bool]:
    """The sentences a reader weighs, and whether the reply is structured (lists, headings, code, tables).

    Code, inline code, quotes, block quotes, tables and indented quoted screens are left out.
    """
    lines, structured = _prose_lines(text)
    out: list[_Sentence] = []
    for raw in lines:
        if not raw.strip():
            continue
        if _SKIPPED_LINE.match(raw):
            structured = structured or raw.lstrip().startswith("|")
            continue
        if _INDENTED_LINE.match(raw):
            continue
        line = _QUOTED.sub("QUOTE", _INLINE_CODE.sub("CODE", raw))
        heading = _HEADING.match(line) is not None
        item = None if heading else _ITEM.match(line)
        structured = structured or heading or item is not None
        body = _EMPHASIS.sub("", _HEADING.sub("", line) if heading else line[item.end() if item else 0 :])
        for part in _SENTENCE_END.split(body):
            if _WORD.search(part):  # "🙂" or "---" alone is no sentence
                if len(part) > 2 * LONGEST:  # no sentence of prose is this long: keep its ends
                    part = part[:LONGEST] + " " + part[-LONGEST:]
                out.append(_Sentence(part.strip(), item=item is not None, heading=heading))
    return out, structured


def _tail(sentence: str) -> str:
    return _TRAILING.sub("", sentence)


# --------------------------------------------------------------------------
# The patterns

_I = re.I
# Asking the user for something.  Searched in the last sentence (or the one a hedge leans on).
_ASK = re.compile(
    r"\b(?:would you like|do you want|should I|shall I|want me to|do you prefer|would you prefer|"
    r"which (?:one|option|approach|version|way|of (?:these|the two|them))\b[^.!]*\b(?:do|would|should|shall)\b|"
    r"what would you (?:like|prefer)|how would you like|"
    r"let me know (?:which|whether|what|how|your (?:preference|choice|decision))|"
    r"please (?:confirm|advise|clarify|choose|pick|decide|let me know (?:which|whether|what|how))|"
    r"(?:can|could) you (?:please )?(?:confirm|provide|clarify|share|tell|point|check|run|paste|send|try|explain|give|decide|choose)|"
    r"are you (?:ok|okay|happy|fine|sure) with|is (?:that|this) (?:ok|okay|acceptable|what you (?:want|meant))|"
    r"does (?:that|this) (?:work for you|look right|sound (?:good|right|ok))|"
    r"waiting for your|awaiting your|I need (?:you to|your (?:input|decision|confirmation|go-ahead)))",
    _I,
)
# A sentence that leans on the question before it ("If so, ...", "Either way, ...",
# "That would also ...").  Self-answers ("Looking at X, ...", "Let me ...") are not hedges.
_HEDGE = re.compile(
    r"^(?:if (?:so|not|yes|you|that)|otherwise|or\b|either way|happy to|just (?:say|let)|let me know|I can|I'm happy|"
    r"once (?:you|I know)|in the meantime|no rush|thanks|I'd (?:rather|prefer|like to (?:check|confirm|make sure))|"
    r"I want to (?:check|confirm|make sure)|(?:that|this|it) (?:will|would|means|might|could))",
    _I,
)
# The next step, announced.  Searched at the start of the last sentence.
_FILLER = r"(?:(?:now|next|first|then|ok(?:ay)?|alright|all right|great|good|perfect|right|so|and|sure|got it|on it|understood|thanks|hmm|also|finally|still)[,.!:—–-]*\s+)*"
_GERUNDS = (
    r"(?:re-?)?(?:running|checking|looking|reading|searching|scanning|updating|adding|creating|writing|fixing|installing|"
    r"building|starting|trying|investigating|examining|exploring|analy[sz]ing|applying|editing|refactoring|verifying|"
    r"testing|compiling|fetching|loading|opening|inspecting|reviewing|grepping|debugging|profiling|measuring|comparing|"
    r"cleaning|removing|moving|renaming|implementing|converting|migrating|generating|tracing|digging|working|"
    r"continuing|proceeding)\b"
)
_FUTURE = (
    r"let me(?! know)|let's|I'll(?! (?:leave|keep|let|stop|wait|hold off|note))|I will(?! (?:leave|keep|wait))|"
    r"I'm (?:going|about) to|I am (?:going|about) to|I'm now|I need to|going to|time to|next step"
)
# The next step, announced: at the start of the last sentence or of a clause after ; : or a dash
# ("Fixed the import — now running the tests"), or after a comma when it is plainly future.
_LOOK_AHEAD = re.compile(
    r"(?:^|[;:—–]\s*|\s-\s+)" + _FILLER + r"(?:" + _FUTURE + "|" + _GERUNDS + r")"
    r"|,\s+(?:and\s+|so\s+)?(?:(?:now|next)\s+(?:" + _FUTURE + "|" + _GERUNDS + r")|let me(?! know)|I'll(?! (?:leave|keep|let))|I'm going to)",
    _I,
)
_STILL_GOING = re.compile(r"\b(?:almost|nearly) (?:done|there|finished)\b|\bstill working\b|\bin progress\b|\bworking on (?:it|this|that)\b|(?:\.\.\.|…)$", _I)

_DONE_VERBS = (
    r"completed|finished|fixed|implemented|added|updated|created|written|wrote|refactored|removed|deleted|renamed|"
    r"resolved|replaced|changed|rewritten|rewrote|converted|migrated|moved|cleaned up|set up|wired up|committed|pushed|"
    r"merged|deployed|installed|configured|extracted|bumped|upgraded|documented|restored|reverted|enabled|disabled|"
    r"addressed|corrected|patched|applied|split|generated|validated|verified|built|published|released|drafted|"
    r"optimi[sz]ed|simplified|reorgani[sz]ed|consolidated|switched|set|pinned|adjusted|introduced|dropped|integrated|"
    r"tightened|reduced|increased"
)
_COMPLETION = (
    (
        "done-word",
        re.compile(
            r"^(?:(?:the )?(?:task|work|job|command|everything|all)\s+(?:is\s+)?(?:now\s+)?)?"
            r"(?:done|finished|complete|completed|all set|that's it|that should do it)\b",
            _I,
        ),
    ),
    ("i-did", re.compile(r"\bI(?:'ve| have)?\s+(?:now\s+|also\s+|just\s+|successfully\s+)?(?:" + _DONE_VERBS + r")\b", _I)),
    ("did-verb", re.compile(r"^(?:" + _DONE_VERBS + r")\b", _I)),
    (
        "is-done",
        re.compile(
            r"\b(?:is|are|'s|was|were|has been|have been|now)\s+(?:now\s+|all\s+|fully\s+)?"
            r"(?:done|complete|completed|finished|fixed|in place|green|resolved|pushed|merged|committed|deployed|written|"
            r"live|up to date)\b|\b(?:now works|works now)\b",
            _I,
        ),
    ),
    ("tests-pass", re.compile(r"\b(?:tests?|suite|build|checks?|lint(?:ing)?|CI)\s+(?:now\s+|all\s+)?(?:pass(?:es|ed)?|passing|succeed(?:s|ed)?|green|clean)\b|\b\d+ passed\b", _I)),
    ("successfully", re.compile(r"\bsuccessfully\b|\bsucceeded\b|\b(?:compiles|builds|runs) cleanly\b", _I)),
    (
        "now-does",
        re.compile(
            r"\b(?:now|no longer)\s+(?:correctly\s+|also\s+|only\s+)?(?:handles|returns|uses|supports|accepts|works|passes|shows|"
            r"includes|reads|writes|runs|checks|prints|logs|raises|validates|retries|caches|compiles|builds|loads|starts|"
            r"stays|matches|respects|rejects|skips|ignores|points|lives|takes|sends|keeps|falls back|crashes|fails|hangs|leaks)\b",
            _I,
        ),
    ),
    ("ready-for", re.compile(r"\bready for (?:your |a |the )?(?:next|review|another|more)\b|\bready to (?:merge|ship|go)\b", _I)),
    ("summary", re.compile(r"^(?:summary|here's (?:a |the )?summary|summary of (?:the )?changes|changes made|what I (?:changed|did))\b", _I)),
)
# Words just before a completion phrase that take it back or make it hypothetical.
_NEGATED_BEFORE = re.compile(
    r"(?:n't|\b(?:not|never|no|almost|nearly|partially|half|yet to|until|once|when|after|before|if|whether|unless|"
    r"make sure|ensure|to verify|to check|to confirm|so that|in order to|cannot|can not)\b)[^.;:!?]{0,25}$",
    _I,
)
_NEGATED_AFTER = re.compile(r"^\s*(?:yet|soon|later)\b", _I)
# A sentence that says the work is not finished, wherever it says it.
_NOT_DONE = re.compile(
    r"(?:n't|\b(?:not|never))\s+(?:\w+\s+){0,2}?(?:done|complete|completed|finished|working|passing|fixed|ready|green)\b|"
    r"\bincomplete\b|\bnot yet\b|\bstill (?:fail(?:s|ing)?|broken|need(?:s)?|have to|has to|working|in progress)\b|"
    r"\b(?:\d+|one|two|three|some|a few) (?:of the )?(?:\w+ )?tests? (?:still )?fail(?:s|ing)?\b|\b[1-9]\d* (?:failed|failing|failures?)\b",
    _I,
)
# A question put to the user (not "Why did it fail?" as a pseudo-heading).
_TO_USER = re.compile(r"\b(?:you|your|should I|shall I|do I|can I|may I|I should)\b", _I)
# Words after a question showing the agent answered it itself ("Looking at X, ...", "I'll go with ...").
_SELF_ANSWER = re.compile(r"\b(?:I'll|I will|I went|I chose|I decided|I picked|going with|I'm going)\b", _I)
REPORT_LENGTH = 200  # characters of prose: longer than the one-liners Claude writes before a tool call


def detect_intent(actor: Any, text: str | None, command_state: Any = None) -> IntentResult:
    """The intent of one turn (FR5).

    ``command_state`` is the state the turn arrives in (a ``CommandState`` or
    its string value); it only matters for user turns.
    """
    who = normalize_actor(actor)
    if who == "user":
        state = str(getattr(command_state, "value", command_state) or "")
        if state == "awaiting_input":
            return IntentResult(TurnIntent.ANSWER, SURE, "", "user-while-awaiting-input")
        return IntentResult(TurnIntent.COMMAND, SURE, "", "user-otherwise")
    result = _agent_intent(text or "")
    log.debug("intent %s (%.1f) by %s: %r", result.intent.value, result.confidence, result.rule, result.matched)
    return result


def _agent_intent(text: str) -> IntentResult:
    if not text.strip():
        return IntentResult(TurnIntent.PROGRESS, DEFAULT_GUESS, "", "empty")
    found, structured = _sentences(text)
    sentences = [s for s in found if not s.heading] or found
    if not sentences:  # nothing but code or quotes: a paste between tool calls
        return IntentResult(TurnIntent.PROGRESS, DEFAULT_GUESS, "", "only-code")
    last = _tail(sentences[-1].text)

    asked = _question(sentences)
    if asked is not None:
        return asked
    ahead = _LOOK_AHEAD.search(last) or _STILL_GOING.search(last)
    if ahead:
        return IntentResult(TurnIntent.PROGRESS, SURE, ahead.group(0).strip(" ,;:—–-"), "look-ahead")

    negated = ""
    scanned = sentences if len(sentences) <= FIRST_SENTENCES + LAST_SENTENCES else sentences[:FIRST_SENTENCES] + sentences[-LAST_SENTENCES:]
    for sentence in scanned:
        words = sentence.text
        not_done = _NOT_DONE.search(words)
        if not_done:
            negated = negated or not_done.group(0)
            continue
        for rule, pattern in _COMPLETION:
            for match in pattern.finditer(words):
                before, after = words[max(0, match.start() - 60) : match.start()], words[match.end() : match.end() + 20]
                if _NEGATED_BEFORE.search(before) or _NEGATED_AFTER.search(after):
                    continue
                return IntentResult(TurnIntent.COMPLETION, SURE, match.group(0), rule)
    if negated:
        return IntentResult(TurnIntent.PROGRESS, SURE, negated, "not-done")
    prose = sum(len(s.text) for s in sentences)
    substantial = len(sentences) >= 3 or structured or (len(sentences) >= 2 and prose >= REPORT_LENGTH)
    if substantial and last and last[-1] not in ":,;":
        return IntentResult(TurnIntent.COMPLETION, REPORT_GUESS, last[-60:], "report")
    return IntentResult(TurnIntent.PROGRESS, DEFAULT_GUESS, "", "default")


def _question(sentences: list[_Sentence]) -> IntentResult | None:
    """A question when the reply ends by asking.

    The last sentence counts, or the one before it when the last merely leans
    on it (a hedge), or the last plain sentence when only list items follow
    it (a question with its options: "Which do you prefer?" then "- A", "- B").
    """
    candidates = [sentences[-1]]
    if len(sentences) > 1 and _HEDGE.search(sentences[-1].text):
        candidates.append(sentences[-2])
    if sentences[-1].item:
        lead = next((s for s in reversed(sentences) if not s.item), None)
        if lead is not None and (_tail(lead.text).endswith("?") or _ASK.search(lead.text)) and (_TO_USER.search(lead.text) or _ASK.search(lead.text)):
            candidates.append(lead)
    # A question to the user followed by a sentence or two of context, with no
    # sign the agent went on by itself ("Which version do you need? X needs 3.10.").
    for back in (2, 3):
        if len(sentences) >= back:
            lead, after = sentences[-back], sentences[-back + 1 :]
            if (
                _tail(lead.text).endswith("?")
                and _TO_USER.search(lead.text)
                and not any(_SELF_ANSWER.search(s.text) or _LOOK_AHEAD.search(s.text) or _STILL_GOING.search(s.text) for s in after)
                and not any(p.search(s.text) for s in after for _, p in _COMPLETION)
            ):
                candidates.append(lead)
    for sentence in candidates:
        tail = _tail(sentence.text)
        if tail.endswith("?"):
            return IntentResult(TurnIntent.QUESTION, SURE, tail[-60:], "ends-with-?")
        ask = _ASK.search(sentence.text)
        if ask:
            return IntentResult(TurnIntent.QUESTION, SURE, ask.group(0), "ask-phrase")
    return None
