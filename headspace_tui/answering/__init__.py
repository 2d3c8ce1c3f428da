"""Answering agents, for every front end.

``policy``: which answer fits which state; ``desk``: Claude's answer hook
beside the rows; ``keys``: the guarded send by keys; ``answerer``: one
answer at a time per agent, by hook or keys, reported; ``input_link``: input
mode's keys to one pane, re-checked before each send.
"""
