"""An error whose words say a rate limit stopped the agent reads ``limited`` (the words: usage/limits.py).

One rule for every reader of a reading: the live store and ``headspace
status``'s own look make their agents with it (service/scan.py), and the
answer guard compares the screen the user saw with the pane now through it
(answering/keys.py: a reader of the pane itself says ``error`` there).
"""

from __future__ import annotations

from dataclasses import replace

from ..model import AgentState, Observation
from ..usage.limits import limited


def as_limited(observation: Observation) -> Observation:
    if observation.state is AgentState.ERROR and limited(observation.error):
        return replace(observation, state=AgentState.LIMITED)
    return observation
