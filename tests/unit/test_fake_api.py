"""The scripted API speaks the Messages API's wire format, over real loopback HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.harness import fake_api as api
from tests.harness.fake_api import FakeAnthropicAPI

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def post(server: FakeAnthropicAPI, body: dict, path: str = "/v1/messages?beta=true") -> tuple[int, str]:
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def events(sse: str) -> list[tuple[str, dict]]:
    out = []
    for chunk in sse.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def main_body(*messages: dict, stream: bool = True) -> dict:
    return {"model": "m", "stream": stream, "tools": TOOLS, "messages": list(messages) or [{"role": "user", "content": "hi"}]}


def test_text_streams_in_the_documented_event_order():
    with FakeAnthropicAPI([api.text("hello world")]) as server:
        status, body = post(server, main_body())
    assert status == 200
    kinds = [kind for kind, _ in events(body)]
    assert kinds == ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    deltas = [data["delta"]["text"] for kind, data in events(body) if kind == "content_block_delta"]
    assert "".join(deltas) == "hello world"


def test_tool_use_carries_its_input_and_stops_for_tool_use():
    with FakeAnthropicAPI([api.bash("make test", "Run tests")]) as server:
        _, body = post(server, main_body())
    parsed = events(body)
    start = next(data for kind, data in parsed if kind == "content_block_start")
    assert start["content_block"]["type"] == "tool_use" and start["content_block"]["name"] == "Bash"
    partial = next(data["delta"]["partial_json"] for kind, data in parsed if kind == "content_block_delta")
    assert json.loads(partial) == {"command": "make test", "description": "Run tests"}
    stop = next(data for kind, data in parsed if kind == "message_delta")
    assert stop["delta"]["stop_reason"] == "tool_use"


def test_steps_play_in_order_then_default_reply():
    with FakeAnthropicAPI([api.text("one"), api.text("two")]) as server:
        replies = [post(server, main_body(stream=False))[1] for _ in range(3)]
    texts = [json.loads(r)["content"][0]["text"] for r in replies]
    assert texts == ["one", "two", api.DEFAULT_REPLY]


def test_side_requests_without_tools_do_not_consume_the_script():
    with FakeAnthropicAPI([api.text("main answer")]) as server:
        post(server, {"model": "haiku", "stream": False, "messages": [{"role": "user", "content": "title?"}]})
        _, body = post(server, main_body(stream=False))
        assert len(server.main_requests) == 1
        assert len(server.requests) == 2
    assert json.loads(body)["content"][0]["text"] == "main answer"


@pytest.mark.parametrize("status,kind", [(429, "rate_limit_error"), (500, "api_error"), (529, "overloaded_error")])
def test_failures_repeat_the_given_number_of_times(status, kind):
    with FakeAnthropicAPI([api.fail(status, times=2), api.text("recovered")]) as server:
        first, body = post(server, main_body(stream=False))
        second, _ = post(server, main_body(stream=False))
        third, ok = post(server, main_body(stream=False))
    assert (first, second, third) == (status, status, 200)
    assert json.loads(body)["error"]["type"] == kind
    assert json.loads(ok)["content"][0]["text"] == "recovered"


def test_failure_forever_keeps_failing():
    with FakeAnthropicAPI([api.fail(529, times=None)]) as server:
        statuses = {post(server, main_body(stream=False))[0] for _ in range(5)}
    assert statuses == {529}


def test_recorded_request_finds_the_last_user_message_and_tool_results():
    tool_result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "ok: 3 passed"}]}
    messages = (
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [tool_result, {"type": "text", "text": "and then stop"}]},
        {"role": "system", "content": "a trailing system message"},
    )
    with FakeAnthropicAPI() as server:
        post(server, main_body(*messages, stream=False))
        request = server.wait_for(lambda r: bool(r.tool_results()), timeout=5)
    assert request.last_user_message()["role"] == "user"
    assert api.block_text(request.tool_results()[0]) == "ok: 3 passed"
    assert request.user_text() == "and then stop"


def test_dynamic_step_reads_the_plan_file_path_from_the_request():
    system = "You should create your plan at /tmp/x/.claude/plans/p.md using the Write tool."
    with FakeAnthropicAPI([api.write_plan("# Plan")]) as server:
        _, body = post(server, {**main_body(), "system": [{"type": "text", "text": system}]})
    partial = next(d["delta"]["partial_json"] for k, d in events(body) if k == "content_block_delta")
    assert json.loads(partial) == {"file_path": "/tmp/x/.claude/plans/p.md", "content": "# Plan"}


def test_wait_for_times_out_with_what_it_saw():
    with FakeAnthropicAPI() as server:
        post(server, main_body(stream=False))
        with pytest.raises(TimeoutError, match="hi"):
            server.wait_for(lambda r: False, timeout=0.2)


def _tool_name(body: str) -> str:
    start = next(data for kind, data in events(body) if kind == "content_block_start")
    return start["content_block"].get("name", "")


def test_a_deferred_tool_is_loaded_through_toolsearch_only_where_claude_defers_it():
    newer = [{"name": "Bash"}, {"name": "ToolSearch"}]  # 2.1.x: WebFetch is deferred
    older = [{"name": "Bash"}, {"name": "WebFetch"}]  # 2.0.x offers it at once
    with FakeAnthropicAPI(api.web_fetch("https://example.com")) as server:
        first = post(server, {"stream": True, "tools": newer, "messages": [{"role": "user", "content": "go"}]})[1]
        second = post(server, {"stream": True, "tools": [*newer, {"name": "WebFetch"}], "messages": [{"role": "user", "content": "go"}]})[1]
    assert (_tool_name(first), _tool_name(second)) == ("ToolSearch", "WebFetch")
    with FakeAnthropicAPI(api.web_fetch("https://example.com")) as server:
        assert _tool_name(post(server, {"stream": True, "tools": older, "messages": [{"role": "user", "content": "go"}]})[1]) == "WebFetch"


def test_a_stalled_request_gets_no_byte_and_every_retry_stalls_too():
    with FakeAnthropicAPI([api.stall(seconds=30)]) as server:
        for _ in range(2):
            request = urllib.request.Request(server.url + "/v1/messages", data=json.dumps(main_body()).encode())
            with pytest.raises((TimeoutError, urllib.error.URLError)):
                urllib.request.urlopen(request, timeout=0.5)
        assert len(server.main_requests) == 2


def test_when_answers_a_matching_request_out_of_order_and_leaves_the_script_alone():
    script = [api.text("first"), api.when("Compact Instructions", api.text("<summary>s</summary>"))]
    with FakeAnthropicAPI(script) as server:
        _, compact = post(server, main_body({"role": "user", "content": "## Compact Instructions\nsummarise"}))
        _, normal = post(server, main_body())
    text = lambda body: "".join(d["delta"].get("text", "") for k, d in events(body) if k == "content_block_delta")  # noqa: E731
    assert (text(compact), text(normal)) == ("<summary>s</summary>", "first")


def test_a_401_says_authentication_error():
    with FakeAnthropicAPI([api.fail(401)]) as server:
        status, body = post(server, main_body())
    assert status == 401 and json.loads(body)["error"]["type"] == "authentication_error"


def test_write_plan_is_skipped_where_claude_names_no_plan_file():
    with FakeAnthropicAPI([api.write_plan("# Plan"), *api.exit_plan_mode("# Plan")]) as server:
        body = post(server, {"stream": True, "tools": [{"name": "ExitPlanMode"}], "system": "plan mode", "messages": [{"role": "user", "content": "plan"}]})[1]
    assert _tool_name(body) == "ExitPlanMode"
