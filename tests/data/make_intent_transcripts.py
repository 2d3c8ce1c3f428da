"""Collect real agent turns for the intent data set from Claude Code's own transcripts.

    /tmp/venv/bin/python -m tests.data.make_intent_transcripts                 # to stdout
    /tmp/venv/bin/python -m tests.data.make_intent_transcripts --out turns.jsonl

Why: the intent detector reads the assistant turns that Claude Code writes to
``~/.claude/projects/<cwd>/<sessionId>.jsonl``.  Hand-written examples alone
would test it against *our* idea of a turn; these come from the real binary,
so the segmentation (text before a tool call is its own entry, one entry per
content block, what a multi-step reply looks like) and the format are
Claude's.  The words are what the scripted API sent, which is fine: the point
is the shape, and the replies below are modelled on real Claude replies.

Each session runs the real ``claude`` in a private tmux server against the
scripted API (``tests.harness``), with its own throwaway HOME; nothing touches
the user's ``~/.claude`` or tmux.  After the last reply of every prompt shows
up in the transcript, the assistant text entries are extracted and written as
JSON lines, **unlabelled**::

    {"actor": "agent", "text": ..., "state": "commanded"|"processing",
     "session": <scenario>, "source": "transcript"}

``state`` is the command state the turn arrives in (the first agent turn of a
prompt arrives in ``commanded``).  The intent labels are added by hand when
rows are copied into ``tests/data/intent_labelled.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.harness import fake_api as api
from tests.harness.claude import find_claude
from tests.harness.fake_api import FakeAnthropicAPI, Step
from tests.harness.session import ClaudeSession
from tests.harness.tmux import PrivateTmux
from tests.harness.wait import poll

# Files the scripted tools read, so Read/Grep/Glob succeed without a permission dialog.
FILES = {
    "parser.py": "def tokenize(src):\n    out = []\n    for i in range(len(src) - 1):\n        out.append(src[i])\n    return out\n",
    "README.md": "# demo\n\nA tiny parser.\n",
    "settings.py": "DATABASE = 'sqlite:///app.db'\nCACHE_TTL = 300\n",
}


WORK = "@WORKDIR@"


@dataclass(frozen=True)
class Prompt:
    """What the user types, and the steps the scripted API answers it with."""

    text: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Conversation:
    name: str
    prompts: tuple[Prompt, ...]


def read(path: str, preface: str = "") -> Step:
    # Read wants an absolute path; WORK is replaced by the session's work dir in ``run``.
    return api.tool("Read", {"file_path": f"{WORK}/{path}"}, preface=preface)


def grep(pattern: str, preface: str = "") -> Step:
    return api.tool("Grep", {"pattern": pattern, "output_mode": "content"}, preface=preface)


def glob(pattern: str, preface: str = "") -> Step:
    return api.tool("Glob", {"pattern": pattern}, preface=preface)


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "fix_then_done",
        (
            Prompt(
                "fix the off-by-one in parser.py",
                (
                    read("parser.py", "I'll start by reading the parser to find the off-by-one."),
                    grep("tokenize", "The loop stops one character early: `range(len(src) - 1)`. Let me check where `tokenize` is called before changing it."),
                    api.text(
                        "I've fixed the off-by-one in `parser.py`. The loop used `range(len(src) - 1)`, so the last "
                        "character was always dropped; it now iterates over the whole input:\n\n"
                        "```python\nfor i in range(len(src)):\n    out.append(src[i])\n```\n\n"
                        "`tokenize` has no other callers, so nothing else needed to change."
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "question_then_answer",
        (
            Prompt(
                "add caching to the settings loader",
                (
                    read("settings.py", "Let me look at how settings are loaded first."),
                    api.text(
                        "There are two reasonable ways to add caching here:\n\n"
                        "1. **`functools.lru_cache`** on the loader: simplest, but the cache never expires.\n"
                        "2. **A TTL cache** using the existing `CACHE_TTL = 300`: settings changes are picked up "
                        "within five minutes.\n\nWhich approach would you prefer?"
                    ),
                ),
            ),
            Prompt(
                "the TTL one please",
                (
                    glob("**/*.py", "Going with the TTL cache. Checking for other modules that read settings directly:"),
                    api.text(
                        "Done — the settings loader now caches for `CACHE_TTL` seconds.\n\n"
                        "- Added a `_cached_at` timestamp next to the cached value\n"
                        "- Reloads when the entry is older than `CACHE_TTL`\n"
                        "- No other module reads `settings.py` directly, so nothing else changed"
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "mid_question_then_report",
        (
            Prompt(
                "which database does the app use?",
                (
                    api.text(
                        "Should I look at the ORM config or the raw settings? Looking at `settings.py` is enough here: "
                        "`DATABASE = 'sqlite:///app.db'`, so the app uses SQLite with a file called `app.db` in the "
                        "working directory. There is no Postgres configuration anywhere in the project."
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "not_done_yet",
        (
            Prompt(
                "migrate the cache ttl to minutes",
                (
                    grep("CACHE_TTL", "I've updated the constant, but the migration isn't complete yet — other code may still assume seconds. Let me find every use of `CACHE_TTL`."),
                    api.text(
                        "I changed `CACHE_TTL` to minutes, but I'm not done yet: `settings.py` is the only file that "
                        "defines it and I couldn't find the code that reads it, so I can't tell whether callers "
                        "multiply by 60.\n\nCould you point me to where the cache is actually used?"
                    ),
                ),
            ),
            Prompt(
                "it's only used in settings.py, nowhere else",
                (api.text("Thanks. In that case the change is finished: `CACHE_TTL = 5` now means five minutes, and I added a comment saying so. Nothing else reads it."),),
            ),
        ),
    ),
    Conversation(
        "quoted_dialog",
        (
            Prompt(
                "how do approvals look?",
                (
                    api.text(
                        "When Claude needs approval it shows a dialog like this one:\n\n"
                        "  Do you want to proceed?\n  ❯ 1. Yes\n    2. No\n\n"
                        "You answer it with the number of your choice. Nothing is waiting for you now."
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "tests_pass_offer",
        (
            Prompt(
                "make the readme mention the parser",
                (
                    read("README.md", "Reading the README to see what it says today."),
                    api.text(
                        "Updated `README.md`: the intro now says the project is a tokenizer for small config files, "
                        "with a two-line usage example. Tests pass. Want me to also add a short section on the "
                        "limitations (no nested quotes yet)?"
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "long_investigation",
        (
            Prompt(
                "why is the tokenizer slow on big files?",
                (
                    read("parser.py", "Let me read the tokenizer first."),
                    grep("append", "Now I'll check for other places that build lists character by character."),
                    glob("tests/**/*.py", "Looking for existing benchmarks or tests that exercise large inputs..."),
                    api.text(
                        "## Why it's slow\n\n"
                        "`tokenize` walks the input one character at a time and appends each character to a list, "
                        "so a 10 MB file means ten million `append` calls and ten million one-character strings.\n\n"
                        "## What would help\n\n"
                        "- Slice runs of characters (`src[start:i]`) instead of appending one at a time\n"
                        "- Or use a compiled regex with `re.finditer`, which does the scanning in C\n\n"
                        "There are no tests or benchmarks for large inputs yet. Should I rewrite `tokenize` with "
                        "`re.finditer` and add a benchmark?"
                    ),
                ),
            ),
            Prompt(
                "yes, go ahead",
                (
                    read("parser.py", "On it. Re-reading the current version before I rewrite it:"),
                    api.text(
                        "I've rewritten `tokenize` to use `re.finditer` and added `tests/bench_tokenize.py`.\n\n"
                        "| input | before | after |\n|---|---|---|\n| 1 MB | 0.41 s | 0.03 s |\n| 10 MB | 4.2 s | 0.31 s |\n\n"
                        "All 18 tests pass. Ready for review."
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "almost_done_progress",
        (
            Prompt(
                "rename tokenize to lex everywhere",
                (
                    grep("tokenize", "Almost done with the rename — searching for any remaining references to `tokenize`."),
                    api.text("Renamed `tokenize` to `lex` in `parser.py`; there were no other references. The function's behaviour is unchanged, so no tests needed updating."),
                ),
            ),
        ),
    ),
    Conversation(
        "plain_question",
        (
            Prompt(
                "set up CI",
                (
                    glob(".github/**/*", "Let me check whether the project already has any CI configuration."),
                    api.text(
                        "There's no CI configuration yet. Before I add one: do you use GitHub Actions, or something "
                        "else like GitLab CI or Buildkite? And should the workflow run on every push or only on pull "
                        "requests?"
                    ),
                ),
            ),
            Prompt(
                "GitHub Actions, on pull requests",
                (
                    api.text(
                        "I'll add `.github/workflows/ci.yml` that runs `pytest` on Python 3.11 and 3.12 for every pull "
                        "request. I can't create the file from here without your approval, so here it is to paste:\n\n"
                        "```yaml\non: pull_request\njobs:\n  test:\n    runs-on: ubuntu-latest\n```\n\n"
                        "Let me know if you'd like it to run on pushes to `main` as well."
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "missing_file_question",
        (
            Prompt(
                "load the defaults from config.toml",
                (
                    read("config.toml", "Let me read `config.toml` to see which defaults it defines."),
                    api.text(
                        'There\'s no `config.toml` in the project (the read failed with "File does not exist"), and '
                        "nothing else mentions one. Do you want me to create it with the current defaults from "
                        "`settings.py`?"
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "tests_still_fail",
        (
            Prompt(
                "make the tokenizer keep the last character",
                (
                    read(
                        "parser.py",
                        "The fix isn't complete: two tests in `test_parser.py` still fail because they expect the old behaviour. I'll update them next, starting with the fixture.",
                    ),
                    api.text("Both tests now expect the last character to be kept. All 20 tests pass."),
                ),
            ),
        ),
    ),
    Conversation(
        "plan_then_hedge",
        (
            Prompt(
                "add a --verbose flag",
                (
                    api.text(
                        "Here's my plan:\n\n1. Add `--verbose` to the argument parser in `cli.py`\n"
                        "2. Pass it down to `tokenize` as a `verbose: bool` keyword\n"
                        "3. Print each token as it is produced when it is set\n\n"
                        "Should I also document the flag in `README.md`? If so, I'll follow the format of the existing "
                        "options section."
                    ),
                ),
            ),
            Prompt(
                "yes",
                (
                    glob("**/cli.py", "Great — now let me find the CLI entry point:"),
                    api.text("All done! `--verbose` is wired through `cli.py` to `tokenize`, and `README.md` has a new line under *Options*. Let me know if you need anything else!"),
                ),
            ),
        ),
    ),
    Conversation(
        "explain_with_code",
        (
            Prompt(
                "how does tokenize handle unicode?",
                (
                    api.text(
                        "`tokenize` indexes the string directly, so it works on code points, not bytes:\n\n"
                        "```python\n>>> tokenize('héllo!')\n['h', 'é', 'l', 'l', 'o']\n```\n\n"
                        "Combining characters are split from their base letter, because each one is its own code "
                        "point. Emoji made of several code points (flags, skin tones) are split the same way. If you "
                        "need grapheme clusters, the `regex` module's `\\X` pattern handles them."
                    ),
                ),
            ),
        ),
    ),
    Conversation(
        "question_with_context",
        (
            Prompt(
                "modernise parser.py",
                (api.text("Which Python version do you need to support? The modern version would use `match` statements and `str.removeprefix`, which need Python 3.10 or newer."),),
            ),
        ),
    ),
)


def project_dir(home: Path, cwd: Path) -> Path:
    """Where Claude keeps the transcripts of sessions started in ``cwd``."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def transcript_entries(folder: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                continue  # a line still being written
    return entries


def assistant_texts(entries: list[dict[str, Any]]) -> Iterator[str]:
    """The text of every assistant entry, in order (tool_use-only entries have none)."""
    for entry in entries:
        message = entry.get("message") or {}
        if entry.get("type") != "assistant" or message.get("role") != "assistant":
            continue
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        text = "\n".join(p for p in parts if p)
        if text.strip():
            yield text


def _in(workdir: Path, step: Step) -> Step:
    """The step with its tool paths pointing into ``workdir``."""
    if not step.tool_input:
        return step
    data = json.loads(json.dumps(step.tool_input).replace(WORK, str(workdir)))
    return replace(step, tool_input=data)


def run(conversation: Conversation, claude: str) -> list[dict[str, Any]]:
    """Play one conversation against the real binary; return its assistant text turns."""
    root = Path(tempfile.mkdtemp(prefix="hs-intent-"))
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    workdir = root / "work"
    script = [_in(workdir, step) for prompt in conversation.prompts for step in prompt.steps]
    rows: list[dict[str, Any]] = []
    with FakeAnthropicAPI(script) as fake:
        session = ClaudeSession(tmux, fake, claude, root, name=conversation.name, files=dict(FILES))
        try:
            session.launch()
            folder = project_dir(session.home, session.workdir)
            seen = 0
            for prompt in conversation.prompts:
                session.submit(prompt.text)
                last = prompt.steps[-1].text
                texts = poll(
                    lambda: list(assistant_texts(transcript_entries(folder))),
                    lambda found, last=last: last in found,
                    timeout=60,
                )
                for index, text in enumerate(texts[seen:]):
                    state = "commanded" if index == 0 else "processing"
                    rows.append({"actor": "agent", "text": text, "state": state, "session": conversation.name, "source": "transcript"})
                seen = len(texts)
                session.wait_stable(quiet=0.5, timeout=10, strict=False)
        finally:
            session.close()
            tmux.close()
            shutil.rmtree(root, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.data.make_intent_transcripts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the JSON lines here (default: stdout)")
    parser.add_argument("--jobs", type=int, default=4, help="sessions run at once (default 4)")
    args = parser.parse_args(argv)

    claude = find_claude()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda c: run(c, claude), CONVERSATIONS))
    rows = [row for result in results for row in result]
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if args.out:
        args.out.write_text(lines)
    else:
        sys.stdout.write(lines)
    print(f"{len(rows)} assistant turns from {len(CONVERSATIONS)} sessions in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
