"""The phone page (``headspace web``) in a real browser: Debian's Chromium at a phone's size, with touch, driven by Playwright.

Against real Claude Code sessions in a private tmux, through the resident
service the command starts:

* the page lists the agents, each an element with ``data-pane`` and
  ``data-state``; a new wait shows on the page soon after it shows on the pane;
* "Approve" on a permission runs exactly that command (the scripted API sees
  its result), the audit says "via web" and the client's address;
* a page that did not hear of a change (its stream cut) and taps "Approve" on
  a dialog answered in the terminal meanwhile sends nothing, says so, and
  redraws the dialog there now; "Deny" then refuses that one;
* a two-part question (an option, then a multi-select's ticks and Submit),
  a reply and a nudge reach Claude as exactly what was tapped and typed;
* no token: 401 and no agent data; a wrong one: 403; a change without the
  page's Origin: 403; a GET never answers;
* a session named like HTML, and markup typed in a pane, are shown as text
  (nothing of them runs);
* an Edit whose dialog Claude's answer hook holds shows the change on the
  card, above Approve: its removed and added lines, markup in them as text;
* the page says when it is not live, and comes back by itself;
* ``[web]`` in the config serves the page at every start, and a
  notification carries the agent's page (no token; opening it answers
  nothing);
* with the terminal UI and the page open, tmux sees one control client per
  session (the service's), not two;
* a network address is refused without TLS; over TLS the cookie is Secure;
  the token is in no log.

Screenshots of the page at 390x844 go to snapshots/web/ when
HEADSPACE_WEB_SHOTS=1 (docs/web.md's pictures; they are not compared), else
to the test's own folder.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from headspace_tui.hooks import settings as hook_settings
from tests.e2e.test_jump import wait
from tests.e2e.test_multi_select import answers
from tests.e2e.test_notify_terminal import recording_command
from tests.e2e.test_resident_service import run, started
from tests.harness import fake_api as api
from tests.harness.gitrepo import git
from tests.harness.scenarios import EDIT_NEW, EDIT_OLD, NUMBERED_MENU, QUESTION_DB, QUESTION_FEATURES, README_BEFORE
from tests.ui.test_inbox_live import start_agents

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots" / "web"
WAIT = 30_000  # ms a page may take to show what the service knows (generous: CI is loaded; the benchmark measures)


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """One Chromium for the module (Debian's: Playwright's own download cannot reach its servers here); a missing one fails."""
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "Chromium is not installed (apt-get install chromium): the page is tested in a real browser"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def phone(chromium):
    """A fresh phone-sized, touch browser context (its own cookies) per test."""
    context = chromium.new_context(**PHONE)
    yield context
    context.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def web_on(server: str, services: list[int], *options: str, config: Path | None = None) -> tuple[str, int, str]:
    """``headspace -L server web --listen 127.0.0.1:PORT``: the printed address, its port and token (the service's pid noted for teardown)."""
    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    port = free_port()
    proc = run("-L", server, *(["--config", str(config)] if config else []), "web", "--listen", f"127.0.0.1:{port}", "--no-qr", *options)
    assert proc.returncode == 0, proc.stderr
    urls = [line for line in proc.stdout.splitlines() if line.startswith("http://")]
    assert len(urls) == 1 and urls[0].startswith(f"http://127.0.0.1:{port}/?token="), proc.stdout
    card = read_card(place_of(TmuxServer(socket_name=server).identity))
    assert card is not None and card["web"]["port"] == port, card
    services.append(card["pid"])
    return urls[0], port, urls[0].split("token=", 1)[1]


def status_of(url: str, *, method: str = "GET", body: dict | None = None, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def agent_item(page, pane_id: str, state: str):
    return page.locator(f'li.agent[data-pane="{pane_id}"][data-state="{state}"]')


def open_agent(page, pane_id: str, state: str) -> None:
    item = agent_item(page, pane_id, state)
    item.wait_for(timeout=WAIT)
    item.locator("button.open").tap()
    page.locator(f'#agent-view[data-pane="{pane_id}"][data-state="{state}"]').wait_for(timeout=WAIT)


def audit_lines(needle: str) -> list[str]:
    """Lines of headspace's own files (the event log, the service's log) under this test's private state folders that hold ``needle``.

    Not the page's kept settings (``web/``, 0600): the token's own home across restarts, as a ``--token-file`` is.
    """
    found = []
    kept = Path(os.environ["XDG_STATE_HOME"]) / "headspace" / "web"
    for base in (os.environ["XDG_STATE_HOME"], os.environ.get("XDG_DATA_HOME", "")):
        for path in Path(base).rglob("*") if base else []:
            if path.parent == kept:
                continue
            if path.is_file() and path.stat().st_size < 10_000_000:
                found += [line for line in path.read_text(errors="replace").splitlines() if needle in line]
    return found


def shots(tmp_path: Path) -> Path:
    return SNAPSHOTS if os.environ.get("HEADSPACE_WEB_SHOTS") == "1" else tmp_path


def test_a_phone_approves_the_exact_call_and_the_page_is_closed_to_anyone_without_the_token(claude_session, private_tmux, services, phone, tmp_path):
    session = claude_session([api.bash("touch from-the-phone.txt", "Create a file"), api.text("Created it.")], name="asking")
    url, port, token = web_on(private_tmux.name, services)
    base = f"http://127.0.0.1:{port}"
    again = run("-L", private_tmux.name, "web", "--no-qr")  # on already: where it is, with the same token
    assert again.returncode == 0 and url in again.stdout.splitlines(), again.stdout
    said = run("-L", private_tmux.name, "serve", "--status")
    assert f"its web page: http://127.0.0.1:{port}/" in said.stdout and token not in said.stdout, said.stdout

    # Closed to anyone without the token: no page, no agent data, no answer.
    assert status_of(f"{base}/")[0] == 401
    code, body = status_of(f"{base}/api/agents")
    assert code == 401 and session.pane_id not in body and "asking" not in body
    assert status_of(f"{base}/?token={'x' * len(token)}")[0] == 403
    answer = {"pane": session.pane_id, "intent": "approve", "expect": ""}
    assert status_of(f"{base}/api/answer", method="POST", body=answer, headers={"Content-Type": "application/json"})[0] == 401
    cookie = {"Cookie": f"headspace_token={token}", "Content-Type": "application/json"}
    code, body = status_of(f"{base}/api/answer", method="POST", body=answer, headers={**cookie, "Origin": "http://evil.example"})
    assert code == 403 and "Origin" in body, body
    assert status_of(f"{base}/api/answer", headers=cookie)[0] == 405  # a GET never answers

    page = phone.new_page()
    page.goto(url)
    assert page.url == f"{base}/", page.url  # the token left the address bar for the cookie
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    page.locator("#live.on").wait_for(timeout=WAIT)

    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=60)
    on_pane = time.monotonic()
    agent_item(page, session.pane_id, "permission").wait_for(timeout=WAIT)
    on_page = time.monotonic() - on_pane
    # Pushed, not picked up by the page's 3 s retry: 5x the 250 ms goal, a bound a loaded CI box (Chromium beside
    # the e2e stage's workers) still meets.  How fast: benchmarks/web_page.py measures the p50/p95 (p95 under 80 ms here).
    assert on_page <= 1.25, f"the wait reached the page {on_page:.2f}s after the pane showed it"
    page.screenshot(path=str(shots(tmp_path) / "list-390x844.png"))

    open_agent(page, session.pane_id, "permission")
    page.locator("#agent-view").get_by_text("touch from-the-phone.txt").first.wait_for(timeout=WAIT)  # the screen and the dialog show the exact command
    page.screenshot(path=str(shots(tmp_path) / "permission-390x844.png"))
    # Each answer once: the plain "Yes" is Approve and "No" is Deny (not a second pair of buttons); no Reply box at a permission.
    page.get_by_role("button", name="Deny", exact=True).wait_for(timeout=WAIT)
    choices = {c["label"]: c["same_as"] for c in page.evaluate("agents.get(shown).choices")}
    assert choices.get("Yes") == "approve" and choices.get("No") == "deny", choices
    assert page.get_by_role("button", name="Yes", exact=True).count() == 0 and page.get_by_role("button", name="No", exact=True).count() == 0
    assert page.locator("#reply-form").is_hidden()
    page.get_by_role("button", name="Approve", exact=True).tap()
    page.locator("#notice.ok").wait_for(timeout=WAIT)
    notice = page.locator("#notice").inner_text()
    assert notice.startswith("Sent:") and notice.endswith("Nothing else waits."), notice
    session.wait_for("Created it.", timeout=30)
    assert (session.workdir / "from-the-phone.txt").exists()
    # Answered, and no other agent waits: the page went back to the list, where the agent is idle now.
    page.locator("#list-view").wait_for(timeout=WAIT)
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    audited = audit_lines("via web 127.0.0.1")
    assert audited, "the audit does not say the answer came from the web page"


def test_one_tap_on_the_list_approves_a_plain_permission_and_the_page_opens_the_next_agent_that_waits(claude_session, fake_api, private_tmux, services, phone, tmp_path):
    """Two agents each ask to run a command; the list shows each command in full with Approve beside it.

    One tap approves that request and no other (the command runs; the other agent still waits), and the page
    then opens the agent that still waits, as the terminal's inbox goes on to the next. Answering that one, with
    nothing else waiting, brings the page back to the list.
    """
    sessions = start_agents(claude_session, fake_api, ["first", "second"])
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    for name, session in sessions.items():
        session.submit(f"please ask {name}")
    for session in sessions.values():
        session.wait_for(NUMBERED_MENU, timeout=60)
    first, second = sessions["first"], sessions["second"]
    quick = agent_item(page, first.pane_id, "permission").locator(".quick")
    quick.wait_for(timeout=WAIT)
    agent_item(page, second.pane_id, "permission").locator(".quick").wait_for(timeout=WAIT)
    assert quick.locator(".call").inner_text() == "Bash: touch first.txt && echo made-first-end", quick.inner_text()  # the exact command, whole
    page.locator("#summary", has_text="2 agents · 2 need you").wait_for(timeout=WAIT)
    page.screenshot(path=str(shots(tmp_path) / "list-approve-390x844.png"))

    quick.get_by_role("button").tap()
    page.locator(f'#agent-view[data-pane="{second.pane_id}"][data-state="permission"]').wait_for(timeout=WAIT)
    notice = page.locator("#notice").inner_text()
    assert notice.startswith("Sent:") and f"Next: {second.name}" in notice, notice
    first.wait_for("first is done.", timeout=60)
    assert (first.workdir / "first.txt").exists()
    page.locator("#summary", has_text="2 agents · 1 needs you").wait_for(timeout=WAIT)  # the header follows on the card
    assert not (second.workdir / "second.txt").exists(), "the tap approved another request than its own"

    page.get_by_role("button", name="Approve", exact=True).tap()
    page.locator("#list-view").wait_for(timeout=WAIT)
    assert page.locator("#notice").inner_text().endswith("Nothing else waits."), page.locator("#notice").inner_text()
    second.wait_for("second is done.", timeout=60)
    assert (second.workdir / "second.txt").exists()


def test_a_stale_tap_for_an_answered_request_never_approves_the_next_one_with_the_same_words(claude_session, private_tmux, services, phone):
    """The issue's defect: the page's Approve named only the words, so it approved the same command asked again."""
    command = "echo run >> runs.txt"
    session = claude_session([api.bash(command, "Log a run"), api.bash(command, "Log a run"), api.text("Logged twice.")], name="twice")
    runs = session.workdir / "runs.txt"
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    session.submit("log two runs")
    session.wait_for(NUMBERED_MENU, timeout=60)
    open_agent(page, session.pane_id, "permission")
    page.get_by_role("button", name="Approve", exact=True).wait_for(timeout=WAIT)
    first = page.evaluate("agents.get(shown).request")
    assert first, "the page has no request to answer"

    page.route("**/api/events**", lambda route: route.abort())  # a phone tab in the background: its stream frozen
    page.evaluate("events.close()")
    run("-L", private_tmux.name, "send", session.pane_id, "--approve")  # answered in the terminal
    wait(lambda: runs.exists() and len(runs.read_text().splitlines()) == 1, "the first run")

    def asked_again() -> bool:
        rows = [json.loads(line) for line in run("-L", private_tmux.name, "status", "--json").stdout.splitlines()]
        return any(row["state"] == "permission" and row["request"] not in (None, first) for row in rows)

    wait(asked_again, "the service to see the same command asked again")
    page.get_by_role("button", name="Approve", exact=True).tap()
    page.locator("#notice.error").wait_for(timeout=WAIT)
    notice = page.locator("#notice").inner_text()
    assert notice.startswith("Nothing sent:") and "that request was already answered; this is a new one" in notice, notice
    time.sleep(1.5)  # time enough for a command that was let through to run
    assert len(runs.read_text().splitlines()) == 1, "the stale tap ran the command a second time"

    page.unroute("**/api/events**")
    page.evaluate("follow()")
    page.locator("#live.on").wait_for(timeout=WAIT)
    page.wait_for_function("(first) => agents.get(shown) && agents.get(shown).request && agents.get(shown).request !== first", arg=first, timeout=WAIT)
    page.get_by_role("button", name="Approve", exact=True).tap()  # the new request, seen: approved
    page.locator("#notice.ok").wait_for(timeout=WAIT)
    session.wait_for("Logged twice.", timeout=60)
    assert len(runs.read_text().splitlines()) == 2


def test_a_tap_after_the_agent_stopped_waiting_says_how_long_ago_and_what_it_does_now_and_sends_nothing(claude_session, private_tmux, services, phone, tmp_path):
    """The card's request ended without headspace (the person answered at the pane); a frozen page's tap is refused in plain words."""
    session, page, _ = at_permission(claude_session, private_tmux, services, phone, [api.bash("touch here.txt", "Make a file"), api.text("Made it.")], "gone-by", "make a file", "touch here.txt")
    page.route("**/api/events**", lambda route: route.abort())  # the phone in a pocket: its stream frozen
    page.evaluate("events.close()")
    # Answered at the pane itself ("Yes" is the dialog's first option); a press a loaded Claude did not take is pressed again.
    session.enter_until(lambda: (session.workdir / "here.txt").exists(), "the dialog answered at the pane")
    session.wait_for("Made it.", timeout=60)

    def idle() -> bool:
        rows = [json.loads(line) for line in run("-L", private_tmux.name, "status", "--json").stdout.splitlines()]
        return any(row["pane_id"] == session.pane_id and row["state"] == "idle" for row in rows)

    wait(idle, "the service to see the agent idle")
    page.get_by_role("button", name="Approve", exact=True).tap()
    page.locator("#notice.error").wait_for(timeout=WAIT)
    notice = page.locator("#notice").inner_text()
    assert re.search(r"^Nothing sent: the agent stopped waiting for this answer \d+ s ago; it is now idle\.", notice), notice
    page.screenshot(path=str(shots(tmp_path) / "late-tap-390x844.png"))
    assert (session.workdir / "here.txt").exists() and session.screen().count("Made it.") == 1  # the one answer, the person's


def at_permission(claude_session, private_tmux, services, phone, script: list, name: str, prompt: str, command: str):
    """Claude asked to run ``command`` (its first step), the page open on that agent with the whole dialog read (its plain
    "Yes" too), as the user saw it: (session, page, url)."""
    session = claude_session(script, name=name)
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    session.submit(prompt)
    session.wait_for(command, timeout=60)
    open_agent(page, session.pane_id, "permission")
    page.locator("#agent-view").get_by_text(command).first.wait_for(timeout=WAIT)
    page.get_by_role("button", name="Approve", exact=True).wait_for(timeout=WAIT)
    return session, page, url


def test_a_stale_page_sends_nothing_and_redraws_then_deny_refuses_the_dialog_there_now(claude_session, private_tmux, services, phone):
    script = [api.bash("touch first.txt", "First file"), api.bash("touch second.txt", "Second file"), api.text("Both made.")]
    session, page, _ = at_permission(claude_session, private_tmux, services, phone, script, "stale", "create two files", "touch first.txt")

    # The page stops hearing of changes (its stream cut, as on a train), and the dialog is answered in the terminal.
    page.route("**/api/events**", lambda route: route.abort())
    page.evaluate("events.close()")
    run("-L", private_tmux.name, "send", session.pane_id, "--approve")
    session.wait_for("touch second.txt", timeout=60)

    def service_sees_the_second() -> bool:  # the service has read the new dialog too (the page, not live, has not)
        rows = [json.loads(line) for line in run("-L", private_tmux.name, "status", "--json").stdout.splitlines()]
        return any(row["state"] == "permission" and "second.txt" in (row["detail"] or "") for row in rows)

    wait(service_sees_the_second, "the service to see the second dialog")
    assert page.locator("#agent-view").get_by_text("touch first.txt").count() > 0  # the page still shows the first dialog
    page.get_by_role("button", name="Approve", exact=True).tap()
    page.locator("#notice.error").wait_for(timeout=WAIT)
    notice = page.locator("#notice").inner_text()
    assert notice.startswith("Nothing sent:") and "that request was already answered; this is a new one." in notice, notice
    page.locator("#agent-view").get_by_text("touch second.txt").first.wait_for(timeout=WAIT)  # redrawn: the dialog there now
    time.sleep(1.0)
    assert not (session.workdir / "second.txt").exists()  # the stale tap approved nothing
    page.unroute("**/api/events**")
    page.evaluate("follow()")  # back on the network
    page.locator("#live.on").wait_for(timeout=WAIT)

    page.get_by_role("button", name="Deny", exact=True).tap()
    page.locator("#notice.ok").wait_for(timeout=WAIT)
    try:  # Claude was told no: back at its box (the page on the list: nothing else waits)
        agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    except Exception as exc:
        shown = page.evaluate("JSON.stringify(agents.get(shown))")
        # The page's row last: a report that keeps only the ends of a long message still shows it.
        raise AssertionError(f"the page did not show the agent idle: {page.locator('#notice').inner_text()!r}; the pane:\n{session.screen()}\nthe page's row: {shown}") from exc
    assert not (session.workdir / "second.txt").exists()
    assert (session.workdir / "first.txt").exists()


def test_a_reply_read_before_a_change_that_arrives_after_it_does_not_undo_it(claude_session, private_tmux, services, phone):
    """Opening an agent, the page reads its screen; if that reply was read before the agent changed but reaches
    the page after the change's event (two connections: their order is not kept), the older reply is not drawn.

    The late reply is made here: the page's request is held and answered with a reply the service gave
    before the answer (the network's reordering cannot be caused on demand; the reply itself is the service's own).
    """
    script = [api.bash("touch late.txt", "A file"), api.text("Fine.")]
    session, page, url = at_permission(claude_session, private_tmux, services, phone, script, "late", "make a file", "touch late.txt")
    origin = url.split("/?", 1)[0]
    before = page.request.get(f"{origin}/api/screen?pane={quote(session.pane_id)}")
    assert before.ok and before.json()["agent"]["state"] == "permission", before.text()
    stale = before.body()

    assert page.locator("#summary").inner_text() == "1 agent · 1 needs you"
    page.get_by_role("button", name="Back").tap()
    held = []
    page.route("**/api/screen**", lambda route: held.append(route))
    agent_item(page, session.pane_id, "permission").locator("button.open").tap()  # opened again: its screen asked for, and held
    deadline = time.monotonic() + 30
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(100)  # Playwright hands a request to its route only while it is called
    assert len(held) == 1, f"the page asked for the screen {len(held)} times as it opened the agent"
    run("-L", private_tmux.name, "send", session.pane_id, "--deny")  # answered in the terminal meanwhile
    page.locator(f'#agent-view[data-pane="{session.pane_id}"][data-state="idle"]').wait_for(timeout=WAIT)  # the change, by the stream
    assert page.locator("#summary").inner_text() == "1 agent · 0 need you"  # the header follows on the agent's page too
    stale_rev = json.loads(stale)["rev"]
    page.wait_for_function("(rev) => screenRev > rev", arg=stale_rev, timeout=WAIT)  # the idle screen, pushed by the stream
    held[0].fulfill(status=200, content_type="application/json", body=stale)
    page.locator('#agent-view[aria-busy="false"]').wait_for(timeout=WAIT)  # the late reply read
    page.unroute("**/api/screen**")
    assert page.locator("#agent-view").get_attribute("data-state") == "idle", page.evaluate("JSON.stringify(agents.get(shown))")
    stale_text = "\n".join("".join(run[0] for run in row) for row in json.loads(stale)["screen"]["rows"])
    assert "Do you want to proceed?" in stale_text, stale_text  # the late reply would draw the dialog again
    assert "Do you want to proceed?" not in page.locator("#screen").inner_text()  # the dialog's screen, from before, not drawn
    assert not (session.workdir / "late.txt").exists()


def test_a_two_part_question_with_a_multi_select_and_a_reply_reach_claude_as_tapped(claude_session, fake_api, private_tmux, services, phone, tmp_path):
    session = claude_session([api.ask(QUESTION_DB, QUESTION_FEATURES), api.text("What next?"), api.text("Writing them."), api.text("Going on.")], name="asks")
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    session.submit("help me choose")
    session.wait_for("Which database", timeout=60)
    open_agent(page, session.pane_id, "question")
    view = page.locator("#agent-view")
    view.get_by_text("question 1 of 2").wait_for(timeout=WAIT)
    page.screenshot(path=str(shots(tmp_path) / "question-390x844.png"))
    page.get_by_role("button", name="SQLite", exact=True).tap()  # an option: question 2 of 2 follows

    view.get_by_text("question 2 of 2").wait_for(timeout=WAIT)
    view.get_by_text("Which features should ship first?").first.wait_for(timeout=WAIT)
    assert not fake_api.requests or not any(r.tool_results() for r in fake_api.requests)  # nothing answered yet: the dialog goes on
    page.get_by_role("checkbox", name=re.compile("Auth")).check()
    page.get_by_role("checkbox", name=re.compile("Search")).check()
    page.screenshot(path=str(shots(tmp_path) / "multi-select-390x844.png"))
    page.get_by_role("button", name="Submit", exact=True).tap()
    request = fake_api.wait_for(lambda r: bool(r.tool_results()), 30)
    assert answers(request) == {"Which database should we use?": "SQLite", "Which features should ship first?": "Auth, Search"}

    # The dialog answered whole, and nothing else waits: the page is on the list. The agent is opened again to reply.
    page.locator("#list-view").wait_for(timeout=WAIT)
    session.wait_for("What next?", timeout=60)
    open_agent(page, session.pane_id, "input")  # Claude asks in words: it waits for your input
    page.locator("#reply-form").wait_for(state="visible", timeout=WAIT)
    page.get_by_role("textbox", name="Reply text").fill("write the tests first")
    page.get_by_role("button", name="Send reply").tap()
    fake_api.wait_for(lambda r: "write the tests first" in r.user_text(), 30)

    session.wait_for("Writing them.", timeout=60)
    try:
        open_agent(page, session.pane_id, "idle")
    except Exception as exc:  # once in CI (load): say what the page showed, and the pane
        shown = page.evaluate("(pane) => JSON.stringify(agents.get(pane))", session.pane_id)
        raise AssertionError(f"the page did not show the agent idle: {page.locator('#notice').inner_text()!r}; the page's row {shown}; the pane:\n{session.screen()}") from exc
    page.get_by_role("button", name="Nudge", exact=True).tap()  # the configured nudge text, as the terminal's c sends
    fake_api.wait_for(lambda r: r.user_text().strip().endswith("continue"), 30)


def test_a_hostile_name_is_text_and_the_page_says_when_it_is_not_live(claude_session, private_tmux, services, phone):
    name = "<img src=x onerror=pwned=1>"  # no '.': tmux reads one in a target as the pane's
    session = claude_session(name=name)
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    item = agent_item(page, session.pane_id, "idle")
    item.wait_for(timeout=WAIT)
    assert name in item.inner_text()
    assert page.locator("img").count() == 0 and page.evaluate("typeof pwned") == "undefined"
    typed = "<script>pwned=2</script><b>bold?</b>"  # markup in the pane itself: a draft in Claude's box
    session.type(typed)
    session.wait_for("pwned=2</script><b>bold?</b>", timeout=30)
    item.get_by_role("button").tap()
    page.locator("#screen", has_text=typed).wait_for(timeout=WAIT)
    assert page.locator("#screen script, #screen b, img").count() == 0 and page.evaluate("typeof pwned") == "undefined"
    page.get_by_role("button", name="Back").tap()

    page.route("**/api/events**", lambda route: route.abort())
    page.evaluate("events.close(); events.onerror()")
    page.locator("#live.off").wait_for(timeout=WAIT)
    assert re.fullmatch(r"offline since \d\d:\d\d:\d\d", page.locator("#live").inner_text()), page.locator("#live").inner_text()
    assert page.evaluate("document.body.classList.contains('stale')")  # the list, perhaps old, greyed
    page.unroute("**/api/events**")
    page.evaluate("follow()")
    page.locator("#live.on").wait_for(timeout=WAIT)
    assert not page.evaluate("document.body.classList.contains('stale')")


def test_an_edit_held_by_the_hook_shows_its_change_above_approve_and_its_lines_as_text(claude_session, private_tmux, services, phone, tmp_path):
    hostile = '<img src=x onerror="pwned=1"><script>pwned=2</script>[b]x[/b]'
    script = [api.tool("Read", {"file_path": "README.md"}), api.edit("README.md", EDIT_OLD, f"{EDIT_NEW}\n{hostile}"), api.text("Edited.")]
    # The answer hook finds this test's service beside its spool: Claude runs under the same XDG_RUNTIME_DIR.
    session = claude_session(script, launch=False, name="editing", files={"README.md": README_BEFORE}, extra_env={"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]})
    hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=120)
    for args in (("init", "-q", "-b", "main"), ("add", "README.md"), ("commit", "-q", "-m", "the user's readme")):
        git(session.workdir, *args)  # a repository: the page shows what the agent changed in it, after the edit
    session.launch()
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)

    session.submit("tidy the readme")
    session.wait_for("Do you want to make this edit to README.md?", timeout=60)
    open_agent(page, session.pane_id, "permission")
    change = page.locator("#dialog .change")
    change.locator(".del", has_text="It builds a tree.").wait_for(timeout=WAIT)  # once the hook holds the call: its exact strings
    # The hook's own end (its start and its 120 s), counted down on the card: then keys answer, the dialog stays.
    deadline = page.locator("#deadline")
    deadline.wait_for(timeout=WAIT)
    left = int(re.fullmatch(r"Through Claude's hook for (\d+) s more, then by keys \(the dialog stays\)\.", deadline.inner_text()).group(1))
    assert 60 < left <= 120, deadline.inner_text()
    assert change.locator(".change-file").inner_text() == "README.md +4 \u22123", "named from the agent's folder, with its counts"
    removed = [t.strip() for t in change.locator("pre.diff .del").all_inner_texts()]
    added = [t.strip() for t in change.locator("pre.diff .add").all_inner_texts()]
    assert removed == ["-The parser reads tokens.", "-It builds a tree.", "-It reports errors."], removed
    assert added == [f"+{line}" for line in EDIT_NEW.split("\n")] + [f"+{hostile}"], added
    assert change.locator("pre.diff .hunk").first.inner_text().startswith("@@ -1,"), "the file's own line numbers (it was read)"
    # Markup in the edit is text: no element of it, nothing of it ran.
    assert page.locator("#agent-view img, #agent-view script").count() == 0 and page.evaluate("typeof pwned") == "undefined"
    approve = page.get_by_role("button", name="Approve", exact=True)
    approve.wait_for(timeout=WAIT)
    # Both edges from one look: the page draws the dialog again as its agent's row changes, and two looks
    # (a busy run's) measured the change, then found it between two drawings.
    edges = page.wait_for_function(
        """() => {
            const change = document.querySelector('#dialog .change');
            // The card's Approve (the list, hidden behind the card, may still hold its own from before the hook held the edit).
            const approve = [...document.querySelectorAll('#agent-view button')].find((b) => b.textContent.trim() === 'Approve');
            if (!change || !approve || !change.getClientRects().length || !approve.getClientRects().length) return null;
            return [change.getBoundingClientRect().bottom, approve.getBoundingClientRect().top];
        }""",
        timeout=WAIT,
    ).json_value()
    assert edges[0] <= edges[1], f"the change comes before Approve: its bottom at {edges[0]}, Approve's top at {edges[1]}"
    page.screenshot(path=str(shots(tmp_path) / "edit-390x844.png"))

    approve.tap()
    session.wait_for("Edited.", timeout=30)
    assert (session.workdir / "README.md").read_text() == README_BEFORE.replace(EDIT_OLD, f"{EDIT_NEW}\n{hostile}")
    open_agent(page, session.pane_id, "idle")  # answered, nothing else waits: the page went to the list
    assert page.locator("#dialog .change").count() == 0  # the change went with its request

    # What it changed, this turn and since it started: the same lines, from the service's baselines (docs/changes.md).
    page.locator("#changes summary").tap()
    body = page.locator("#changes-body")
    for scope, key in (("This turn", "turn"), ("Since it started", "start")):
        page.get_by_role("button", name=scope, exact=True).tap()
        page.locator(f'#scope-{key}[aria-pressed="true"]').wait_for(timeout=WAIT)
        page.wait_for_function("() => !document.querySelector('#changes-body').textContent.includes('loading')", timeout=WAIT)
        body.locator("pre.diff .del", has_text="It builds a tree").wait_for(timeout=WAIT)
        assert [t.strip() for t in body.locator("pre.diff .del").all_inner_texts()] == removed, scope
        assert [t.strip() for t in body.locator("pre.diff .add").all_inner_texts()] == added, scope
        assert body.locator(".change-file").inner_text() == "README.md +4 \u22123"
    assert page.locator("#agent-view img, #agent-view script").count() == 0 and page.evaluate("typeof pwned") == "undefined"
    page.locator("#changes-sum", has_text="+4 \u22123 · 1 file").wait_for(timeout=WAIT)  # the turn's summary, as the row has it
    # What it costs: the service's own words for its tokens (the scripted API's 100 in, 20 out per reply), as e says them.
    page.locator("#usage dt", has_text="Tokens").wait_for(timeout=WAIT)
    # The last reply's tokens come once the service has read Claude's records after it (on a loaded machine, a moment after "Edited.").
    page.locator("#usage dd", has_text="300 in · 60 out").wait_for(timeout=WAIT)
    tokens = page.locator("#usage dd").nth([t.strip() for t in page.locator("#usage dt").all_inner_texts()].index("Tokens")).inner_text()
    assert tokens.startswith("300 in · 60 out"), tokens
    page.screenshot(path=str(shots(tmp_path) / "changes-390x844.png"))


def test_a_read_only_page_answers_nothing(claude_session, private_tmux, services, phone):
    session = claude_session([api.bash("touch never.txt", "Create a file"), api.text("Done.")], name="ro")
    url, port, token = web_on(private_tmux.name, services, "--read-only")
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=60)
    page = phone.new_page()
    page.goto(url)
    open_agent(page, session.pane_id, "permission")
    assert page.get_by_role("button", name="Approve").count() == 0
    headers = {"Cookie": f"headspace_token={token}", "Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"}
    answer = {"pane": session.pane_id, "intent": "approve", "expect": ""}
    code, body = status_of(f"http://127.0.0.1:{port}/api/answer", method="POST", body=answer, headers=headers)
    assert code == 403 and "read-only" in body, body
    code, body = status_of(f"http://127.0.0.1:{port}/api/rules", method="POST", body={"action": "pause", "rule": ""}, headers=headers)
    assert code == 403 and "read-only" in body, body  # nor pauses the rules
    page.get_by_role("button", name="Back").tap()
    agent_item(page, session.pane_id, "permission").wait_for(timeout=WAIT)
    assert agent_item(page, session.pane_id, "permission").locator(".quick").count() == 0  # nor does the list offer Approve
    page.locator("#ruled summary").tap()
    page.locator("#ruled-empty").wait_for(timeout=WAIT)  # open: "no rule answered anything"
    assert page.locator("#pause-all").is_hidden()
    time.sleep(1.0)
    assert not (session.workdir / "never.txt").exists()


def test_the_web_section_serves_the_page_at_every_start_and_a_notification_links_the_agents_page(claude_session, private_tmux, tmp_path, services, phone):
    session = claude_session([api.bash("touch linked.txt", "Create a file"), api.text("Done.")], name="linked")
    port = free_port()
    token_file = tmp_path / "web-token"
    script, told = recording_command(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(f'notify_command = [{json.dumps(str(script))}]\n[web]\nlisten = "127.0.0.1:{port}"\ntoken_file = {json.dumps(str(token_file))}\n')
    card = started(private_tmux.name, services, "--config", str(config))
    assert card["web"] == {"host": "127.0.0.1", "port": port, "scheme": "http", "read_only": False}, card
    token = token_file.read_text().strip()
    assert len(token) >= 22 and os.stat(token_file).st_mode & 0o077 == 0

    time.sleep(4.0)  # the service's quiet start: what is there then is not news
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=30)
    wait(lambda: told.exists() and told.read_text().strip(), "notify_command")
    (env,) = [json.loads(line) for line in told.read_text().splitlines()]
    link = f"http://127.0.0.1:{port}/#agent={quote(session.pane_id, safe='@')}"
    assert env["HEADSPACE_URL"] == link and token not in env["HEADSPACE_URL"], env
    assert env["HEADSPACE_BODY"].endswith(link), env

    page = phone.new_page()
    page.goto(link)  # not signed in yet: the link opens nothing
    assert page.locator("li.agent").count() == 0
    page.goto(f"http://127.0.0.1:{port}/?token={token}")  # the address 'headspace web' printed, once
    page.goto(link)  # the notification's tap: the agent's page, its actions; nothing answered by opening it
    page.locator(f'#agent-view[data-pane="{session.pane_id}"][data-state="permission"]').wait_for(timeout=WAIT)
    page.get_by_role("button", name="Approve", exact=True).wait_for(timeout=WAIT)  # drawn with the dialog, a moment after the state
    time.sleep(1.0)
    assert not (session.workdir / "linked.txt").exists()


def control_clients(tmux) -> int:
    return [line.strip() for line in tmux.run("list-clients", "-F", "#{client_control_mode}").splitlines()].count("1")


def test_with_the_tui_and_the_page_open_tmux_sees_one_control_client_per_session(claude_session, private_tmux, tmp_path, services, phone):
    from tests.e2e.test_service_client import HEADER, attaches, headspace_words

    session = claude_session([api.bash("touch one-client.txt", "Create a file")], name="watched")
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=60)
    private_tmux.run("new-session", "-d", "-s", "desk", "-x", "120", "-y", "40", "sleep 600")
    counted = tmp_path / "attaches"
    private_tmux.run("set-hook", "-g", "client-attached", f"run-shell -b 'echo x >> {counted}'")
    url, _, _ = web_on(private_tmux.name, services)
    sessions = len(private_tmux.run("list-sessions", "-F", "#{session_id}").split())
    wait(lambda: control_clients(private_tmux) == sessions, "the service's control client on every session", timeout=60)
    page = phone.new_page()
    page.goto(url)
    open_agent(page, session.pane_id, "permission")  # the page looks at the agent: its screen is pushed
    page.locator("#screen").get_by_text("touch one-client.txt").first.wait_for(timeout=WAIT)
    before = attaches(counted)

    private_tmux.run("new-window", "-t", "desk", headspace_words(private_tmux.name))  # the terminal UI, as a client of the same service
    wait(lambda: any(HEADER.search(line) for line in private_tmux.run("capture-pane", "-p", "-t", "desk").splitlines()), "the TUI's table")
    time.sleep(2.0)  # what it would attach, it would have by now
    assert control_clients(private_tmux) == sessions, private_tmux.run("list-clients", "-F", "#{client_name} #{client_control_mode} #{session_name}")
    assert attaches(counted) == before, f"{attaches(counted) - before} control-client attaches with the TUI open beside the page"
    assert page.locator("#live.on").is_visible()


def test_the_network_needs_tls_and_over_tls_the_cookie_is_secure(private_tmux, services, tmp_path):
    import shutil
    import ssl
    import subprocess

    private_tmux.run("new-session", "-d", "-s", "tls", "-x", "80", "-y", "24", "sleep 600")  # a server to serve: no agent is read here
    refused = run("-L", private_tmux.name, "web", "--listen", f"0.0.0.0:{free_port()}", "--no-qr")
    assert refused.returncode == 1 and "TLS" in refused.stderr and "--insecure-network" in refused.stderr and not refused.stdout, refused
    assert len(refused.stderr.strip().splitlines()) == 1

    assert shutil.which("openssl"), "openssl makes the test's certificate"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    port = free_port()
    proc = run("-L", private_tmux.name, "web", "--listen", f"127.0.0.1:{port}", "--tls", str(cert), str(key), "--no-qr")
    assert proc.returncode == 0, proc.stderr
    (url,) = [line for line in proc.stdout.splitlines() if line.startswith("https://")]
    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    services.append(read_card(place_of(TmuxServer(socket_name=private_tmux.name).identity))["pid"])
    trusting = ssl.create_default_context(cafile=str(cert))
    trusting.check_hostname = False  # the certificate names 127.0.0.1 as its CN only
    with pytest.raises(urllib.error.HTTPError) as bare:
        urllib.request.urlopen(f"https://127.0.0.1:{port}/api/agents", context=trusting, timeout=10)
    assert bare.value.code == 401

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=trusting), NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as moved:
        opener.open(url, timeout=10)
    cookie = moved.value.headers["Set-Cookie"]
    assert moved.value.code == 303 and "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    token = url.split("token=", 1)[1]
    assert not audit_lines(token), "the token is in a log"


def test_the_page_comes_back_by_itself_when_its_server_does_and_says_when_its_token_is_gone(claude_session, private_tmux, services, phone, tmp_path):
    session = claude_session(name="back")
    token_file = tmp_path / "web-token"
    url, port, _ = web_on(private_tmux.name, services, "--token-file", str(token_file))
    page = phone.new_page()
    page.goto(url)
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    page.locator("#live.on").wait_for(timeout=WAIT)

    assert run("-L", private_tmux.name, "web", "--off").returncode == 0
    page.locator("#live.off").wait_for(timeout=WAIT)
    again = run("-L", private_tmux.name, "web", "--listen", f"127.0.0.1:{port}", "--token-file", str(token_file), "--no-qr")
    assert again.returncode == 0 and url in again.stdout.splitlines(), again.stdout  # the same address: the same token
    page.locator("#live.on").wait_for(timeout=WAIT)  # by itself: nothing on the page was touched
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)

    assert run("-L", private_tmux.name, "web", "--off").returncode == 0
    fresh = run("-L", private_tmux.name, "web", "--listen", f"127.0.0.1:{port}", "--no-qr")  # a new token: the page's cookie is no longer the page's
    assert fresh.returncode == 0 and url not in fresh.stdout, fresh.stdout
    page.locator("#live.off", has_text="not signed in").wait_for(timeout=WAIT)


def test_one_set_of_snoozes_the_terminal_snoozes_the_page_shows_it_and_wakes_it(claude_session, private_tmux, services, phone):
    """The trial: an agent snoozed in the TUI was first on the page and counted as needing you."""
    from headspace_tui.api.codec import decode, encode
    from headspace_tui.resident import client
    from headspace_tui.shared.resident_place import place_of
    from headspace_tui.tmux.server import TmuxServer

    session = claude_session([api.bash("touch later.txt", "Create a file"), api.text("Made.")], name="later")
    url, _, _ = web_on(private_tmux.name, services)
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    page = phone.new_page()
    page.goto(url)
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=60)
    agent_item(page, session.pane_id, "permission").wait_for(timeout=WAIT)
    page.wait_for_function("document.getElementById('summary').textContent.includes('1 needs you')", timeout=WAIT)

    def snoozes() -> dict:
        return decode(client.request(place, "GET", "/v1/state")["snoozes"])

    # The terminal (a client of the service, as the TUI is) snoozes it: the page greys it and counts it as the terminal does.
    (agent,) = [a for a in decode(client.request(place, "GET", "/v1/state")["agents"]) if a.pane_id == session.pane_id]
    client.request(place, "POST", "/v1/snoozes", body={"agent": encode(agent), "until": time.time() + 600})
    page.locator(f'li.agent.snoozed[data-pane="{session.pane_id}"][data-snoozed="yes"]').wait_for(timeout=WAIT)
    summary = page.locator("#summary").inner_text()
    assert summary == "1 agent · 0 need you (1 snoozed)", summary
    said = run("-L", private_tmux.name, "status")  # the command line counts as the page does, from the same snoozes
    assert said.returncode == 0 and "1 agent · 0 need you (1 snoozed)" in said.stdout, said.stdout
    (row,) = [json.loads(line) for line in run("-L", private_tmux.name, "status", "--json").stdout.splitlines()]
    assert row["snoozed"] and row["snoozed"].startswith("snoozed till"), row
    assert "snoozed till" in page.locator(f'li.agent[data-pane="{session.pane_id}"] .line').inner_text()

    # The page wakes it, and snoozes it till it changes: the service (every front end's) holds the same.
    open_agent(page, session.pane_id, "permission")
    page.get_by_role("button", name="Wake", exact=True).tap()
    page.locator("#notice.ok").wait_for(timeout=WAIT)
    assert snoozes() == {}
    page.get_by_role("button", name="Snooze till it changes", exact=True).tap()
    page.get_by_role("button", name="Wake", exact=True).wait_for(timeout=WAIT)
    (held,) = snoozes().values()
    assert not held.timed
    assert NUMBERED_MENU.search(session.screen()) and not (session.workdir / "later.txt").exists()  # a snooze answers nothing


def test_the_page_comes_back_with_the_service_at_the_same_address_without_a_new_sign_in(claude_session, private_tmux, services, phone):
    """The trial: after the service was killed and brought back, the page said "reconnecting…" forever, and 'headspace web' printed a new address."""
    import signal

    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    session = claude_session(name="kept")
    url, port, token = web_on(private_tmux.name, services)
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    kept = Path(os.environ["XDG_STATE_HOME"]) / "headspace" / "web"
    settings = kept / f"{place.name}.json"  # the page of this service, kept (it holds the token)
    assert oct(settings.stat().st_mode & 0o777) == "0o600" and oct(kept.stat().st_mode & 0o777) == "0o700"
    page = phone.new_page()
    page.goto(url)
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    page.locator("#live.on").wait_for(timeout=WAIT)
    header = page.locator("header").bounding_box()
    assert header is not None and header["height"] < 48, header  # one line at 390 px (it wrapped to four)

    card = read_card(place)
    assert card is not None
    os.kill(card["pid"], signal.SIGKILL)  # the service dies as a crash would end it
    page.locator("#live.off").wait_for(timeout=WAIT)
    assert page.evaluate("document.body.classList.contains('stale')")

    again = run("-L", private_tmux.name, "serve")  # a client brings it back (the terminal's does the same)
    assert again.returncode == 0, again.stderr
    back = read_card(place)
    assert back is not None and back["pid"] != card["pid"] and back["web"]["port"] == port, back
    services.append(back["pid"])
    page.locator("#live.on").wait_for(timeout=WAIT)  # the open page, live again by itself: no new address, no sign-in
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    assert page.url == f"http://127.0.0.1:{port}/", page.url
    printed = run("-L", private_tmux.name, "web", "--no-qr")
    assert printed.returncode == 0 and f"http://127.0.0.1:{port}/?token={token}" in printed.stdout.splitlines(), printed.stdout
    off = run("-L", private_tmux.name, "web", "--off")
    assert off.returncode == 0 and not settings.exists(), off.stdout  # turned off: nothing brings it back


def test_coming_back_after_a_while_the_page_says_what_each_agent_did_meanwhile_and_each_line_opens_it(claude_session, private_tmux, services, phone, tmp_path):
    """The phone put away for an hour (its own record of when it last looked, set back): opened again, the page says which
    agent finished a turn and what it spent, above the list; the line opens that agent. A page looked at a moment ago says nothing."""
    # The reply takes 3 s: the turn is seen working, then done (a turn the screen never saw working is not counted).
    session = claude_session([api.text("All done here.", delay=3)], name="while-away")
    url, _, _ = web_on(private_tmux.name, services)
    page = phone.new_page()
    page.goto(url)
    agent_item(page, session.pane_id, "idle").wait_for(timeout=WAIT)
    asked = time.time()
    session.submit("finish something")
    session.wait_for("All done here.", timeout=60)

    def finished() -> bool:  # the service has logged the turn's end (what the page will be told)
        said = page.evaluate("(since) => fetch('/api/away?since=' + since).then((r) => r.json())", asked)
        return any(entry["address"] == session.pane_id and entry["finished"] for entry in said["agents"])

    wait(finished, "the service to log the turn's end", pause=lambda: page.wait_for_timeout(200))
    page.reload()  # looked at a moment ago: nothing to say
    page.locator("#live.on").wait_for(timeout=WAIT)
    assert page.locator("#away").is_hidden()

    # An hour in a pocket: the phone's record of its last look set back as the page opens again (leaving it records
    # the moment it was put away, as a phone does).
    page.add_init_script("localStorage.setItem('headspace-looked', String(Date.now() - 3600 * 1000))")
    page.reload()
    entry = page.locator(f'#away li[data-pane="{session.pane_id}"]')
    entry.wait_for(timeout=WAIT)
    words = entry.inner_text()
    assert "while-away" in words and "now idle" in words and "finished a turn" in words and "spent" in words, words
    assert page.locator("#away-title").inner_text().startswith("While you were away (since "), page.locator("#away-title").inner_text()
    page.screenshot(path=str(shots(tmp_path) / "away-390x844.png"))
    entry.locator("button.open").tap()
    page.locator(f'#agent-view[data-pane="{session.pane_id}"]').wait_for(timeout=WAIT)
