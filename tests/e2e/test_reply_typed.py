"""A reply typed into the real Claude is submitted once, whole: a line it draws as typed, and one it draws as "[Pasted text #1]".

Claude takes keys that arrive together as a paste: an Enter read with the
text is a newline in its box, and nothing is submitted (a loaded CI machine
left the remarks on a diff in the box this way, then refused every later
``s`` as a draft).  So the Enter goes only once the box shows the text; a
text of ~800 characters or more never shows its words there, only Claude's
mark of a long paste, which must count as the text in the box.  (The
unstageable half, an agent that draws nothing of the text in time, is
``tests/unit/test_drafts.py``: tmux continues a stopped pane process.)
"""

from __future__ import annotations

import pytest

from tests.e2e.test_resident_service import started
from tests.harness import fake_api as api
from tests.harness.cli import headspace
from tests.harness.scenarios import TURN_DONE
from tests.harness.session import EMPTY_BOX
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("length", [250, 1200])
def test_a_reply_is_submitted_whole_once_and_leaves_the_box_empty(claude_session, fake_api, private_tmux, services, length):
    session = claude_session([api.text("Noted, thank you.")], name="rp")
    started(private_tmux.name, services)
    text = ("please keep the parser's tabs as they are " * 40)[: length - 4] + " END"
    poll(lambda: headspace("-L", private_tmux.name, "status", "--json").stdout, lambda out: '"idle"' in out, timeout=30)
    sent = headspace("-L", private_tmux.name, "send", "rp:0.0", "--text", text)
    assert "submitted" in sent.stdout, sent.stdout
    request = fake_api.wait_for(lambda r: "END" in r.user_text(), 30)
    assert text in request.user_text()
    screen = session.wait_for(lambda s: "Noted, thank you." in s and TURN_DONE.search(s) is not None, what="the reply's turn")
    assert EMPTY_BOX.search(screen), screen
    assert sum("END" in r.user_text() for r in fake_api.main_requests) == 1
