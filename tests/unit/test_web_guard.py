"""The page's guard middleware as a browser behind a proxy meets it: aiohttp's own test server on 127.0.0.1, the real ``WebPage``.

``tailscale serve`` and a reverse proxy end TLS and pass requests on over
loopback: the guard must take the scheme and host they forward for the
answers' Origin check and the cookie's Secure, and count each client they
forward for apart (ten wrong tokens from one must not turn away the rest).
The service behind is a stand-in that answers the one call these requests
reach (the rules' pause): no tmux is needed to check the guard.
"""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer

from headspace_tui.web.server import WebOptions, WebPage

TOKEN = "t" * 22


class Rules:
    """What the page's server asks of a service on these routes (a stand-in: the guard is what is tested)."""

    def subscribe(self, subscriber) -> None:
        pass

    def rules_control(self, action: str, rule: str = "", host: str = "", via: str = "") -> str:
        return f"{action} done"


async def client() -> TestClient:
    page = WebPage(Rules(), None, lambda client, pane: None, lambda client: None)  # type: ignore[arg-type]
    page.options = WebOptions(token=TOKEN)
    made = TestClient(TestServer(page.app()))
    await made.start_server()
    return made


def test_through_a_proxy_on_this_machine_answers_pass_the_origin_check_and_the_cookie_is_secure():
    async def scenario() -> None:
        browser = await client()
        try:
            proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "box.tail1234.ts.net", "X-Forwarded-For": "100.64.0.7"}
            moved = await browser.get(f"/?token={TOKEN}", headers=proxied, allow_redirects=False)
            assert moved.status == 303 and "Secure" in moved.headers["Set-Cookie"], moved.headers.get("Set-Cookie")
            cookie = {"Cookie": f"headspace_token={TOKEN}"}
            body = {"action": "pause", "rule": "", "host": ""}
            said = await browser.post("/api/rules", json=body, headers={**cookie, **proxied, "Origin": "https://box.tail1234.ts.net"})
            assert said.status == 200 and (await said.json()) == {"said": "pause done"}
            elsewhere = await browser.post("/api/rules", json=body, headers={**cookie, **proxied, "Origin": "https://evil.example"})
            assert elsewhere.status == 403
            bare = await browser.post("/api/rules", json=body, headers={**cookie, "Origin": "https://box.tail1234.ts.net"})
            assert bare.status == 403  # without the proxy's word the page is http on 127.0.0.1: that Origin is not its own
        finally:
            await browser.close()

    asyncio.run(scenario())


def test_wrong_tokens_through_a_proxy_turn_away_that_client_and_not_the_others():
    async def scenario() -> None:
        browser = await client()
        try:
            for _ in range(10):
                guess = await browser.get("/?token=" + "x" * 22, headers={"X-Forwarded-For": "203.0.113.5"}, allow_redirects=False)
                assert guess.status == 403
            turned = await browser.get(f"/?token={TOKEN}", headers={"X-Forwarded-For": "203.0.113.5"}, allow_redirects=False)
            assert turned.status == 429
            owner = await browser.get(f"/?token={TOKEN}", headers={"X-Forwarded-For": "100.64.0.7"}, allow_redirects=False)
            assert owner.status == 303
        finally:
            await browser.close()

    asyncio.run(scenario())


def test_the_sign_in_page_asks_for_the_address_and_holds_no_agent():
    async def scenario() -> None:
        browser = await client()
        try:
            page = await browser.get("/")
            text = await page.text()
            assert page.status == 401 and 'name="token"' in text and "form-action 'self'" in page.headers["Content-Security-Policy"]
            assert 'method="post" action="/signin"' in text  # the token in the body: not in a proxy's log of addresses
            pasted = await browser.post("/signin", data={"token": f"https://box:8765/?token={TOKEN}#agent=%253"}, allow_redirects=False)
            assert pasted.status == 303 and TOKEN in pasted.headers["Set-Cookie"] and pasted.headers["Location"] == "/"
            wrong = await browser.post("/signin", data={"token": "x" * 22}, allow_redirects=False)
            assert wrong.status == 403 and "Set-Cookie" not in wrong.headers
        finally:
            await browser.close()

    asyncio.run(scenario())
