"""One rule per kind of folder (shared/paths.py), read from the environment it is given."""

from __future__ import annotations

import os
from pathlib import Path

from headspace_tui.hooks.spool import spool_dir
from headspace_tui.shared import paths
from headspace_tui.shared.config import default_path as config_path
from headspace_tui.state.eventlog import default_path as events_path


def test_xdg_folders_when_set_and_absolute():
    env = {"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "/r"}
    assert (paths.config_dir(env), paths.state_dir(env), paths.runtime_dir(env)) == (Path("/c/headspace"), Path("/s/headspace"), Path("/r/headspace"))
    assert (config_path(env), events_path(env), spool_dir(env)) == (Path("/c/headspace/config.toml"), Path("/s/headspace/events.db"), Path("/r/headspace/spool"))


def test_a_relative_or_empty_xdg_folder_is_ignored_as_the_spec_says():
    env = {"HOME": "/h", "XDG_CONFIG_HOME": "rel", "XDG_STATE_HOME": "", "XDG_RUNTIME_DIR": "run"}
    assert paths.config_dir(env) == Path("/h/.config/headspace")
    assert paths.state_dir(env) == Path("/h/.local/state/headspace")
    assert paths.runtime_dir(env) == Path(f"/tmp/headspace-{os.getuid()}")
