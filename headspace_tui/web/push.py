"""The phone's Web Push: which phones asked for it, what each push was and how it went, and the sending.

A phone that opened the page taps "Notify this phone": its browser makes a
subscription (an endpoint at its push service, and keys only it can decrypt
with), and the page gives it to the service.  Then each wait the ringer
rings (resident/ringer.py: once per wait, gathered, snoozes honoured, the
``notify_states`` only) is also pushed to every subscription, encrypted and
signed (push_crypto.py), unless the user is at a headspace terminal: a key
there in the last ``quiet_after_key`` seconds (the service's ``here``).

What is kept, and why:

* **the subscriptions belong to the page's token.**  The file
  (``web/push-<service>.json``, 0600 in the 0700 state folder) holds the
  token's hash; a page served with another token finds it and drops them
  all: whoever the old token let in no longer gets pushes.
* **only the browsers' push services are posted to** (Google's, Mozilla's,
  Apple's, Microsoft's, and any origin ``[push] services`` adds): a
  subscription is the only address the service posts to on someone's word,
  and the page's token is no licence to make it post anywhere.
* **every push's result** (sent; suppressed and why; failed and why; gone,
  when the push service says the subscription no longer exists, which
  drops it) goes to the event log (``kind: push``), the log, the page
  (``GET /api/push``) and the file, where ``headspace doctor`` reads it.

A plain permission's push carries its request (the row's ``request``) and
the page's Approve and Deny: the service worker answers through
``/api/answer`` with that request as ``expect``, as a tap on the page does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from ..shared.config import PushConfig
from ..shared.paths import state_dir
from ..shared.safe_files import Unreadable, read_regular
from ..shared.safe_text import clean
from .kept import keep

if TYPE_CHECKING:
    from .push_crypto import VapidKey

log = logging.getLogger(__name__)

# The browsers' push services (a host, or the domain its hosts are under).
KNOWN_SERVICES = ("fcm.googleapis.com", "push.services.mozilla.com", "push.apple.com", "notify.windows.com")
MAX_SUBSCRIPTIONS = 20  # phones and browsers per page (an old one is dropped for a new one)
RESULTS_KEPT = 30  # the newest results, on the page and in the file
STORE_MAX = 256 * 1024  # bytes the file may hold
SEND_TIMEOUT = 10.0  # seconds one push may take
TTL = 3600  # seconds a push service keeps a push for a phone that is off (a wait an hour old is on the page anyway)
WORDS_MAX = 300  # characters of a push's title and body each
ENDPOINT_MAX = 1024
HELD_MARGIN = 0.5  # seconds after the quiet ends that a held push is looked at again (a key at its very end counts)

SENT, SUPPRESSED, FAILED, GONE = "sent", "suppressed", "failed", "gone"
# Who runs this server, for a push service that must reach its operator (``[push] contact`` sets it).  Apple's
# refuses ``mailto:…@localhost``; a domain reserved for examples (RFC 2606) is what it and the others take.
SUBJECT = "mailto:headspace@example.com"


def store_path(name: str) -> Path:
    """Where the service ``name`` keeps its phones' subscriptions and the last results."""
    return state_dir() / "web" / f"push-{name}.json"


def key_path() -> Path:
    """The VAPID key, one per user: a phone subscribed once stays subscribed while it is kept."""
    return state_dir() / "web" / "push-key.pem"


def allowed(endpoint: str, services: tuple[str, ...] = ()) -> str:
    """Why the service will not post to ``endpoint``, or "" when it will (a browser's push service over https, or one ``services`` names)."""
    if not isinstance(endpoint, str) or not endpoint or len(endpoint) > ENDPOINT_MAX or any(c.isspace() or ord(c) < 32 for c in endpoint):
        return "not an endpoint"
    parts = urlsplit(endpoint)
    try:
        port = parts.port
    except ValueError:
        return "not an endpoint"
    origin = f"{parts.scheme}://{parts.netloc}".lower()
    if origin in services or (port is None and f"{parts.scheme}://{parts.hostname}" in services):
        return ""
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or parts.username or parts.password:
        return "a push service is reached over https"
    if not _host_name(host):
        return "not an endpoint"
    if not any(host == known or host.endswith("." + known) for known in KNOWN_SERVICES):
        return f"{host or '?'} is not a browser's push service (add its origin to [push] services to allow it)"
    return ""


def _host_name(host: str) -> bool:
    """Whether ``host`` is a name an HTTP client can ask for: labels of 1 to 63 letters, digits or hyphens (an empty or long one fails in the sending)."""
    labels = host.split(".")
    return 0 < len(host) <= 253 and all(0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii() for label in labels)


def whole(call: str) -> bool:
    """Whether a notification shows ``call`` whole: one line, nothing cut or cleaned away (then it may carry Approve)."""
    return bool(call) and "\n" not in call and len(call) <= WORDS_MAX and clean(call, WORDS_MAX) == call


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Subscriber:
    """A browser's subscription: where its push service takes messages, and the keys only that browser can decrypt with."""

    endpoint: str
    p256dh: str  # the browser's P-256 public key, base64url (65 bytes uncompressed)
    auth: str  # its 16-byte authentication secret, base64url

    def checked(self) -> Subscriber:
        """Itself when its keys are keys; ValueError naming what is not."""
        from .push_crypto import check_keys

        check_keys(self.p256dh, self.auth)
        return self


@dataclass(frozen=True)
class Result:
    """One push's outcome, as the page and doctor show it."""

    at: float
    outcome: str  # sent | suppressed | failed | gone
    why: str  # "" when sent
    title: str
    pane: str = ""
    service: str = ""  # the push service's host ("" when suppressed before any was tried)


@dataclass(frozen=True)
class Kept:
    subscriber: Subscriber
    added: float
    browser: str  # what the page said of itself ("Chrome on Android"), for the page's list


class Pusher:
    """The page's subscriptions and the sending, for one service."""

    def __init__(self, path: Path, key: Path, config: PushConfig, *, since_key: Callable[[], float | None], record: Callable[[dict], None], clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.key_file = key
        self.config = config
        self.since_key = since_key  # seconds since a key at a headspace terminal (None: none yet)
        self.record = record  # to the event log
        self.clock = clock
        self.token = ""
        self.subscriptions: list[Kept] = []
        self.results: list[Result] = []
        self._key: VapidKey | None = None
        self.problem = ""  # why pushes cannot be sent at all ("" when they can)
        self._session: Any = None  # aiohttp's ClientSession, made on the loop at the first push
        self._tasks: set[asyncio.Task] = set()
        self.told: Callable[[], None] = lambda: None  # a push's result is kept: the pages read the list again (the page's server sets it)
        self.still: Callable[[str, str], bool] = lambda pane, request: True  # whether an agent still waits on that request (the page's server sets it)
        self._held: dict[str, asyncio.TimerHandle] = {}  # pane -> a push held back while a key was just pressed, due when the quiet ends

    # -- the key and the file ----------------------------------------------------------
    def key(self) -> VapidKey | None:
        if self._key is None and not self.problem:
            from .push_crypto import VapidKey

            try:
                self._key = VapidKey.kept(self.key_file)
            except (ValueError, OSError) as exc:
                self.problem = str(exc)
                log.warning("web push is off: %s", exc)
        return self._key

    def bind(self, token: str) -> None:
        """The page is served with ``token``: the subscriptions made under it are read back; those of another token are dropped."""
        self.token = token
        self.subscriptions, self.results = [], []
        try:
            data = json.loads(read_regular(self.path, STORE_MAX))
        except FileNotFoundError:
            return
        except (OSError, Unreadable, ValueError) as exc:
            log.warning("web push: %s cannot be read (%s): no phone is subscribed until one asks again", self.path, exc)
            return
        if not isinstance(data, dict):
            return
        if data.get("token") != token_hash(token):
            # Another token: its phones and what was pushed to them are not this token's holders' to see.
            dropped = len(_listed(data, "subscriptions"))
            log.info("web push: the page's token changed: %d subscription(s) and the last results dropped (each phone turns notifications on again)", dropped)
            self._save()
            return
        self.results = [r for r in (_result(item) for item in _listed(data, "results")) if r is not None][-RESULTS_KEPT:]
        for item in _listed(data, "subscriptions"):
            kept = _kept(item)
            if kept is not None and not allowed(kept.subscriber.endpoint, self.config.services):
                self.subscriptions.append(kept)

    def _save(self) -> None:
        data = {
            "token": token_hash(self.token),
            "subscriptions": [{**asdict(k.subscriber), "added": k.added, "browser": k.browser} for k in self.subscriptions],
            "results": [asdict(r) for r in self.results[-RESULTS_KEPT:]],
        }
        try:
            keep(self.path, data)
        except OSError as exc:
            log.warning("web push: %s cannot be written (%s)", self.path, exc)

    # -- the page's asks ----------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber, browser: str) -> str:
        """Keep ``subscriber`` (a phone asked to be notified); "" when kept, else why not."""
        why = allowed(subscriber.endpoint, self.config.services)
        if why:
            return why
        try:
            subscriber.checked()
        except ValueError as exc:
            return str(exc)
        if self.key() is None:
            return f"pushes cannot be sent: {self.problem}"
        others = [k for k in self.subscriptions if k.subscriber.endpoint != subscriber.endpoint]
        self.subscriptions = [*others[-(MAX_SUBSCRIPTIONS - 1) :], Kept(subscriber, self.clock(), clean(browser, 80))]
        self._save()
        log.info("web push: a subscription at %s kept (%d in all)", urlsplit(subscriber.endpoint).hostname, len(self.subscriptions))
        return ""

    def unsubscribe(self, endpoint: str) -> bool:
        before = len(self.subscriptions)
        self.subscriptions = [k for k in self.subscriptions if k.subscriber.endpoint != endpoint]
        if len(self.subscriptions) != before:
            self._save()
            return True
        return False

    def public(self) -> str:
        """The key's public half (the page's ``applicationServerKey``), "" when there is no key.

        Read from the copy kept beside the key while no push has loaded it: a
        page looked at is no reason to load OpenSSL into the service.
        """
        if self._key is None and not self.problem:
            kept = self._public_kept()
            if kept:
                return kept
        key = self.key()
        if key is not None:
            self._keep_public(key.public)
        return key.public if key is not None else ""

    def _public_path(self) -> Path:
        return self.key_file.with_name(self.key_file.name + ".pub")

    def _public_kept(self) -> str:
        """The public half kept beside the key, if it is there and not older than the key; else ""."""
        try:
            data = json.loads(read_regular(self._public_path(), 1024))
            if self._public_path().stat().st_mtime < self.key_file.stat().st_mtime:
                return ""
        except (OSError, Unreadable, ValueError):
            return ""
        text = data.get("public") if isinstance(data, dict) else None
        return text if isinstance(text, str) and len(text) == 87 and all(c.isalnum() or c in "-_" for c in text) else ""

    def _keep_public(self, public: str) -> None:
        if self._public_kept() == public:
            return
        try:
            keep(self._public_path(), {"public": public})
        except OSError as exc:
            log.warning("web push: the public key could not be kept beside the key (%s)", exc)

    def state(self, endpoint: str = "") -> dict[str, Any]:
        """What the page shows: whether pushes can be sent, whether this browser is subscribed, how many are, the last results."""
        public = self.public()
        return {
            "key": public,
            "problem": self.problem,
            "subscribed": any(k.subscriber.endpoint == endpoint for k in self.subscriptions) if endpoint else False,
            "phones": len(self.subscriptions),
            "quiet_after_key": self.config.quiet_after_key,
            "results": [asdict(r) for r in reversed(self.results[-10:])],
        }

    # -- sending ------------------------------------------------------------------------
    def push(self, message: dict[str, Any], wait: str = "", *, again: bool = False) -> None:
        """Push ``message`` (title, body, url, pane...) to every subscription, beside the loop; each result is kept and told.

        ``wait``: the request the agent waited on when it was rung ("" when
        not known): a push held back goes only if the agent still waits on it.
        """
        if not self.subscriptions:
            return
        task = asyncio.get_running_loop().create_task(self.send(message, wait, again=again), name="web push")
        self._tasks.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("web push failed", exc_info=task.exception())

    async def send(self, message: dict[str, Any], wait: str = "", *, again: bool = False) -> list[Result]:
        """The push, to each subscription, or held back while the user is at a headspace terminal (then pushed when the quiet ends, if it still waits); the results.

        ``again``: a held push, its quiet over: held once more (said once, the
        first time) if a key was pressed meanwhile.
        """
        title, pane = str(message.get("title", ""))[:WORDS_MAX], str(message.get("pane", ""))
        now = self.clock()
        since = self.since_key()
        quiet = self.config.quiet_after_key
        if quiet > 0 and since is not None and since < quiet:
            self._hold(message, wait, quiet - since)
            if again:
                return []
            why = f"you pressed a key at a headspace terminal {since:.0f} s ago: pushed in {quiet - since:.0f} s if it still waits then"
            results = [Result(now, SUPPRESSED, why, title, pane)]
        elif (key := self.key()) is None:
            results = [Result(now, FAILED, f"no push key: {self.problem}", title, pane)]
        else:
            body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
            outcomes = await asyncio.gather(*(self._one(key, kept.subscriber, body, title, pane) for kept in list(self.subscriptions)), return_exceptions=True)
            results = [r if isinstance(r, Result) else Result(now, FAILED, f"the push could not be made: {type(r).__name__}", title, pane) for r in outcomes]
            for outcome in outcomes:
                if not isinstance(outcome, Result):
                    log.error("web push failed", exc_info=outcome)
        for result in results:
            self._told(result)
        self.told()
        if any(r.outcome == GONE for r in results):
            gone = {r.service for r in results if r.outcome == GONE}
            log.info("web push: %d subscription(s) the push service no longer has were dropped (%s)", len(gone), ", ".join(sorted(gone)))
        self._save()
        return results

    def _hold(self, message: dict[str, Any], wait: str, delay: float) -> None:
        """Push ``message`` when the quiet after a key ends (the newest held for its agent), if it still waits on ``wait`` then."""
        pane = str(message.get("pane", ""))
        earlier = self._held.pop(pane, None)
        if earlier is not None:
            earlier.cancel()
        self._held[pane] = asyncio.get_running_loop().call_later(max(0.0, delay) + HELD_MARGIN, self._due, message, wait)

    def _due(self, message: dict[str, Any], wait: str) -> None:
        pane = str(message.get("pane", ""))
        self._held.pop(pane, None)
        if not self.still(pane, wait):
            log.info("web push: held for %s, no longer waiting: not pushed", pane or "?")
            return
        self.push(message, wait, again=True)

    async def _one(self, key: VapidKey, subscriber: Subscriber, body: bytes, title: str, pane: str) -> Result:
        import aiohttp

        from .push_crypto import encrypt

        host = urlsplit(subscriber.endpoint).hostname or "?"
        now = self.clock()
        try:
            sealed = encrypt(body, subscriber.p256dh, subscriber.auth)
        except ValueError as exc:
            return Result(now, FAILED, str(exc), title, pane, host)
        headers = {
            "Authorization": key.authorization(subscriber.endpoint, now, self.config.contact or SUBJECT),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(TTL),
            "Urgency": "high",
            # One push per agent kept by a push service for a phone that is off: the newest replaces the older.
            "Topic": hashlib.sha256(pane.encode()).hexdigest()[:32],
        }
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=SEND_TIMEOUT))
        try:
            async with self._session.post(subscriber.endpoint, data=sealed, headers=headers, allow_redirects=False) as response:
                said = clean((await response.content.read(500)).decode("utf-8", "replace"), 200)
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return Result(now, FAILED, f"the push service could not be reached: {type(exc).__name__} {clean(str(exc), 150)}".strip(), title, pane, host)
        if status in (200, 201, 202):
            return Result(now, SENT, "", title, pane, host)
        if status in (404, 410):
            self.subscriptions = [k for k in self.subscriptions if k.subscriber.endpoint != subscriber.endpoint]
            return Result(now, GONE, f"the push service no longer has this subscription (HTTP {status}): that phone turns notifications on again", title, pane, host)
        return Result(now, FAILED, f"the push service said HTTP {status}{': ' + said if said else ''}", title, pane, host)

    def _told(self, result: Result) -> None:
        self.results = [*self.results[-(RESULTS_KEPT - 1) :], result]
        (log.info if result.outcome in (SENT, SUPPRESSED) else log.warning)("web push %s: %s %s", result.outcome, result.title, result.why)
        self.record({"kind": "push", "outcome": result.outcome, "why": result.why, "title": result.title, "pane": result.pane, "service": result.service})

    async def close(self) -> None:
        for held in self._held.values():
            held.cancel()
        self._held.clear()
        for task in list(self._tasks):
            task.cancel()
        if self._session is not None:
            await self._session.close()
            self._session = None


def message(title: str, body: str, pane: str, *, request: str = "", answers: bool = False) -> dict[str, Any]:
    """A push's words and where it leads: the agent's card (``url``), and for a plain permission its request and Approve and Deny."""
    said: dict[str, Any] = {"title": clean(title, WORDS_MAX), "body": clean(body, WORDS_MAX), "pane": pane, "tag": f"headspace {pane}", "url": f"/#agent={quote(pane, safe='@')}" if pane else "/"}
    if answers and request:
        said["request"] = request
        said["answers"] = ["approve", "deny"]
    return said


def _kept(item: Any) -> Kept | None:
    try:
        return Kept(Subscriber(str(item["endpoint"]), str(item["p256dh"]), str(item["auth"])).checked(), float(item.get("added", 0)), str(item.get("browser", "")))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _result(item: Any) -> Result | None:
    try:
        return Result(float(item["at"]), str(item["outcome"]), str(item["why"]), str(item["title"]), str(item.get("pane", "")), str(item.get("service", "")))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def read_results(path: Path) -> tuple[int, list[Result]] | None:
    """The phones subscribed and the last results kept at ``path`` (for ``headspace doctor``); None when nothing is kept."""
    try:
        data = json.loads(read_regular(path, STORE_MAX))
    except (OSError, Unreadable, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    results = [r for r in (_result(item) for item in _listed(data, "results")) if r is not None]
    return len(_listed(data, "subscriptions")), results


def _listed(data: dict, name: str) -> list:
    """``data[name]`` when it is a list, else [] (a file edited by hand is read as far as it makes sense)."""
    value = data.get(name)
    return value if isinstance(value, list) else []
