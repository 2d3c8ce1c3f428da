"""The phone page's Web Push and its install, in Debian's Chromium, against real Claude Code agents through the resident service.

* The page subscribes ("Notify this phone"); a new permission makes the
  service post a push to the subscription's endpoint: a push service of the
  test's own on 127.0.0.1, which decrypts the body with the subscription's
  keys (http-ece, the reference implementation, not ours) and checks the
  VAPID signature (py-vapid's).  The decrypted message is delivered to the
  page's service worker as the browser's push service would (DevTools'
  ``ServiceWorker.deliverPushMessage``); its notification is read back from
  the worker's registration; a tap on it opens that agent's card, and its
  Approve runs that command, through the page's own answer and request check.
* A second wait while a headspace terminal is in use (a key said to the
  service, as the terminal UI's keys are) is not pushed, and the page and
  ``headspace doctor`` say it was suppressed and why.

What cannot run here, and stands in: the browser's push service.  Headless
Chromium makes no real subscription (that needs Google's servers, which
this machine cannot reach), so the page's ``pushManager.subscribe`` returns
a subscription whose endpoint is the test's push service and whose keys the
test holds (an init script: the page's own code runs unchanged around it).
A notification's tap cannot be made by a page either: the test calls the
worker's click handler (``headspaceClicked``, what its ``notificationclick``
listener runs) with the notification the registration shows.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.e2e.test_jump import wait
from tests.e2e.test_resident_service import run
from tests.e2e.test_web_page import CHROMIUM, PHONE, WAIT, chromium, shots, web_on  # noqa: F401 (chromium: the page tests' browser fixture)
from tests.harness.push_service import PushService
from tests.harness.scenarios import NUMBERED_MENU
from tests.ui.test_inbox_live import start_agents

pytestmark = pytest.mark.e2e


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture
def push_service() -> Iterator[PushService]:
    service = PushService()
    yield service
    service.close()


class Subscription:
    """The keys a browser makes for one subscription: its P-256 pair and its 16-byte secret (the test decrypts with them)."""

    def __init__(self, endpoint: str) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self.endpoint = endpoint
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        point = self.private.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.json = {"endpoint": endpoint, "expirationTime": None, "keys": {"p256dh": b64url(point), "auth": b64url(self.auth)}}

    def opened(self, headers: dict[str, str], body: bytes) -> dict:
        """A push as its browser reads it: the VAPID signature checked (py-vapid), the body decrypted (http-ece): the message."""
        import http_ece
        import py_vapid.jwt

        scheme, _, fields = headers["Authorization"].partition(" ")
        assert scheme == "vapid", headers["Authorization"]
        parts = dict(part.strip().split("=", 1) for part in fields.split(","))
        claims = py_vapid.jwt.decode(parts["t"], parts["k"])  # raises when the signature is not the key's
        assert claims["aud"] == self.endpoint.split("/push/")[0] and claims["exp"] > time.time() and claims["sub"].startswith(("mailto:", "https://")), claims
        assert headers["Content-Encoding"] == "aes128gcm" and int(headers["TTL"]) > 0, headers
        return json.loads(http_ece.decrypt(body, private_key=self.private, auth_secret=self.auth, version="aes128gcm"))


def fake_subscribe_script(subscription: Subscription) -> str:
    """The stand-in for the browser's push service (see the module's docstring): subscribe and getSubscription give the test's subscription."""
    return f"""
(() => {{
  const keys = {json.dumps(subscription.json)};
  // Kept across loads, as a browser keeps its subscriptions.
  const make = () => ({{ endpoint: keys.endpoint, toJSON: () => keys, unsubscribe: async () => {{ localStorage.removeItem("test-subscribed"); return true; }} }});
  if (typeof PushManager !== "undefined") {{
    PushManager.prototype.subscribe = async function () {{ localStorage.setItem("test-subscribed", "1"); return make(); }};
    PushManager.prototype.getSubscription = async function () {{ return localStorage.getItem("test-subscribed") ? make() : null; }};
  }}
}})();
"""


def until(page, predicate, what: str, timeout: float = 30.0):
    """``wait``, pausing through the browser's driver: sync Playwright hands on DevTools events only while it is called."""
    return wait(predicate, what, timeout, pause=lambda: page.wait_for_timeout(100))


def pressed(server: str) -> None:
    """The terminal UI, as a client of the service, with one key pressed (j: the cursor moves); back once that key was said to the service."""
    import asyncio

    from headspace_tui.app.main import HeadspaceApp
    from headspace_tui.resident.facade_client import ServiceClient
    from headspace_tui.shared.config import Config
    from headspace_tui.shared.resident_place import place_of
    from headspace_tui.tmux.server import TmuxServer

    client = ServiceClient(place_of(TmuxServer(socket_name=server).identity), config=Config())
    client.connect()

    async def scenario() -> None:
        app = HeadspaceApp(client)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("j")
            for _ in range(200):  # the key is said beside the loop: until that aside is done
                await pilot.pause(0.05)
                if not any(task.get_name() == "here" for task in client._asides):
                    break

    failed: list[BaseException] = []

    def run_app() -> None:
        try:
            asyncio.run(scenario())
        except BaseException as exc:  # noqa: BLE001 (the test's own thread: whatever ended it is said to the test)
            failed.append(exc)

    thread = threading.Thread(target=run_app)  # its own loop, beside the browser's driver
    thread.start()
    thread.join(120)
    assert not thread.is_alive() and not failed, failed


def worker_registration(cdp) -> str:
    """The page's service worker registration's id, as DevTools names it (to deliver a push to it)."""
    found: list[str] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: found.extend(r["registrationId"] for r in event["registrations"] if r["scopeURL"].endswith("/") and not r["isDeleted"]))
    cdp.send("ServiceWorker.enable")
    return found


def delivered(page, cdp, base: str, registrations: list[str], message: dict, shown) -> None:
    """``message`` handed to the page's worker as its push service would, until its notification shows (a worker still starting misses one)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        cdp.send("ServiceWorker.deliverPushMessage", {"origin": base, "registrationId": registrations[-1], "data": json.dumps(message)})
        for _ in range(20):
            if shown():
                return
            page.wait_for_timeout(100)
    raise AssertionError(f"no notification shown for {message}")


def test_a_wait_is_pushed_to_the_phone_that_subscribed_its_notification_opens_the_card_and_approves_that_request(claude_session, fake_api, private_tmux, services, push_service, chromium, tmp_path):  # noqa: F811 (chromium: the fixture imported above)
    config = tmp_path / "config.toml"
    config.write_text(f'[push]\nservices = ["{push_service.origin}"]\nquiet_after_key = 60\n')
    sessions = start_agents(claude_session, fake_api, ["first", "second"])
    first, second = sessions["first"], sessions["second"]
    url, port, _ = web_on(private_tmux.name, services, config=config)
    base = f"http://127.0.0.1:{port}"
    subscription = Subscription(f"{push_service.origin}/push/phone-1")

    context = chromium.new_context(**PHONE)
    context.grant_permissions(["notifications"], origin=base)
    context.add_init_script(fake_subscribe_script(subscription))
    page = context.new_page()
    page.goto(url)
    page.locator("#live.on").wait_for(timeout=WAIT)
    page.locator("#notify summary").tap()
    page.get_by_role("button", name="Notify this phone").tap()
    page.locator("#notify-said.ok").wait_for(timeout=WAIT)
    assert page.get_by_role("button", name="Stop notifying this phone").is_visible()
    cdp = context.new_cdp_session(page)
    registrations = worker_registration(cdp)
    until(page, lambda: registrations, "the page's service worker")

    # The ringer says nothing of what it sees in its first seconds (waits already there when it started).
    from headspace_tui.notifications.decide import SETTLE
    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    started = read_card(place_of(TmuxServer(socket_name=private_tmux.name).identity))["started"]
    until(page, lambda: time.time() > started + SETTLE, "the ringer's quiet start to end")
    first.submit("please ask first")
    first.wait_for(NUMBERED_MENU, timeout=60)
    wait(lambda: push_service.received, "a push at the subscription's push service", timeout=30)
    first_push = push_service.received[0]
    path, headers, body = first_push.path, first_push.headers, first_push.body
    assert path == "/push/phone-1"
    message = subscription.opened(headers, body)
    assert message["url"] == f"/#agent={quote(first.pane_id)}" and message["pane"] == first.pane_id, message
    assert "first" in message["title"] and "touch first.txt" in message["body"], message
    assert message["answers"] == ["approve", "deny"] and message["request"], message

    # The browser's push service hands it to the page's worker, which shows it.
    worker = context.service_workers[0]
    shown = None

    def notification() -> bool:
        nonlocal shown
        listed = worker.evaluate("self.registration.getNotifications().then((all) => all.map((n) => ({title: n.title, body: n.body, data: n.data, actions: n.actions.map((a) => a.action)})))")
        shown = listed[0] if listed else None
        return shown is not None

    delivered(page, cdp, base, registrations, message, notification)
    assert shown["title"] == message["title"] and shown["data"]["url"] == message["url"] and shown["actions"] == ["approve", "deny"], shown
    page.screenshot(path=str(shots(tmp_path) / "push-subscribed-390x844.png"))

    # A tap on it opens that agent's card.
    assert worker.evaluate("self.registration.getNotifications().then((all) => self.headspaceClicked(all[0], ''))") == "opened"
    page.locator(f'#agent-view[data-pane="{first.pane_id}"][data-state="permission"]').wait_for(timeout=WAIT)

    # Its Approve answers that request: the command runs.
    delivered(page, cdp, base, registrations, message, notification)
    said = worker.evaluate("self.registration.getNotifications().then((all) => self.headspaceClicked(all.find((n) => n.data.request), 'approve'))")
    assert said.startswith("Sent:"), said
    first.wait_for("first is done.", timeout=60)
    assert (first.workdir / "first.txt").exists()

    # A key in the terminal UI, a client of the service as users run it: the next wait is not pushed.
    pressed(private_tmux.name)
    second.submit("please ask second")
    second.wait_for(NUMBERED_MENU, timeout=60)
    page.goto(f"{base}/")
    page.locator("#notify summary").tap()
    suppressed = page.locator('#notify-list li[data-outcome="suppressed"]')
    suppressed.wait_for(timeout=WAIT)
    assert "second" in suppressed.inner_text() and "key at a headspace terminal" in suppressed.inner_text(), suppressed.inner_text()
    assert len(push_service.received) == 1, "a wait was pushed while a headspace terminal was in use"
    page.locator('#notify-list li[data-outcome="sent"]').first.wait_for(timeout=WAIT)
    assert page.get_by_role("button", name="Stop notifying this phone").is_visible()  # this browser's subscription, known after a reload
    page.screenshot(path=str(shots(tmp_path) / "push-results-390x844.png"))

    def logged() -> list[tuple[str, str]]:
        import sqlite3

        from headspace_tui.state.eventlog import default_path

        with sqlite3.connect(default_path()) as db:
            rows = db.execute("SELECT payload FROM events WHERE kind = 'push' ORDER BY id").fetchall()
        return [(json.loads(p)["outcome"], json.loads(p)["why"]) for (p,) in rows]

    outcomes = wait(lambda: len(logged()) >= 2 and logged(), "the pushes in the event log")
    assert [o for o, _ in outcomes] == ["sent", "suppressed"] and "key at a headspace terminal" in outcomes[1][1], outcomes
    doctor = run("-L", private_tmux.name, "--config", str(config), "doctor")
    assert "suppressed" in doctor.stdout and "1 subscribed" in doctor.stdout, doctor.stdout
    context.close()


def spki_hash(certificate_pem: bytes) -> str:
    """The certificate's public key as Chromium's ``--ignore-certificate-errors-spki-list`` names it: base64 of SHA-256 of its SubjectPublicKeyInfo."""
    import hashlib

    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    key = x509.load_pem_x509_certificate(certificate_pem).public_key()
    return base64.b64encode(hashlib.sha256(key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)).digest()).decode()


def test_over_tls_from_a_private_ca_the_page_installs_as_an_app_and_its_worker_keeps_no_agent_data(claude_session, private_tmux, services, chromium, tmp_path):  # noqa: F811 (chromium: the fixture imported above)
    """Served over TLS with a certificate from the test's own CA, as a phone with a private CA installed sees it.

    The app's first open (its start URL, with no token) asks for the printed address, and the page follows.
    Chromium is told to trust that one key (``--ignore-certificate-errors-spki-list``, in a profile of its own:
    the way to trust a test CA here, where the system's store is not ours to change; Playwright's
    ``ignore_https_errors`` would not do, as a service worker refuses a certificate error).  Then the manifest
    parses with no error, Chromium finds the page installable, the worker is active and its cache holds the
    page's own files and nothing else: no agent's name, no pane, no answer.  Offline, the page opens from
    that cache and says it is not live, with no agent shown.
    """
    import trustme

    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    session = claude_session(name="secret-agent-name")
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    from tests.e2e.test_web_page import free_port

    port = free_port()
    proc = run("-L", private_tmux.name, "web", "--listen", f"127.0.0.1:{port}", "--tls", str(cert), str(key), "--no-qr")
    assert proc.returncode == 0, proc.stderr
    (url,) = [line for line in proc.stdout.splitlines() if line.startswith("https://")]
    services.append(read_card(place_of(TmuxServer(socket_name=private_tmux.name).identity))["pid"])
    base = f"https://127.0.0.1:{port}"

    # A profile of its own (the flag takes effect with one), from the module's Playwright: one driver per process.
    args = ["--no-sandbox", f"--ignore-certificate-errors-spki-list={spki_hash(issued.cert_chain_pems[0].bytes())}"]
    context = chromium.browser_type.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM, args=args, **PHONE)
    try:
        # Opened as the installed app opens (its start URL, no token, maybe none of the browser's cookies): it asks for the
        # printed address once, and the page follows.
        page = context.new_page()
        response = page.goto(f"{base}/")
        assert response is not None and response.status == 401 and session.name not in page.content()
        page.locator("#token").fill(url)
        page.get_by_role("button", name="Open").click()
        page.locator(f'li.agent[data-pane="{session.pane_id}"]').wait_for(timeout=WAIT)
        assert page.url == f"{base}/", page.url
        assert page.evaluate("window.isSecureContext")
        until(page, lambda: page.evaluate("navigator.serviceWorker.getRegistration().then((r) => Boolean(r && r.active))"), "the service worker, active")

        cdp = context.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["url"] == f"{base}/manifest.webmanifest" and not manifest["errors"], manifest
        assert json.loads(manifest["data"])["display"] == "standalone"
        installable = cdp.send("Page.getInstallabilityErrors")
        assert installable["installabilityErrors"] == [], installable

        cached = page.evaluate(
            """caches.keys().then(async (names) => {
                 const out = [];
                 for (const name of names) {
                   const cache = await caches.open(name);
                   for (const request of await cache.keys()) {
                     const response = await cache.match(request);
                     out.push([new URL(request.url).pathname + new URL(request.url).search, await response.text()]);
                   }
                 }
                 return out;
               })"""
        )
        paths = sorted(path for path, _ in cached)
        assert paths == sorted(["/", "/assets/app.js", "/assets/app.css", "/assets/icon.svg", "/manifest.webmanifest"]), paths
        for path, text in cached:
            assert session.name not in text and session.pane_id not in text and "secret-agent" not in text, f"{path} in the cache holds agent data"

        # Offline: the page from the cache, saying it is not live, with no agent (none is kept on the phone).
        context.set_offline(True)
        page.reload()
        page.locator("#live.off", has_text="not live").wait_for(timeout=WAIT)
        assert page.locator("#empty").is_hidden(), "offline, the page said there are no agents"
        assert page.locator("li.agent").count() == 0
        page.screenshot(path=str(shots(tmp_path) / "offline-390x844.png"))
    finally:
        context.close()
