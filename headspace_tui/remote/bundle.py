"""The probe as it travels: headspace's own reader modules, sent as source through SSH.

``BOOT`` is the small program ``python3 -c`` runs on the remote host: it
reads one JSON line holding these modules' source, makes them importable
under their own names (in memory: nothing is written there), and starts
``probe.serve``.  The modules are the standard-library-only readers that
also run here; ``tests/unit/test_probe_bundle.py`` checks that the list is closed
under their imports, so a new import cannot break remote hosts unnoticed.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache

# In import order: each one's headspace imports come before it.
MODULES = (
    "headspace_tui.shared.safe_files",
    "headspace_tui.shared.peer",
    "headspace_tui.shared.paths",
    "headspace_tui.usage.model",
    "headspace_tui.model",
    "headspace_tui.detect.approval",
    "headspace_tui.detect.sources",
    "headspace_tui.detect.claude.status_files",
    "headspace_tui.detect.turns",
    "headspace_tui.shared.json_lines",
    "headspace_tui.detect.claude.transcript",
    "headspace_tui.shared.proctree",
    "headspace_tui.detect.install",
    "headspace_tui.detect.node_cli",
    "headspace_tui.detect.claude.process",
    "headspace_tui.detect.session_usage",
    "headspace_tui.detect.codex.process",
    "headspace_tui.detect.codex.rollout",
    "headspace_tui.detect.gemini.process",
    "headspace_tui.detect.gemini.chats",
    "headspace_tui.detect.opencode.process",
    "headspace_tui.detect.opencode.records",
    "headspace_tui.detect.copilot.process",
    "headspace_tui.detect.copilot.records",
    "headspace_tui.detect.qwen.process",
    "headspace_tui.detect.qwen.records",
    "headspace_tui.detect.usage_kinds",
    "headspace_tui.hooks.spool",
    "headspace_tui.shared.inotify",
    "headspace_tui.remote.probe_watch",
    "headspace_tui.hooks.settings",
    "headspace_tui.hooks.calls",
    "headspace_tui.hooks.channel",
    "headspace_tui.remote.probe_hooks",
    "headspace_tui.remote.probe_answers",
    "headspace_tui.tmux.identify",
    "headspace_tui.remote.probe_tmux",
    "headspace_tui.changes.model",
    "headspace_tui.changes.unified",
    "headspace_tui.changes.snapshot",
    "headspace_tui.remote.probe_changes",
    "headspace_tui.remote.probe",
)
PACKAGES = (
    "headspace_tui",
    "headspace_tui.shared",
    "headspace_tui.detect",
    "headspace_tui.detect.claude",
    "headspace_tui.detect.codex",
    "headspace_tui.detect.gemini",
    "headspace_tui.detect.opencode",
    "headspace_tui.detect.copilot",
    "headspace_tui.detect.qwen",
    "headspace_tui.hooks",
    "headspace_tui.remote",
    "headspace_tui.tmux",
    "headspace_tui.changes",
    "headspace_tui.usage",
)
MIN_PYTHON = (3, 9)

BOOT = """\
import json, sys, types
sys.stdout.write('{"boot": 1}\\n')
if sys.version_info < (3, 9):
    sys.stdout.write(json.dumps({"fatal": "python3 %d.%d is too old (3.9 or later is needed)" % sys.version_info[:2]}) + "\\n")
    sys.exit(0)
bundle = json.loads(sys.stdin.readline())
for name in bundle["packages"]:
    package = types.ModuleType(name)
    package.__path__ = []
    sys.modules[name] = package
for name, source in bundle["modules"]:
    module = types.ModuleType(name)
    module.__package__ = name.rpartition(".")[0]
    module.__file__ = "<headspace " + name + ">"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
sys.modules["headspace_tui.remote.probe"].serve()
"""


def _source(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"headspace is missing its module {name}")
    with open(spec.origin, encoding="utf-8") as handle:
        return handle.read()


@cache
def bundle_line() -> bytes:
    """The first line the probe reads: every module's source, as one JSON line."""
    payload = {"packages": list(PACKAGES), "modules": [[name, _source(name)] for name in MODULES]}
    return (json.dumps(payload) + "\n").encode()
