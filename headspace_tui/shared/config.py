"""User settings: a small TOML file, validated, with one clear error per mistake.

Where: ``$XDG_CONFIG_HOME/headspace/config.toml`` (``~/.config/...``), or
``--config FILE``.  A missing file means the defaults; a malformed one is an
error that names the file and the problem, never a traceback.

Example::

    nudge_text = "continue"
    layout = "auto"            # auto | side | stacked
    theme = "headspace-dark"   # or -light, -high-contrast, -16, a Textual theme, or your own
    idle_grace = 5.0           # seconds a less trusted "idle" must hold
    notify = "osc"             # osc (OSC 9 + bell) | osc777 (OSC 777 + bell) | bell | none
    notify_states = ["permission", "question", "plan", "input", "error", "limited"]
    desktop_notify = false     # also notify-send, when headspace runs on your desktop
    notify_blocked = true      # ring once per burst when auto mode blocks an agent's call
    notify_command = ["ntfy", "publish", "my-topic"]  # also run per notification (no shell;
                               # the text in HEADSPACE_TITLE, HEADSPACE_BODY, HEADSPACE_TEXT, HEADSPACE_AGENTS)
    change_column = true       # the table's Change column (this turn's "+12 −3 · 2 files"); D hides it
    context_column = true      # the table's Ctx column (the share of its model's window in use); % hides it
    go_on_after_limit = false  # when a rate limit that stopped an agent resets, send it nudge_text (once; never into a draft)

    [keys]
    approve = "y"
    deny = "n"

    [web]                           # the phone page, on whenever the service starts (headspace web)
    listen = "127.0.0.1:8765"       # loopback by default; another address needs tls (or insecure_network)
    token_file = "~/.config/headspace/web-token"  # optional: the same token across restarts
    read_only = false               # true: the page shows and answers nothing

    [push]                          # the page's "Notify this phone" (Web Push; needs the page over TLS)
    contact = "mailto:you@example.com"  # who runs this server, for the push services
    quiet_after_key = 60            # no push within this many seconds of a key at a headspace terminal (0: always)
    services = []                   # a self-hosted push service's origin, beyond the browsers' own
    answers = true                  # Approve and Deny on a plain permission's notification (false: a tap opens the card)

    [hosts.box]                     # a remote host, shown as "box"
    destination = "dev@box.example" # anything ssh accepts (default: the table name)
    tmux_socket_name = "work"       # optional: tmux -L there (or tmux_socket_path, as -S)
    ssh_config = "~/.ssh/work.conf" # optional: ssh -F (default: ssh's own ~/.ssh/config)
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .paths import config_dir
from .safe_files import Unreadable, read_regular

# Action name -> default key.  Digits 1-9 always pick options.
DEFAULT_KEYS: dict[str, str] = {
    "approve": "y",
    "deny": "n",
    "reply": "r",
    "nudge": "c",
    "interrupt": "x",  # deliberate: Esc only closes headspace's own overlays
    "submit": "S",  # a multi-select question's ticks (Enter is jump; in Claude it only toggles a box); capital, as A: it acts on the whole dialog
    "input_mode": "i",  # left with Ctrl+], which is not remappable: it must never be a key the pane could want
    "jump": "enter",
    "filter": "slash",
    "toggle_layout": "l",
    "why": "e",
    "timeline": "t",
    "diff": "d",  # what the agent changed, this turn or since it started
    "toggle_changes": "D",  # the table's Change column
    "toggle_context": "percent_sign",  # the table's Ctx column
    "next_waiting": "tab",
    "previous_waiting": "shift+tab",
    "snooze": "z",
    "help": "question_mark",
    "quit": "q",
}
LAYOUTS = ("auto", "side", "stacked")
# How an agent that starts needing you is announced (see notifications/decide.py for why each).
NOTIFY_MODES = ("osc", "osc777", "bell", "none")
# The states that need you (model.NEEDS_YOU; config sits below model, so named here).
NOTIFY_STATES = ("permission", "question", "plan", "input", "error", "limited")
MAX_CONFIG = 1 << 20
MAX_COMMAND_WORDS = 64


_HOST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


def valid_host_name(name: str) -> bool:
    """A host's table name: letters, digits, ``.``, ``_``, ``-`` (it becomes part of pane addresses: ``%3@box``)."""
    return bool(_HOST_NAME.match(name)) and name != "local"


@dataclass(frozen=True)
class HostSpec:
    """A remote host as ``[hosts.NAME]`` or ``--host DEST`` gives it."""

    name: str  # shown in the table; part of every pane address (``%3@box``)
    destination: str  # anything ``ssh`` accepts: an alias, user@host, host
    socket_name: str | None = None  # tmux -L there
    socket_path: str | None = None  # tmux -S there
    ssh_config: str | None = None  # ssh -F FILE (None: ssh's own, ~/.ssh/config)


def host_from_destination(destination: str, ssh_config: str | None = None) -> HostSpec:
    """``--host DEST``: named after the destination's host part (``dev@box.example:22`` → ``box.example``)."""
    name = destination.rpartition("@")[2].split(":")[0] or destination
    name = re.sub(r"[^A-Za-z0-9._-]", "-", name).strip("-.")[:40] or "remote"
    return HostSpec(name if valid_host_name(name) else f"h-{name}"[:40], destination, ssh_config=ssh_config)


@dataclass(frozen=True)
class WebConfig:
    """``[web]``: where the phone page listens, its token's file, and whether it may answer."""

    listen: str = "127.0.0.1:8765"
    token_file: str = ""
    read_only: bool = False
    tls_cert: str = ""
    tls_key: str = ""
    insecure_network: bool = False


_WEB_KEYS = {"listen", "token_file", "read_only", "tls_cert", "tls_key", "insecure_network"}


@dataclass(frozen=True)
class PushConfig:
    """``[push]``: the phone page's Web Push: who runs it, which push services it may post to, when you count as at a headspace."""

    contact: str = ""  # mailto: or https: for the push services ("" for a placeholder: web/push_crypto.py SUBJECT)
    services: tuple[str, ...] = ()  # push services' origins beyond the browsers' own (a self-hosted one), such as https://push.example.com
    quiet_after_key: float = 60.0  # seconds after a key at a headspace client in which no push is sent (0: always push)
    answers: bool = True  # a plain permission's notification carries Approve and Deny (false: a tap only opens the card)


_PUSH_KEYS = {"contact", "services", "quiet_after_key", "answers"}
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def parse_push(given: object, where: str) -> PushConfig:
    if given is None:
        return PushConfig()
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: [push] must be a table")
    unknown = sorted(set(given) - _PUSH_KEYS)
    if unknown:
        raise ConfigError(f"{where}: [push] has unknown setting {unknown[0]!r} (known: {', '.join(sorted(_PUSH_KEYS))})")
    contact = given.get("contact", "")
    if not isinstance(contact, str) or (contact and not re.fullmatch(r"(mailto:[^\s@]+@[^\s@]+|https://\S+)", contact)) or len(contact) > 200:
        raise ConfigError(f"{where}: [push] contact must be mailto:you@example.com or an https:// address")
    services = given.get("services", [])
    if not isinstance(services, list) or not all(isinstance(s, str) and _ORIGIN.fullmatch(s.rstrip("/")) for s in services):
        raise ConfigError(f'{where}: [push] services must be a list of origins, such as ["https://push.example.com"]')
    quiet = given.get("quiet_after_key", PushConfig.quiet_after_key)
    if not _is_number(quiet) or not 0 <= quiet <= 3600:
        raise ConfigError(f"{where}: [push] quiet_after_key must be a number of seconds between 0 and 3600")
    answers = given.get("answers", PushConfig.answers)
    if not isinstance(answers, bool):
        raise ConfigError(f"{where}: [push] answers must be true or false")
    return PushConfig(contact, tuple(s.rstrip("/").lower() for s in services), float(quiet), answers)


def parse_web(given: object, where: str) -> WebConfig | None:
    if given is None:
        return None
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: [web] must be a table")
    unknown = sorted(set(given) - _WEB_KEYS)
    if unknown:
        raise ConfigError(f"{where}: [web] has unknown setting {unknown[0]!r} (known: {', '.join(sorted(_WEB_KEYS))})")
    for key in ("listen", "token_file", "tls_cert", "tls_key"):
        if not isinstance(given.get(key, ""), str):
            raise ConfigError(f"{where}: [web] {key} must be a string")
    for key in ("read_only", "insecure_network"):
        if not isinstance(given.get(key, False), bool):
            raise ConfigError(f"{where}: [web] {key} must be true or false")
    if bool(given.get("tls_cert")) != bool(given.get("tls_key")):
        raise ConfigError(f"{where}: [web] tls_cert and tls_key go together")
    return WebConfig(**{key: given[key] for key in given})


class ConfigError(Exception):
    """A config problem, said in one line that names the file."""


@dataclass(frozen=True)
class Config:
    nudge_text: str = "continue"
    layout: str = "auto"
    keys: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_KEYS))
    confirm_timeout: float = 5.0
    # A less trusted "idle" must hold this long with no new output before it is believed.
    idle_grace: float = 5.0
    theme: str = ""  # "" = headspace-dark (headspace-16 on a 16-colour terminal), or the palette's last choice
    notify: str = "osc"
    notify_states: tuple[str, ...] = NOTIFY_STATES
    desktop_notify: bool = False  # off: a terminal that shows OSC notifications would show each twice
    notify_blocked: bool = True  # ring (once per burst) when auto mode blocks a call
    notify_command: tuple[str, ...] = ()  # a program run per notification (argv, no shell); () for none
    hosts: tuple[HostSpec, ...] = ()  # remote hosts ([hosts.NAME])
    web: WebConfig | None = None  # [web]: the phone page is on whenever the service starts
    push: PushConfig = field(default_factory=PushConfig)  # [push]: the page's Web Push
    change_column: bool = True  # the table shows each agent's change this turn (when some agent changed something)
    context_column: bool = True  # the table shows each agent's context, % of its model's window (when some agent's is known)
    go_on_after_limit: bool = False  # the service nudges an agent its rate limit stopped, once, when the limit resets


def default_path(env: os._Environ | dict = os.environ) -> Path:
    return config_dir(env) / "config.toml"


def load_config(path: Path | None = None) -> Config:
    """Read and validate the config; the defaults when the default file does not exist."""
    explicit = path is not None
    path = path or default_path()
    try:
        raw = read_regular(path, MAX_CONFIG, follow=True).decode("utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file {path} does not exist") from None
        return Config()
    except Unreadable as exc:
        raise ConfigError(f"config: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read") from None
    return parse_config(data, str(path))


def _is_number(value: object) -> bool:
    """A TOML integer or float; ``true`` is a bool, not 1."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


FLAGS = ("desktop_notify", "notify_blocked", "change_column", "context_column", "go_on_after_limit")  # the settings that are true or false


def _flag(data: dict, key: str, where: str) -> bool:
    """The true-or-false setting ``key`` (its default when not set); ConfigError for anything else."""
    value = data.get(key, getattr(Config, key))
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be true or false")
    return value


def parse_config(data: dict, where: str = "config") -> Config:
    known = {
        "nudge_text", "layout", "keys", "confirm_timeout", "idle_grace", "theme", "notify", "notify_states", "desktop_notify", "notify_blocked",
        "notify_command", "hosts", "web", "push", "change_column", "context_column", "go_on_after_limit",
    }  # fmt: skip
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(known))})")
    nudge = data.get("nudge_text", Config.nudge_text)
    if not isinstance(nudge, str) or not nudge.strip():
        raise ConfigError(f"{where}: nudge_text must be a non-empty string")
    layout = data.get("layout", Config.layout)
    if layout not in LAYOUTS:
        raise ConfigError(f"{where}: layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    timeout = data.get("confirm_timeout", Config.confirm_timeout)
    if not _is_number(timeout) or not 0.5 <= timeout <= 60:
        raise ConfigError(f"{where}: confirm_timeout must be a number of seconds between 0.5 and 60")
    grace = data.get("idle_grace", Config.idle_grace)
    if not _is_number(grace) or not 0 <= grace <= 600:
        raise ConfigError(f"{where}: idle_grace must be a number of seconds between 0 and 600")
    theme = data.get("theme", Config.theme)
    if not isinstance(theme, str) or len(theme) > 64:
        raise ConfigError(f"{where}: theme must be a theme's name")
    notify = data.get("notify", Config.notify)
    if notify not in NOTIFY_MODES:
        raise ConfigError(f"{where}: notify must be one of {', '.join(NOTIFY_MODES)}, not {notify!r}")
    states = data.get("notify_states", list(Config.notify_states))
    if not isinstance(states, list) or not all(isinstance(s, str) for s in states):
        raise ConfigError(f'{where}: notify_states must be a list of states, such as ["permission", "question"]')
    for state in states:
        if state not in NOTIFY_STATES:
            raise ConfigError(f"{where}: notify_states has {state!r}, not a state that needs you (known: {', '.join(NOTIFY_STATES)})")
    flags = {key: _flag(data, key, where) for key in FLAGS}
    command = data.get("notify_command", list(Config.notify_command))
    if not isinstance(command, list) or not all(isinstance(word, str) and "\0" not in word for word in command) or (command and not command[0].strip()) or len(command) > MAX_COMMAND_WORDS:
        raise ConfigError(f'{where}: notify_command must be a list of words, the program first, such as ["ntfy", "publish", "my-topic"] (no shell)')
    keys = dict(DEFAULT_KEYS)
    given = data.get("keys", {})
    if not isinstance(given, dict):
        raise ConfigError(f'{where}: [keys] must be a table of action = "key"')
    for action, key in given.items():
        if action not in DEFAULT_KEYS:
            raise ConfigError(f"{where}: [keys] has unknown action {action!r} (known: {', '.join(DEFAULT_KEYS)})")
        if not isinstance(key, str) or not key or key.isdigit():
            raise ConfigError(f"{where}: [keys] {action} must be a key name other than a digit")
        keys[action] = key
    clashes = {k for k in keys.values() if list(keys.values()).count(k) > 1}
    if clashes:
        raise ConfigError(f"{where}: [keys] binds {sorted(clashes)[0]!r} to more than one action")
    return Config(
        nudge_text=nudge,
        layout=layout,
        keys=keys,
        confirm_timeout=float(timeout),
        idle_grace=float(grace),
        theme=theme.strip(),
        notify=notify,
        notify_states=tuple(dict.fromkeys(states)),
        desktop_notify=flags["desktop_notify"],
        notify_blocked=flags["notify_blocked"],
        notify_command=tuple(command),
        hosts=parse_hosts(data.get("hosts", {}), where),
        web=parse_web(data.get("web"), where),
        push=parse_push(data.get("push"), where),
        change_column=flags["change_column"],
        context_column=flags["context_column"],
        go_on_after_limit=flags["go_on_after_limit"],
    )


_HOST_KEYS = {"destination", "tmux_socket_name", "tmux_socket_path", "ssh_config"}


def parse_hosts(given: object, where: str) -> tuple[HostSpec, ...]:
    """``[hosts.NAME]`` tables: each one a remote host, checked (a destination never starts with ``-``: ssh would read an option)."""
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: [hosts] must hold tables like [hosts.box]")
    hosts = []
    for name, table in given.items():
        if not valid_host_name(name):
            raise ConfigError(f"{where}: [hosts.{name}]: a host's name is letters, digits, '.', '_' or '-' (and not 'local')")
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [hosts.{name}] must be a table")
        unknown = sorted(set(table) - _HOST_KEYS)
        if unknown:
            raise ConfigError(f"{where}: [hosts.{name}] has unknown setting {unknown[0]!r} (known: {', '.join(sorted(_HOST_KEYS))})")
        for key, value in table.items():
            if not isinstance(value, str) or not value.strip() or "\n" in value or "\0" in value:
                raise ConfigError(f"{where}: [hosts.{name}] {key} must be a non-empty string on one line")
        destination = str(table.get("destination") or name)
        if destination.startswith("-"):
            raise ConfigError(f"{where}: [hosts.{name}] destination must not start with '-'")
        if "tmux_socket_name" in table and "tmux_socket_path" in table:
            raise ConfigError(f"{where}: [hosts.{name}] takes tmux_socket_name or tmux_socket_path, not both")
        ssh_config = table.get("ssh_config")
        hosts.append(
            HostSpec(
                name,
                destination,
                socket_name=table.get("tmux_socket_name"),
                socket_path=table.get("tmux_socket_path"),
                ssh_config=os.path.expanduser(ssh_config) if ssh_config else None,
            )
        )
    return tuple(hosts)
