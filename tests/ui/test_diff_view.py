"""The diff view (``d``): what an agent changed, its files and lines, its empty states, and remarks sent back as one prompt.

The diffs are real: a git repository made in the test's folder, changed,
and read with ``git diff`` (changes/unified.py parses it), handed to the
view by a fetcher that stands in for the service's ``changes`` (it records
the scopes it was asked for).  The app is the demo table (recorded Claude
screens, detectors off, a fixed clock).  Remarks go through the reply's own
path to the service's answerer; with no tmux server behind the demo rows,
tmux itself refuses the keys, which is the refusal the view must keep the
remarks through.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import subprocess
import threading
from pathlib import Path

from rich.console import Console
from textual.widgets import Input, OptionList

from headspace_tui.answering.answerer import Report
from headspace_tui.api.facade import Intent
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.diff_view import DiffScreen
from headspace_tui.app.widgets.diff_body import DiffBody
from headspace_tui.changes.model import Diff
from headspace_tui.changes.remarks import Remark, prompt
from headspace_tui.changes.unified import parse
from headspace_tui.model import AgentState
from headspace_tui.shared.config import Config, parse_config
from tests.ui.apps import demo_app, screen_open, service_of, wait_until

EVIL_NAME = "evil\x1b]0;pwned\x07.py"


def run(coroutine) -> None:
    asyncio.run(coroutine)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.quotepath=true", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return done.stdout


def real_diffs(tmp: Path) -> tuple[Diff, Diff]:
    """("turn", "start"): a repository changed twice; the turn's diff is the second change, "start"'s both."""
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text("def main():\n    return 1\n\n\nprint(main())\n")
    (repo / "README.md").write_text("# demo\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    start = git(repo, "rev-parse", "HEAD").strip()
    (repo / "app.py").write_text("def main():\n    return 2\n\n\nprint(main())\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "turn began")
    turn = git(repo, "rev-parse", "HEAD").strip()
    # This turn: app.py again, a new file with markup and control characters in its lines, one with them in its name.
    (repo / "app.py").write_text("def main():\n\treturn 3  # [b]not bold[/b]\n\n\nprint(main())\nprint('more')\n")
    (repo / "[b]notes.md").write_text("[red]not red[/red]\nan escape: \x1b[31mred?\x1b[0m\n")
    (repo / EVIL_NAME).write_text("x = 1\n")
    git(repo, "add", "-A")
    options = ["diff", "--no-color", "--no-ext-diff", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/"]
    return parse(git(repo, *options, "--cached", turn)), parse(git(repo, *options, "--cached", start), note="since headspace saw it")


class Fetcher:
    """The service's ``changes`` for one agent, as the view calls it: by scope, off the UI loop (recorded)."""

    def __init__(self, diffs: dict[str, Diff], *, hold: threading.Event | None = None) -> None:
        self.diffs = diffs
        self.asked: list[str] = []
        self.hold = hold

    def __call__(self, scope: str) -> Diff:
        self.asked.append(scope)
        if self.hold is not None:
            self.hold.wait(10)
        return self.diffs[scope]


def with_changes(app: HeadspaceApp, fetch: Fetcher) -> None:
    """The facade's ``changes`` (the service's side, built apart) on this app's client: the fetcher, for every pane."""

    async def changes(pane_id: str, scope: str) -> Diff:  # the facade's shape: a coroutine (the client asks off the loop, as here)
        return await asyncio.to_thread(fetch, scope)

    app.service.changes = changes  # type: ignore[method-assign]


def screen_text(app) -> str:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="truecolor", record=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


async def open_view(pilot, app: HeadspaceApp, session: str = "notes") -> DiffScreen:
    await app.snapshot_loader(pilot)
    agent = next(a for a in app.table.agents.values() if a.target.startswith(f"{session}:"))
    app.table.select(agent.pane_id)
    await pilot.press("d")
    await wait_until(pilot, lambda: screen_open(app, DiffScreen), "the diff view")
    view = app.screen
    assert isinstance(view, DiffScreen)
    await wait_until(pilot, lambda: view.diff is not None and not view.loading, "the diff fetched")
    return view


def file_entries(view: DiffScreen) -> list[str]:
    files = view.query_one("#files", OptionList)
    return [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]


def shown(view: DiffScreen) -> str:
    return str(view.query_one("#empty").render())


# -- the view -------------------------------------------------------------------------


def test_d_opens_this_turns_files_with_their_counts_and_t_shows_since_it_started(tmp_path):
    turn, start = real_diffs(tmp_path)
    fetch = Fetcher({"turn": turn, "start": start})

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, fetch)
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            assert fetch.asked == ["turn"]
            assert file_entries(view) == ["A [b]notes.md +2 −0", "M app.py +2 −1", "A evil␛]0;pwned␇.py +1 −0"]  # git's order
            title = str(view.query_one("#title").render())
            assert "this turn" in title and turn.summary() in title and turn.summary() == "+5 −1 · 3 files", title
            await pilot.press("t")
            await wait_until(pilot, lambda: view.scope == "start" and not view.loading, "since it started")
            assert fetch.asked == ["turn", "start"]
            title = str(view.query_one("#title").render())
            assert "since it started" in title and "since headspace saw it" in title, title
            assert file_entries(view)[1] == "M app.py +2 −1" and "M README.md" not in " ".join(file_entries(view))
            await pilot.press("r")
            await wait_until(pilot, lambda: fetch.asked == ["turn", "start", "start"] and not view.loading, "the refresh")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen_open(app, DiffScreen), "the view closed")

    run(scenario())


def test_the_lines_are_shown_as_text_never_as_markup_or_terminal_controls(tmp_path):
    turn, _ = real_diffs(tmp_path)

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": turn}))
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            text = screen_text(app)
            assert "[b]not bold[/b]" in text and "[red]not red[/red]" in text and "[b]notes.md" in text, text
            assert "␛[31mred?␛[0m" in text and "\x1b" not in text.replace("\x1b[", "")  # the file's escape is a picture
            assert "    return 3" in text  # its tab, as spaces
            body = view.query_one(DiffBody)
            assert body.row_count > 10

    run(scenario())


def test_files_are_jumped_to_with_brackets_and_enter_on_the_list(tmp_path):
    turn, _ = real_diffs(tmp_path)

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": turn}))
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            body, files = view.query_one(DiffBody), view.query_one("#files", OptionList)
            assert body.current is not None and body.current.kind == "file" and body.current.file == 0
            await pilot.press("right_square_bracket")
            assert body.current.file == 1 and body.current.kind == "file"
            await pilot.pause()
            assert files.highlighted == 1
            await pilot.press("n")
            assert body.current.file == 2
            await pilot.press("left_square_bracket", "p")
            assert body.current.file == 0
            files.focus()
            files.highlighted = 2
            await pilot.press("enter")
            assert body.current.kind == "file" and body.current.file == 2 and body.has_focus

    run(scenario())


def test_what_the_caps_left_out_is_said(tmp_path):
    turn, _ = real_diffs(tmp_path)
    capped = dataclasses.replace(turn, files=(dataclasses.replace(turn.files[0], more_lines=7), *turn.files[1:]), more_files=4)

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": capped}))
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            text = screen_text(app)
            assert "… 7 more lines" in text and "… 4 more files" in text, text
            assert file_entries(view)[-1] == "… 4 more files"

    run(scenario())


def test_an_error_a_note_and_no_change_each_say_so(tmp_path):
    for diff, words in (
        (Diff(error="git diff failed: fatal: bad object"), "git diff failed: fatal: bad object"),
        (Diff(note="not a git repository"), "no change this turn (not a git repository)"),
        (Diff(), "no change this turn"),
    ):

        async def scenario(diff=diff, words=words) -> None:
            app = demo_app()
            with_changes(app, Fetcher({"turn": diff}))
            async with app.run_test(size=(120, 30)) as pilot:
                view = await open_view(pilot, app)
                assert shown(view) == words and not view.query_one("#panes").display

        run(scenario())


def test_it_says_loading_until_the_diff_comes_and_a_failed_fetch_is_one_line(tmp_path):
    turn, _ = real_diffs(tmp_path)
    hold = threading.Event()

    def broken(scope: str) -> Diff:
        raise OSError("the service went away")

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": turn}, hold=hold))
        async with app.run_test(size=(120, 30)) as pilot:
            await app.snapshot_loader(pilot)
            await pilot.press("d")
            await wait_until(pilot, lambda: screen_open(app, DiffScreen), "the diff view")
            view = app.screen
            assert isinstance(view, DiffScreen)
            await pilot.press("j")  # the keys stay live while git runs
            assert view.loading and shown(view) == "loading…"
            hold.set()
            await wait_until(pilot, lambda: not view.loading, "the diff")
            assert view.query_one("#panes").display
            view.fetch = broken
            await pilot.press("r")
            await wait_until(pilot, lambda: view.diff is not None and view.diff.error != "", "the failure")
            assert shown(view) == "could not read the changes: the service went away"

    run(scenario())


# -- the row's column ---------------------------------------------------------------------


def test_the_change_column_shows_the_turns_summary_and_hides_by_key_and_by_config():
    async def scenario(config: Config) -> None:
        app = demo_app(config=config)
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            table = app.table
            assert "change" not in table.columns  # no agent changed anything: the table reads as before
            agent = next(a for a in table.agents.values() if a.target.startswith("notes:"))
            table.upsert(dataclasses.replace(agent, change="+12 −3 · 2 files"))
            await pilot.pause()
            if config.change_column:
                assert "change" in table.columns
                assert "+12 −3 · 2 files" in screen_text(app)
                await pilot.press("D")
                assert "change" not in table.columns and "+12 −3" not in screen_text(app)
            else:
                assert "change" not in table.columns
                await pilot.press("D")
                await pilot.pause()
                assert "change" in table.columns and "+12 −3 · 2 files" in screen_text(app)

    run(scenario(Config(theme="headspace-dark")))
    hidden = parse_config({"change_column": False, "theme": "headspace-dark"})
    assert hidden.change_column is False
    run(scenario(hidden))


# -- remarks ------------------------------------------------------------------------------


def line_row(view: DiffScreen, path: str, kind: str, number: int) -> int:
    """The index of the row of ``path``'s line ``number`` (new side; old for "-")."""
    body = view.query_one(DiffBody)
    assert view.diff is not None
    file = next(i for i, f in enumerate(view.diff.files) if f.path == path)
    for i in range(body.row_count):
        row = body.row_at(i)
        if row is not None and row.file == file and row.line is not None and row.line.kind == kind and (row.line.old if kind == "-" else row.line.new) == number:
            return i
    raise AssertionError(f"no {kind} line {number} of {path}")


def test_two_remarks_go_as_one_prompt_through_the_reply_path_and_stay_when_it_is_refused(tmp_path):
    turn, _ = real_diffs(tmp_path)
    answered: list[tuple[str, Intent]] = []

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": turn}))
        service = service_of(app)
        original = service.answer

        def answer(agent, intent, seen=None):
            answered.append((agent.pane_id, intent))
            return original(agent, intent, seen)

        service.answer = answer  # type: ignore[method-assign]
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            agent = view.pane_id
            assert app.table.agents[agent].state is AgentState.IDLE
            body = view.query_one(DiffBody)
            # One line: c.
            body.move_to(line_row(view, "app.py", "+", 2))
            await pilot.press("c")
            assert view.query_one("#remark", Input).has_focus
            await pilot.press(*"use four spaces", "enter")
            # A range: m, move, m.
            body.move_to(line_row(view, "[b]notes.md", "+", 1))
            await pilot.press("m", "j", "m")
            await pilot.press(*"drop [this]", "enter")
            assert [(r.path, len(r.lines), r.text) for r in view.remarks] == [("app.py", 1, "use four spaces"), ("[b]notes.md", 2, "drop [this]")]
            assert "▸ use four spaces" in screen_text(app) and "▸ drop [this]" in screen_text(app)
            assert "2 remarks" in str(view.query_one("#title").render())
            await pilot.press("s")
            status = view.query_one("#status")
            await wait_until(pilot, lambda: "not sent" in str(status.render()), "the refusal")
            expected = (
                "Remarks on your changes (2): "
                "1) app.py line 2: `+    return 3  # [b]not bold[/b]` → use four spaces "
                "2) [b]notes.md lines 1-2: `+[red]not red[/red]` `+an escape: ␛[31mred?␛[0m` → drop [this]"
            )
            assert [(pane, intent.kind, intent.text) for pane, intent in answered] == [(agent, "text", expected)]
            assert prompt(view.remarks) == expected and len(view.remarks) == 2  # kept
            assert "the remarks are kept" in str(status.render())
            # Closed and opened again: the agent's remarks are still there.
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen_open(app, DiffScreen), "the view closed")
            await pilot.press("d")
            await wait_until(pilot, lambda: screen_open(app, DiffScreen) and app.screen.diff is not None, "the view again")
            assert len(app.screen.remarks) == 2

    run(scenario())


def test_remarks_are_cleared_once_the_agent_took_them_and_never_sent_into_a_question(tmp_path):
    turn, _ = real_diffs(tmp_path)
    removed = next(f for f in turn.files if f.path == "app.py").hunks[0].lines[1]
    assert removed.kind == "-" and removed.old == 2

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": turn}))
        service = service_of(app)
        typed: list[str] = []

        def answer(agent, intent, seen=None):
            typed.append(intent.text)
            return ""  # on its way: the report follows

        service.answer = answer  # type: ignore[method-assign]
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            view.remarks.append(Remark("app.py", (removed,), "why 3?"))
            await pilot.press("s")
            assert typed == ["A remark on your changes: app.py removed line 2: `-    return 2` → why 3?"]
            assert view.sending
            service._answerer._report(Report(view.pane_id, "remarks submitted", "information", True))
            await wait_until(pilot, lambda: not view.remarks, "the remarks cleared")
            assert "sent: remarks submitted" in str(view.query_one("#status").render())
            await pilot.press("escape")
            # At a question the prompt would be its answer: refused before the answerer.
            web = next(a for a in app.table.agents.values() if a.target.startswith("web:"))
            assert web.state is AgentState.QUESTION
            app.table.select(web.pane_id)
            await pilot.press("d")
            await wait_until(pilot, lambda: screen_open(app, DiffScreen) and app.screen.diff is not None, "web's view")
            other = app.screen
            assert isinstance(other, DiffScreen)
            other.remarks.append(Remark("app.py", (removed,), "why?"))
            await pilot.press("s")
            assert "a question is open" in str(other.query_one("#status").render()) and len(other.remarks) == 1
            assert len(typed) == 1

    run(scenario())


def test_the_diff_view_snapshot(snap_compare, tmp_path):
    """This turn's diff of the idle agent: the files, coloured lines, a remark under its line, two lines marked."""
    from tests.ui.test_modal_snapshots import compare

    turn, _ = real_diffs(tmp_path)
    app = demo_app()
    with_changes(app, Fetcher({"turn": turn}))

    async def steps(pilot) -> None:
        view = await open_view(pilot, app)
        body = view.query_one(DiffBody)
        body.move_to(line_row(view, "app.py", "+", 2))
        await pilot.press("c", *"use four spaces", "enter")
        body.move_to(line_row(view, "[b]notes.md", "+", 1))
        await pilot.press("m", "j")

    assert compare(snap_compare, app, (110, 30), steps)


def test_a_click_moves_the_cursor_and_x_takes_a_remark_back(tmp_path):
    turn, _ = real_diffs(tmp_path)

    async def scenario() -> None:
        app = demo_app()
        with_changes(app, Fetcher({"turn": turn}))
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_view(pilot, app)
            body = view.query_one(DiffBody)
            target = line_row(view, "app.py", "+", 6)
            await pilot.click(DiffBody, offset=(20, target - body.scroll_offset.y))
            assert body.cursor == target
            await pilot.press("c", *"why?", "enter")
            assert len(view.remarks) == 1 and body.current_remark is not None
            await pilot.press("j")  # onto the remark's own row
            assert body.current is not None and body.current.kind == "remark"
            await pilot.press("x")
            assert view.remarks == [] and "remark" not in str(view.query_one("#title").render())
            await pilot.press("x")
            assert "no remark here" in str(view.query_one("#status").render())

    run(scenario())
