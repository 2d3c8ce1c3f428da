"""Web Push's parts on their own: the encryption and signature against the reference implementations, the endpoints allowed, the subscriptions bound to the token, each push's outcome.

The pushes go to a real HTTP server on 127.0.0.1 (aiohttp's), which answers
as a push service does: 201, 410 for a subscription it no longer has, 429
and 500; the whole path in a browser is tests/e2e/test_web_push.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import http_ece
import py_vapid.jwt
import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from headspace_tui.shared.config import ConfigError, PushConfig, parse_config
from headspace_tui.web.push import FAILED, GONE, SENT, SUPPRESSED, Pusher, Result, Subscriber, allowed, message, read_results, whole
from headspace_tui.web.push_crypto import PAYLOAD_MAX, RECORD_SIZE, VapidKey, b64url, encrypt, unb64url


def browser_keys() -> tuple[ec.EllipticCurvePrivateKey, bytes, Subscriber]:
    private = ec.generate_private_key(ec.SECP256R1())
    auth = os.urandom(16)
    point = private.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return private, auth, Subscriber("https://fcm.googleapis.com/fcm/send/abc", b64url(point), b64url(auth))


def test_what_is_encrypted_the_reference_decrypts_and_each_message_has_its_own_keys():
    private, auth, subscriber = browser_keys()
    body = encrypt(b'{"title": "w:0.0 needs permission"}', subscriber.p256dh, subscriber.auth)
    assert http_ece.decrypt(body, private_key=private, auth_secret=auth, version="aes128gcm") == b'{"title": "w:0.0 needs permission"}'
    assert int.from_bytes(body[16:20], "big") == RECORD_SIZE and body[20] == 65  # the header: salt, record size, the sender's key
    again = encrypt(b'{"title": "w:0.0 needs permission"}', subscriber.p256dh, subscriber.auth)
    assert again[:16] != body[:16] and again[21:86] != body[21:86]  # a fresh salt and key pair per message
    other_private, other_auth, _ = browser_keys()
    with pytest.raises(Exception):  # noqa: B017 (http_ece raises its own or cryptography's)
        http_ece.decrypt(body, private_key=other_private, auth_secret=other_auth, version="aes128gcm")
    assert len(encrypt(b"x" * PAYLOAD_MAX, subscriber.p256dh, subscriber.auth)) == 4096  # the most a push service must take (RFC 8291 section 4)
    with pytest.raises(ValueError, match="at most"):
        encrypt(b"x" * (PAYLOAD_MAX + 1), subscriber.p256dh, subscriber.auth)


def test_the_signature_verifies_for_the_push_services_origin_and_the_key_is_kept_private(tmp_path: Path):
    path = tmp_path / "state" / "web" / "push-key.pem"
    key = VapidKey.kept(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert VapidKey.kept(path).public == key.public  # kept: a subscription made under it stays good
    assert len(unb64url(key.public)) == 65
    header = key.authorization("https://web.push.apple.com/QGuQyavXutnMH/abc?x=1", 1_000_000.0, "mailto:me@example.org")
    scheme, fields = header.split(" ", 1)
    parts = dict(part.strip().split("=", 1) for part in fields.split(","))
    claims = py_vapid.jwt.decode(parts["t"], parts["k"])
    assert scheme == "vapid" and parts["k"] == key.public
    assert claims == {"aud": "https://web.push.apple.com", "exp": 1_000_000 + 12 * 3600, "sub": "mailto:me@example.org"}
    other = VapidKey.kept(tmp_path / "other.pem")
    with pytest.raises(Exception):  # noqa: B017 (py_vapid's InvalidSignature)
        py_vapid.jwt.decode(parts["t"], other.public)


def test_a_file_that_is_not_a_key_is_refused_in_one_line(tmp_path: Path):
    bad = tmp_path / "push-key.pem"
    bad.write_text("not a key")
    with pytest.raises(ValueError, match="is not a key"):
        VapidKey.kept(bad)
    rsa = tmp_path / "rsa.pem"
    from cryptography.hazmat.primitives.asymmetric import rsa as rsa_keys

    rsa.write_bytes(rsa_keys.generate_private_key(65537, 2048).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with pytest.raises(ValueError, match="not a P-256 key"):
        VapidKey.kept(rsa)


@pytest.mark.parametrize(
    ("endpoint", "ok"),
    [
        ("https://fcm.googleapis.com/fcm/send/abc", True),
        ("https://updates.push.services.mozilla.com/wpush/v2/abc", True),
        ("https://web.push.apple.com/QGuQ", True),
        ("https://wns2-by3p.notify.windows.com/w/?token=abc", True),
        ("http://fcm.googleapis.com/fcm/send/abc", False),  # not over https
        ("https://fcm.googleapis.com.evil.example/x", False),
        ("https://evilfcm.googleapis.com/x", False),
        ("https://user:pw@fcm.googleapis.com/x", False),
        ("https://127.0.0.1:8080/x", False),
        ("https://169.254.169.254/latest/meta-data", False),
        ("https://fcm.googleapis.com/a b", False),
        ("file:///etc/passwd", False),
        ("", False),
        ("https://fcm.googleapis.com:99999/x", False),
        ("https://a..fcm.googleapis.com/x", False),  # an empty label: the sending would fail on it
        (f"https://{'a' * 64}.fcm.googleapis.com/x", False),  # a label over 63
        ("https://ａ.fcm.googleapis.com/x", False),
    ],
)
def test_only_the_browsers_push_services_are_posted_to(endpoint: str, ok: bool):
    assert (allowed(endpoint) == "") is ok, allowed(endpoint)


def test_a_push_service_the_config_names_is_allowed_and_no_other():
    services = ("http://127.0.0.1:9000", "https://push.example.com")
    assert allowed("http://127.0.0.1:9000/push/1", services) == ""
    assert allowed("https://push.example.com/p/1", services) == ""
    assert allowed("http://127.0.0.1:9001/push/1", services)
    assert allowed("http://push.example.com/p/1", services)


def test_push_settings_are_checked():
    config = parse_config({"push": {"contact": "mailto:me@example.org", "services": ["https://Push.Example.com/"], "quiet_after_key": 0, "answers": False}})
    assert config.push == PushConfig("mailto:me@example.org", ("https://push.example.com",), 0.0, False)
    assert parse_config({}).push == PushConfig()
    for bad, words in (
        ({"contact": "me@example.org"}, "contact"),
        ({"services": ["push.example.com"]}, "services"),
        ({"services": "https://a"}, "services"),
        ({"quiet_after_key": -1}, "quiet_after_key"),
        ({"quiet_after_key": True}, "quiet_after_key"),
        ({"volume": 3}, "unknown setting 'volume'"),
        ({"answers": "yes"}, "answers"),
    ):
        with pytest.raises(ConfigError, match=words):
            parse_config({"push": bad})


def pusher(tmp_path: Path, *, since_key: float | None = None, services: tuple[str, ...] = (), quiet: float = 60.0) -> tuple[Pusher, list[dict]]:
    recorded: list[dict] = []
    made = Pusher(tmp_path / "push-s.json", tmp_path / "push-key.pem", PushConfig("", services, quiet), since_key=lambda: since_key, record=recorded.append, clock=lambda: 1000.0)
    made.bind("token-one-0123456789")
    return made, recorded


def test_subscriptions_belong_to_the_token_a_new_token_drops_them(tmp_path: Path):
    one, _ = pusher(tmp_path)
    _, _, subscriber = browser_keys()
    assert one.subscribe(subscriber, "Chrome on Android\x1b[31m") == ""
    assert stat.S_IMODE((tmp_path / "push-s.json").stat().st_mode) == 0o600
    assert "token-one" not in (tmp_path / "push-s.json").read_text()  # its hash, not the token
    again, _ = pusher(tmp_path)
    assert [k.subscriber for k in again.subscriptions] == [subscriber] and "\x1b" not in again.subscriptions[0].browser
    assert again.state(subscriber.endpoint)["subscribed"] is True and again.state(subscriber.endpoint + "-other")["subscribed"] is False
    again.results = [Result(1.0, SENT, "", "w:0.0 needs permission: Bash: cat secrets")]
    again._save()
    again.bind("token-two-0123456789")
    assert again.subscriptions == [] and again.results == []  # what was pushed under the old token is not the new holders' to see
    back, _ = pusher(tmp_path)  # the first token again: what the second dropped stays dropped
    assert back.subscriptions == []


def test_a_subscription_that_is_not_one_is_refused(tmp_path: Path):
    made, _ = pusher(tmp_path)
    _, _, good = browser_keys()
    assert "push service" in made.subscribe(Subscriber("https://evil.example/x", good.p256dh, good.auth), "")
    assert "p256dh" in made.subscribe(Subscriber(good.endpoint, b64url(b"\x04" + b"\x00" * 64), good.auth), "")
    assert "auth" in made.subscribe(Subscriber(good.endpoint, good.p256dh, b64url(b"short")), "")
    assert made.subscriptions == []


def test_the_subscriptions_are_capped_the_oldest_going_first(tmp_path: Path):
    made, _ = pusher(tmp_path)
    keys = [browser_keys()[2] for _ in range(22)]
    for n, subscriber in enumerate(keys):
        assert made.subscribe(Subscriber(f"{subscriber.endpoint}{n}", subscriber.p256dh, subscriber.auth), "") == ""
    assert len(made.subscriptions) == 20 and made.subscriptions[0].subscriber.endpoint.endswith("abc2")


async def push_service(statuses: list[int]) -> tuple[web.AppRunner, str, list[tuple[dict, bytes]]]:
    got: list[tuple[dict, bytes]] = []

    async def take(request: web.Request) -> web.Response:
        got.append(({**request.headers, "n": request.match_info["n"]}, await request.read()))
        return web.Response(status=statuses.pop(0))

    app = web.Application()
    app.router.add_post("/push/{n}", take)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}", got


def test_each_push_says_how_it_went_and_a_gone_subscription_is_dropped(tmp_path: Path):
    async def scenario() -> None:
        runner, origin, got = await push_service([201, 410, 500])
        try:
            made, recorded = pusher(tmp_path, services=(origin,))
            browsers = [browser_keys() for _ in range(3)]
            for n, (_, _, subscriber) in enumerate(browsers):
                assert made.subscribe(Subscriber(f"{origin}/push/{n}", subscriber.p256dh, subscriber.auth), "") == ""
            said = message("w:0.0 (repo) needs permission", "Bash: rm -rf build", "%3", request="r1", answers=True)
            results = await made.send(said)
            assert sorted(r.outcome for r in results) == sorted([SENT, GONE, FAILED])
            assert [r for r in results if r.outcome == FAILED][0].why.startswith("the push service said HTTP 500")
            assert len(made.subscriptions) == 2  # the one the push service no longer has is dropped
            assert [r["outcome"] for r in recorded] == [r.outcome for r in results] and all(r["kind"] == "push" for r in recorded)
            assert len(got) == 3
            for headers, body in got:
                private, auth, _ = browsers[int(headers["n"])]
                assert headers["Content-Encoding"] == "aes128gcm" and headers["Urgency"] == "high" and len(headers["Topic"]) == 32
                opened = json.loads(http_ece.decrypt(body, private_key=private, auth_secret=auth, version="aes128gcm"))  # each with its own browser's keys
                assert opened == said and opened["url"] == "/#agent=%253" and opened["answers"] == ["approve", "deny"]
            phones, kept = read_results(tmp_path / "push-s.json") or (0, [])
            assert phones == 2 and [r.outcome for r in kept] == [r.outcome for r in results]
        finally:
            await runner.cleanup()

    asyncio.run(scenario())


def test_a_push_while_a_key_was_just_pressed_is_held_back_and_says_why(tmp_path: Path):
    async def scenario() -> None:
        runner, origin, got = await push_service([201])
        try:
            made, recorded = pusher(tmp_path, since_key=12.4, services=(origin,))
            _, _, subscriber = browser_keys()
            made.subscribe(Subscriber(f"{origin}/push/1", subscriber.p256dh, subscriber.auth), "")
            (result,) = await made.send(message("w:0.0 needs permission", "", "%3"))
            assert result.outcome == SUPPRESSED and result.why == "you pressed a key at a headspace terminal 12 s ago: pushed in 48 s if it still waits then"
            await made.close()  # its held push with it
            assert got == [] and recorded[0]["outcome"] == SUPPRESSED
            always, _ = pusher(tmp_path / "always", since_key=1.0, services=(origin,), quiet=0.0)
            always.subscribe(Subscriber(f"{origin}/push/1", subscriber.p256dh, subscriber.auth), "")
            (sent,) = await always.send(message("w:0.0 needs permission", "", "%3"))
            assert sent.outcome == SENT and len(got) == 1
        finally:
            await runner.cleanup()

    asyncio.run(scenario())


def test_a_push_service_that_cannot_be_reached_is_a_failure_that_says_so(tmp_path: Path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once closed
    made, _ = pusher(tmp_path, services=(f"http://127.0.0.1:{port}",))
    _, _, subscriber = browser_keys()
    made.subscribe(Subscriber(f"http://127.0.0.1:{port}/push/1", subscriber.p256dh, subscriber.auth), "")

    async def scenario() -> None:
        (result,) = await made.send(message("t", "", "%3"))
        await made.close()
        assert result.outcome == FAILED and result.why.startswith("the push service could not be reached"), result

    asyncio.run(scenario())


def test_a_message_carries_answers_only_with_its_request_and_its_words_are_clean():
    plain = message("w:0.0 needs permission\x1b]52;c;x\x07", "Bash: ls", "%3@box")
    assert "answers" not in plain and "request" not in plain and plain["url"] == "/#agent=%253@box" and "\x1b" not in plain["title"]
    assert "answers" not in message("t", "b", "%3", request="", answers=True)


def test_a_proxy_on_this_machine_says_what_the_browser_asked_for_and_no_one_else_does():
    """tailscale serve and a reverse proxy end TLS and post on over loopback: the page's Origin check and Secure cookie follow what they forward."""
    from headspace_tui.web.guard import given_token, same_origin, seen_as

    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "box.tail1234.ts.net"}
    assert seen_as("http", "127.0.0.1:8765", "127.0.0.1", forwarded) == ("https", "box.tail1234.ts.net")
    assert seen_as("http", "127.0.0.1:8765", "::1", {"X-Forwarded-Proto": "https"}) == ("https", "127.0.0.1:8765")
    assert seen_as("http", "127.0.0.1:8765", "192.0.2.7", forwarded) == ("http", "127.0.0.1:8765")  # not from this machine: not believed
    assert seen_as("https", "h:1", "127.0.0.1", {"X-Forwarded-Proto": "gopher"}) == ("https", "h:1")
    assert same_origin("https://box.tail1234.ts.net", *reversed(seen_as("http", "127.0.0.1:8765", "127.0.0.1", forwarded)))
    assert not same_origin("https://evil.example", "box.tail1234.ts.net", "https")
    # The sign-in form takes the printed address whole, or the token alone.
    assert given_token("https://box:8765/?token=abcDEF_123-xyz0000#agent=%253") == "abcDEF_123-xyz0000"
    assert given_token("abcDEF_123-xyz0000") == "abcDEF_123-xyz0000" and given_token(None) is None


def test_a_push_held_back_goes_when_the_quiet_ends_if_it_still_waits_and_not_otherwise(tmp_path: Path):
    """The ringer rings a wait once: a push held while a key was just pressed is not lost, it waits out the quiet."""

    async def scenario() -> None:
        runner, origin, got = await push_service([201, 201])
        keys = {"since": 0.2}
        try:
            made, recorded = pusher(tmp_path, services=(origin,), quiet=0.4)
            made.since_key = lambda: keys["since"]
            waiting = {"%3": True, "%4": False}
            made.still = lambda pane, request: waiting[pane] and request == "r1"
            _, _, subscriber = browser_keys()
            made.subscribe(Subscriber(f"{origin}/push/1", subscriber.p256dh, subscriber.auth), "")
            (held,) = await made.send(message("w:0.0 needs permission", "Bash: ls", "%3"), "r1")
            (dropped,) = await made.send(message("x:0.0 needs permission", "Bash: ls", "%4"), "r1")
            assert held.outcome == dropped.outcome == SUPPRESSED and got == []
            keys["since"] = 5.0  # no key since: the quiet is over when they are looked at again
            for _ in range(100):
                await asyncio.sleep(0.05)
                if got:
                    break
            await asyncio.sleep(0.3)  # and nothing more comes for the one that no longer waits
            assert [headers["n"] for headers, _ in got] == ["1"]  # once, the one still waiting
            assert [r["outcome"] for r in recorded] == [SUPPRESSED, SUPPRESSED, SENT]
        finally:
            await made.close()
            await runner.cleanup()

    asyncio.run(scenario())


def test_a_call_is_shown_whole_or_carries_no_approve():
    assert whole("Bash: make test")
    assert not whole("Bash: " + "x" * 300) and not whole("Bash: cat <<EOF\nrm -rf /\nEOF") and not whole("") and not whole("Bash: a\x1b[2Jb")


def test_a_proxy_on_this_machine_is_counted_by_the_client_it_forwards_for():
    from headspace_tui.web.guard import forwarded_for

    assert forwarded_for("127.0.0.1", {"X-Forwarded-For": "203.0.113.9, 100.64.0.7"}) == "via proxy 100.64.0.7"  # the hop the proxy saw
    assert forwarded_for("192.0.2.1", {"X-Forwarded-For": "100.64.0.7"}) == "" and forwarded_for("127.0.0.1", {}) == ""


def test_a_page_looked_at_reads_the_kept_public_key_and_loads_no_key(tmp_path: Path):
    """The page asks for the public key on every open; only a subscription or a push needs the private key (and OpenSSL)."""
    first, _ = pusher(tmp_path)
    public = first.state()["key"]  # the first ever: made, and its public half kept beside it
    assert len(unb64url(public)) == 65 and json.loads((tmp_path / "push-key.pem.pub").read_text())["public"] == public
    again, _ = pusher(tmp_path)
    assert again.state()["key"] == public and again._key is None
    os.utime(tmp_path / "push-key.pem.pub", (1.0, 1.0))  # older than the key: not believed, the key is read
    assert again.state()["key"] == public and again._key is not None
