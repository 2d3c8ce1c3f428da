"""The phone page answers an agent on a remote host through that host's answer hook (a real sshd on 127.0.0.1, as the fleet tests).

Its own module: the ``private_tmux`` fixture here is the box's (tests/e2e/test_remote.py), not the conftest's.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_remote import box, config_file, headspace, private_tmux  # noqa: F401 - box and private_tmux are fixtures (private_tmux: the box's)
from tests.e2e.test_remote_answers import local_tmux, remote_sessions  # noqa: F401 - local_tmux is a fixture
from tests.e2e.test_web_page import WAIT, agent_item, audit_lines, chromium, open_agent, phone, web_on  # noqa: F401 - chromium and phone are fixtures
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU

pytestmark = pytest.mark.e2e


def test_a_remote_hosts_agent_is_answered_from_the_page_through_its_hook(claude_session, fake_api, private_tmux, box, local_tmux, services, phone, tmp_path, monkeypatch):  # noqa: F811
    """Real sshd on 127.0.0.1 (tests/e2e/test_remote.py's box), Claude there with headspace's answer hook; the service watches it as a configured host."""
    config = config_file(tmp_path, box, private_tmux.name)
    installed = headspace("--config", str(config), "hooks", "install", "--answer", "--wait", "60", "--host", "box")
    assert installed.returncode == 0, installed.stderr
    fake_api.set_script([api.bash("touch far.txt && echo far-web-ok", "Create a file"), api.text("Done there.")])
    (far,) = remote_sessions(claude_session, box, ["far"])
    local_tmux.new_session("desk", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])  # this machine's server, no agent in it
    monkeypatch.setenv("TMUX_TMPDIR", local_tmux.env.get("TMUX_TMPDIR", "/tmp"))  # where that server's socket is, for the service too
    url, _, _ = web_on(local_tmux.name, services, config=config)
    address = f"{far.pane_id}@box"
    page = phone.new_page()
    page.goto(url)
    agent_item(page, address, "idle").wait_for(timeout=WAIT)
    far.submit("create a file there")
    far.wait_for(NUMBERED_MENU, timeout=60)
    open_agent(page, address, "permission")
    page.locator("#agent-view").get_by_text("touch far.txt").first.wait_for(timeout=WAIT)
    page.get_by_role("button", name="Approve", exact=True).tap()
    page.locator("#notice.ok").wait_for(timeout=WAIT)
    assert "via hook" in page.locator("#notice").inner_text(), page.locator("#notice").inner_text()
    request = fake_api.wait_for(lambda r: "far-web-ok" in json.dumps(r.tool_results()), 60)
    assert request is not None
    far.wait_for("Allowed by PermissionRequest hook", timeout=30)  # Claude's own word: the hook answered, not a key
    assert audit_lines("(via web 127.0.0.1)"), "the audit does not say the answer came from the web page"
