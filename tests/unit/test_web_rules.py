"""The web page's rules on their own: who may ask (token, Origin, rate), where it may listen, what an answer may say, and what a pane may put on the page."""

from __future__ import annotations

import json
import os
import stat

import pytest

from headspace_tui.api.facade import IntentKind, PaneScreen
from headspace_tui.changes.proposed import proposed
from headspace_tui.model import Agent, AgentState, Observation, Option, Prompt
from headspace_tui.screen.virtual import VirtualScreen
from headspace_tui.service.answer_wait import MAX_TEXT
from headspace_tui.shared.config import ConfigError, parse_config
from headspace_tui.web import guard, listen
from headspace_tui.web.server import WebOptions, _answer_request, web_options
from headspace_tui.web.views import agent_view, screen_view


# -- the token ----------------------------------------------------------------------------------
def test_a_token_is_128_random_bits_and_only_the_token_matches():
    one, two = guard.new_token(), guard.new_token()
    assert one != two and len(one) >= 22
    assert guard.token_matches(one, one)
    assert not guard.token_matches(two, one) and not guard.token_matches(None, one) and not guard.token_matches(one[:-1], one)


def test_a_token_file_is_made_0600_once_and_read_back(tmp_path):
    path = tmp_path / "web-token"
    made = guard.token_from_file(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert guard.token_from_file(path) == made


@pytest.mark.parametrize("content", [b"short", b"has spaces in it and more", b"\xff\xfe" * 20])
def test_a_token_file_that_holds_no_token_is_one_line_of_error(tmp_path, content):
    path = tmp_path / "web-token"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="token file"):
        guard.token_from_file(path)


def test_a_token_file_that_is_not_a_regular_file_is_refused(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(ValueError, match="cannot read"):
        guard.token_from_file(tmp_path / "dir")


# -- the Origin of a change -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "origin, host, scheme, same",
    [
        ("http://127.0.0.1:8765", "127.0.0.1:8765", "http", True),
        ("https://box.tail:8443", "box.tail:8443", "https", True),
        ("http://127.0.0.1:8765", "127.0.0.1:8765", "https", False),  # another scheme
        ("http://evil.example", "127.0.0.1:8765", "http", False),
        ("http://127.0.0.1:8766", "127.0.0.1:8765", "http", False),
        ("null", "127.0.0.1:8765", "http", False),  # a sandboxed frame, a file: page
        (None, "127.0.0.1:8765", "http", False),  # no Origin: a change is refused
        ("http://127.0.0.1:8765/x", "127.0.0.1:8765", "http", False),
    ],
)
def test_a_change_must_name_this_page_as_its_origin(origin, host, scheme, same):
    assert guard.same_origin(origin, host, scheme) is same


def test_the_rate_limit_lets_a_page_through_and_stops_a_flood_and_a_guesser():
    now = [0.0]
    limit = guard.RateLimit(clock=lambda: now[0])
    assert all(limit.allow("a") for _ in range(int(guard.BURST)))
    assert not limit.allow("a")  # a flood
    assert limit.allow("b")  # another client is not held up
    now[0] += 1.0
    assert limit.allow("a")  # a second later, the steady rate again
    for _ in range(guard.WRONG_TOKENS):
        limit.wrong_token("c")
    assert limit.turned_away("c") and not limit.turned_away("a")
    now[0] += 61.0
    assert not limit.turned_away("c")


# -- where it listens -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, parsed",
    [("127.0.0.1:9000", ("127.0.0.1", 9000)), ("[::1]:9000", ("::1", 9000)), (":9000", ("127.0.0.1", 9000)), ("localhost", ("localhost", 8765))],
)
def test_a_listen_address_is_read_as_tmux_users_write_it(text, parsed):
    assert listen.parse_listen(text) == parsed


@pytest.mark.parametrize("text", ["127.0.0.1:0", "127.0.0.1:99999", "127.0.0.1:http"])
def test_a_bad_port_is_one_line(text):
    with pytest.raises(listen.ListenError, match="port"):
        listen.parse_listen(text)


def test_loopback_is_the_default_and_the_network_needs_tls_or_a_flag_that_names_the_risk(tmp_path):
    assert listen.options("127.0.0.1:8765").host == "127.0.0.1"
    assert listen.options("[::1]:8765").host == "::1"
    for exposed in ("0.0.0.0:8765", "192.0.2.7:8765", "box.example:8765"):
        with pytest.raises(listen.ListenError, match="TLS"):
            listen.options(exposed)
    assert listen.options("0.0.0.0:8765", insecure_network=True).scheme == "http"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("c")
    key.write_text("k")
    assert listen.options("0.0.0.0:8443", tls=(str(cert), str(key))).scheme == "https"
    with pytest.raises(listen.ListenError, match="not a file"):
        listen.options("0.0.0.0:8443", tls=(str(cert), str(tmp_path / "missing.pem")))


def test_the_web_section_of_the_config_is_checked():
    assert parse_config({"web": {"listen": "127.0.0.1:9000", "read_only": True}}).web.read_only
    assert parse_config({}).web is None
    for bad, said in [({"port": 1}, "unknown setting"), ({"read_only": "yes"}, "true or false"), ({"tls_cert": "c"}, "go together"), ({"listen": 9000}, "string")]:
        with pytest.raises(ConfigError, match=said):
            parse_config({"web": bad})


def test_the_services_web_settings_are_checked_and_keep_the_token_of_the_page_open():
    current = WebOptions(token="t" * 22)
    assert web_options({"host": "127.0.0.1", "port": 9000}, current).token == "t" * 22
    assert len(web_options({"host": "127.0.0.1", "port": 9000}).token) >= 22
    for bad in ({"port": "9000"}, {"port": True}, {"host": "a b"}, {"token": "short"}, {"tls": ["only-one"]}, {"read_only": 1}, []):
        assert isinstance(web_options(bad), str), bad
    assert WebOptions("127.0.0.1", 9000, "tok").url(agent="%3@box") == "http://127.0.0.1:9000/?token=tok#agent=%253@box"


# -- what an answer may say ------------------------------------------------------------------------
def test_an_answer_from_the_page_carries_the_fingerprint_it_showed_and_says_it_came_from_the_web():
    pane, intent, expect = _answer_request({"pane": "%3@box", "intent": "option", "option": "1,3", "expect": "abc"}, "web 192.0.2.7")
    assert (pane, intent.kind, intent.option, expect, intent.via) == ("%3@box", IntentKind.OPTION, "1,3", "abc", "web 192.0.2.7")
    assert intent.audit_suffix() == " (via web 192.0.2.7)"


@pytest.mark.parametrize(
    "body",
    [
        None,
        {"pane": "%3", "intent": "approve"},  # no fingerprint: the page always says what it showed
        {"pane": "3", "intent": "approve", "expect": ""},
        {"pane": "%3@bad host", "intent": "approve", "expect": ""},
        {"pane": "%3", "intent": "rm -rf", "expect": ""},
        {"pane": "%3", "intent": "option", "option": "1;2", "expect": ""},
        {"pane": "%3", "intent": "text", "text": "x" * (MAX_TEXT + 1), "expect": ""},
        {"pane": "%3", "intent": "approve", "expect": 5},
    ],
)
def test_a_bad_answer_is_one_line(body):
    assert isinstance(_answer_request(body, "web ?"), str)


# -- what a pane may put on the page ---------------------------------------------------------------
def permission(*labels: str) -> Agent:
    options = tuple(Option(str(n), label) for n, label in enumerate(labels, 1))
    prompt = Prompt(kind="permission", title="Do you want to proceed?", tool="Bash", detail="touch a", options=options, fingerprint="f1")
    return Agent(pane_id="%1", target="api:0.1", session="api", cwd="/src/shop", observation=Observation(AgentState.PERMISSION, prompt=prompt), key="k1")


def test_approve_is_offered_only_where_it_widens_nothing_and_each_widening_option_says_what_it_changes():
    plain = agent_view(permission("Yes", "Yes, and don't ask again for touch commands", "No"))
    assert "approve" in plain["actions"] and "deny" in plain["actions"]
    assert [bool(c["widens"]) for c in plain["choices"]] == [False, True, False]
    auto = agent_view(permission("Yes, and use auto mode", "No"))  # every Yes widens: Approve is not offered
    assert "approve" not in auto["actions"] and auto["choices"][0]["widens"]
    assert plain["glyph"] == "▲" and plain["needs_you"] and plain["fingerprint"] == "f1" and plain["address"] == "%1"


def test_a_held_edits_change_reaches_the_page_only_as_a_diff_and_only_while_it_waits():
    diff = proposed("Edit", {"file_path": "/w/a.py", "old_string": "x = 1\n", "new_string": "x = '<b>2</b>'\n"})
    agent = permission("Yes", "No")
    agent.proposed = diff.to_dict()
    assert agent_view(agent)["proposed"] == diff.to_dict()
    agent.proposed = {"files": [{"path": "/w/a.py", "hunks": [{"lines": [["<script>", "x", 1, 1]]}]}]}  # not a diff: nothing of it
    assert agent_view(agent)["proposed"] is None
    agent.proposed = diff.to_dict()
    agent.observation = Observation(AgentState.WORKING)
    assert agent_view(agent)["proposed"] is None


def test_a_screen_reaches_the_page_as_text_runs_and_only_safe_colours():
    ansi = "\x1b[31mred\x1b[0m <b>bold</b> \x1b[38;2;18;52;86mrgb\x1b[0m \x1b[1;7minv\x1b[0m\n\x1b]0;title\x07second\n"
    view = screen_view(PaneScreen(ansi, 40, 3))
    first = view["rows"][0]
    assert ["red", "red", "", ""] in first and any(run[0] == " <b>bold</b> " for run in first)
    assert ["rgb", "123456", "", ""] in first and ["inv", "", "", "br"] in first
    assert "".join(run[0] for run in view["rows"][1]) == "second"
    for row in view["rows"]:
        for _, fg, bg, flags in row:
            assert fg == "" or fg.isalpha() or len(fg) == 6
            assert bg == "" or bg.isalpha() or len(bg) == 6
            assert set(flags) <= set("biur")
    assert VirtualScreen(4, 1).runs() == [[]]


def test_a_notification_links_the_agents_page_without_the_token():
    from headspace_tui.notifications.command import command_env, merged
    from headspace_tui.notifications.decide import Alert, Notification

    options = WebOptions("127.0.0.1", 9000, "secret-token-secret")
    link = options.link("%3@box")
    assert link == "http://127.0.0.1:9000/#agent=%253@box" and "secret" not in link
    alert = Alert("k", "api:0.1", AgentState.PERMISSION, "Bash: ls", 1.0, "%3@box")
    other = Alert("k2", "web:0.1", AgentState.QUESTION, "Which?", 2.0, "%4")
    note = Notification("api:0.1 needs permission", "Bash: ls", (alert,), link)
    assert command_env(note, {})["HEADSPACE_URL"] == link
    assert merged(note, Notification("web:0.1 asks", "Which?", (other,))).link == link  # the first agent's page, as the words say


def test_the_last_screen_of_a_burst_reaches_the_page_once_the_pace_allows():
    """Screens are paced per page (SCREEN_PACE); the one held back is sent later, never dropped. The service here is a stand-in with the two calls used."""
    import asyncio

    from headspace_tui.events import PaneCaptured
    from headspace_tui.web import server

    class Service:  # a stand-in: the pacing is what is tested, not the service
        def __init__(self) -> None:
            self.listener = None
            self.ansi = "one"

        def subscribe(self, listener) -> None:
            self.listener = listener

        def screen(self, pane: str) -> PaneScreen:
            return PaneScreen(self.ansi, 10, 1)

    async def scenario() -> list[str]:
        service = Service()
        page = server.WebPage(service, None, lambda client, pane: None, lambda client: None)  # type: ignore[arg-type]
        queue = page._streams.follow("client-1")  # a page's stream, as its events route opens one
        page._looking["client-1"] = "%1"
        service.listener(PaneCaptured("%1"))
        service.ansi = "two"
        service.listener(PaneCaptured("%1"))  # within the pace: held back
        service.ansi = "three"
        service.listener(PaneCaptured("%1"))  # still held back, and it is the one that counts
        shown: list[str] = []
        for _ in range(100):  # the held-back screen goes a pace later: waited for (up to 10 s), not assumed sent after 3 paces
            await asyncio.sleep(server.SCREEN_PACE)
            while not queue.empty():
                event = json.loads(queue.get_nowait().removeprefix(b"data: "))
                shown.append("".join(run[0] for run in event["screen"]["rows"][0]))
            if shown[-1:] == ["three"]:
                break
        return shown

    assert asyncio.run(scenario()) == ["one", "three"]


def test_a_hosts_problem_is_one_line_naming_the_host_once():
    from headspace_tui.api.rows import host_problems

    hosts = [("local", None), ("box", "starting"), ("dev", "dev: unreachable (ssh: timeout)"), ("far", "tmux is not running")]
    assert host_problems(hosts) == ["box: still on its first look", "dev: unreachable (ssh: timeout)", "far: tmux is not running"]
