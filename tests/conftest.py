"""Fixtures shared by all tests: the real Claude binary, a scripted API, private tmux.

Nothing here touches the user's own tmux server, ``~/.claude`` or
``~/.config``: every tmux command goes to a private ``-L`` socket started with
an explicit environment, and every Claude session gets a temporary HOME.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import signal
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.claude import find_claude
from tests.harness.fake_api import FakeAnthropicAPI
from tests.harness.hosted import TRANSPORTS
from tests.harness.npm_binary import require
from tests.harness.session import ClaudeSession
from tests.harness.tmux import PrivateTmux, temp_server

pytest_plugins = ["tests.harness.ordering"]  # the long tests first in each stage (tests/long_tests.txt)

# What a test needs, read from its module: the markers that select tests by it
# (``pytest -m "not e2e"`` is the fast stage: no real agent binary, sshd or
# browser).  Read from the source rather than declared by hand, so a new
# live test cannot forget its marker and slip into the fast stage.
NEEDS = {
    "claude": re.compile(r"\bclaude_session\b|\bclaude_binary\b|\bClaudeSession\b|harness\.claude import|harness\.session import"),
    "agents": re.compile(r"\b(codex|gemini|opencode)_binary\b|\bfind_(codex|gemini|opencode)\(|\brequire_(gemini|opencode|copilot|qwen)\(|\b(Codex|Gemini|Opencode)Session\b"),
    "sshd": re.compile(r"harness\.sshd import|harness\.netns import|\brunning_sshd\b|\bSshd\("),
    "browser": re.compile(r"\bplaywright\b|\bchromium\b"),
}
_needs_of: dict[Path, list[str]] = {}


def _needs(path: Path) -> list[str]:
    if path not in _needs_of:
        text = path.read_text(encoding="utf-8")
        _needs_of[path] = [name for name, pattern in NEEDS.items() if pattern.search(text)]
    return _needs_of[path]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with what it needs, and ``e2e`` for every test under tests/e2e or needing a real binary."""
    e2e_dir = Path(__file__).parent / "e2e"
    marks: dict[str, list[str]] = {}  # per module, worked out once: a module holds up to thousands of tests
    for item in items:
        where = str(item.path)
        if where not in marks:
            path = Path(where)
            needs = _needs(path)
            marks[where] = needs + ["e2e"] if needs or e2e_dir in path.parents else needs
        for name in marks[where]:
            item.add_marker(name)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The live stage (tests/run sets HEADSPACE_LIVE_ONLY) collects only the modules that hold live tests.

    Every xdist worker collects what it is given: the whole tree is 17,000
    tests, ten seconds of a core per worker, to keep 300 of them. A module is
    left out exactly when ``pytest_collection_modifyitems`` would mark none of
    its tests ``e2e`` (not under tests/e2e, needing no real binary).
    """
    if not os.environ.get("HEADSPACE_LIVE_ONLY") or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if Path(__file__).parent / "e2e" in collection_path.parents or _needs(collection_path):
        return None
    return True


# benchmarks/suite_cpu.py asks each worker which test ran when, to charge it the CPU of what it
# started: one line per test (worker pid, test, start, end), appended to the file it names.
_TIMELINE = os.environ.get("HEADSPACE_SUITE_TIMELINE")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    began = time.time()
    yield
    if _TIMELINE:
        with open(_TIMELINE, "a", encoding="utf-8") as timeline:
            timeline.write(f"{os.getpid()}\t{item.nodeid}\t{began:.3f}\t{time.time():.3f}\n")


APP_BUILDERS = ("app_of", "make_app", "demo_app")  # tests/ui/apps.py: what builds an app on a service the test holds
LIVE_TRANSPORT = "http"  # the one the tests with real agents run over in CI (pytest_generate_tests)
# HEADSPACE_LIVE_TRANSPORTS=both: the tests with real agents run over both as well (docs/testing.md: CI's time says why not there).
LIVE_TRANSPORTS = TRANSPORTS if os.environ.get("HEADSPACE_LIVE_TRANSPORTS") == "both" else (LIVE_TRANSPORT,)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that builds an app with tests/ui/apps.py runs twice: in process, and over HTTP to a resident service."""
    if "app_transport" not in metafunc.fixturenames or getattr(metafunc.module, "OWN_TRANSPORTS", False):
        return  # OWN_TRANSPORTS: the module runs each test over both ways itself
    fixtures = [defs[-1].func for name in metafunc.fixturenames if (defs := metafunc._arg2fixturedefs.get(name))]
    if any(_builds_app(func) for func in (metafunc.function, *fixtures)):
        path = Path(str(metafunc.definition.path))
        live = bool(_needs(path)) or Path(__file__).parent / "e2e" in path.parents
        # A test with real agents runs over HTTP, as users run the app: both would add a quarter to the live stage.
        metafunc.parametrize("app_transport", list(LIVE_TRANSPORTS) if live else TRANSPORTS, indirect=True)


def _builds_app(func: Any, depth: int = 3) -> bool:
    """Whether ``func`` calls an app builder, itself or through the tests' own functions it calls (``depth`` calls down)."""
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None or not str(getattr(func, "__module__", "")).startswith("tests.") or str(func.__module__) == "tests.ui.apps":
        return False
    for name in _names(code):
        if name in APP_BUILDERS:
            return True
        helper = func.__globals__.get(name)
        if depth and inspect.isfunction(helper) and _builds_app(helper, depth=depth - 1):
            return True
    return False


def _names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the functions within it refer to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


@pytest.fixture(autouse=True)
def app_transport(request: pytest.FixtureRequest) -> Iterator[str]:
    """The transport apps.py's ``app_of`` uses for this test (``pytest_generate_tests``); in process where not parametrized."""
    mode = getattr(request, "param", "in-process")
    if mode == "in-process":
        yield mode  # apps.py is left unloaded by the tests that build no app
        return
    from tests.harness import hosted
    from tests.ui import apps

    apps.transport = mode
    try:
        yield mode
    finally:
        apps.transport = "in-process"
        hosted.close_all()  # its server thread and folder never outlive the test, however it ended


@pytest.fixture(scope="session", autouse=True)
def _private_xdg_dirs() -> Iterator[None]:
    """headspace's own runtime, state and config folders, for the whole run, in a temp dir.

    The app takes its send locks, the event log and its log file from the XDG
    folders: a test must never write into the user's. (Tests that need a HOME
    of their own still set it themselves.)
    """
    root = tempfile.mkdtemp(prefix="hs-xdg-")
    saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")}
    for key in saved:
        path = os.path.join(root, key.lower())
        os.mkdir(path, 0o700)
        os.environ[key] = path
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A private temp folder with a short path (``/tmp/hs-…``), for Unix sockets: their paths end at 108 bytes.

    pytest's ``tmp_path`` grows with the test's name and, under xdist, the worker's folder.
    """
    root = Path(tempfile.mkdtemp(prefix="hs-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def claude_binary() -> str:
    """The pinned Claude Code binary; installed into a cache on first use.

    Locally a missing binary skips the live tests with the reason; with
    ``CI=true`` it fails them, so CI can never pass without testing for real.
    """
    return require(find_claude, "Claude Code")


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI() as api:
        yield api


@pytest.fixture
def private_tmux() -> Iterator[PrivateTmux]:
    with temp_server("hs-tmux-") as (_root, server):
        yield server


@pytest.fixture
def claude_session(claude_binary: str, fake_api: FakeAnthropicAPI, private_tmux: PrivateTmux, tmp_path: Path) -> Iterator[Callable[..., ClaudeSession]]:
    """A factory: ``claude_session(script, width=.., inline=.., ...)`` starts Claude at its prompt.

    Every session shares the test's scripted API and private tmux server, and
    gets its own HOME and work dir under ``tmp_path``.
    """
    started: list[ClaudeSession] = []

    def start(script: Any = (), *, launch: bool = True, name: str | None = None, **options: Any) -> ClaudeSession:
        if script:
            fake_api.set_script(script)
        name = name or f"agent{len(started)}"
        session = ClaudeSession(private_tmux, fake_api, claude_binary, tmp_path / name, name=name, **options)
        started.append(session)
        if launch:
            session.launch()
        else:
            session.start_shell()
        return session

    yield start
    for session in started:
        session.close()


@pytest.fixture
def services() -> Iterator[list[int]]:
    """The pids of the services a test started: each one still alive at the end is ended (ours, by its id)."""
    from tests.e2e.test_resident_service import alive, wait_gone

    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGTERM)
            if not wait_gone(pid, 10):
                os.kill(pid, signal.SIGKILL)
