"""How long each kind of request to the service may take, in one place: every front end and the service read them here.

A call's declaration names its class (call.py: ``ASK``, ``SLOW``,
``SETTLE``, ``LIFECYCLE``); these are the seconds.  Two front ends ask questions with
different patience: the terminal UI asks while the user waits for a key to
answer (off its loop, then says "not answering"), the command line while a
shell waits.  An answer has two deadlines, one inside the other: the
service waits for its final report (``ANSWER``; the answerer's own
deadline comes first), and a client that asked over the socket waits that
long and a margin for the reply's way back (``ANSWER_ASKED``).
"""

from __future__ import annotations

QUESTION = 2.0  # seconds a terminal UI's question may take (the service answers from memory)
REQUEST = 5.0  # seconds one request of the command line's may take (answered from memory too)
SLOW = 30.0  # seconds for what runs tmux or git there: a jump, starting an agent
# Seconds a stop or a restart may take there: Claude's screen held still, /exit typed into the box, its effect confirmed
# and Claude gone (up to EXIT_WAIT each, service/watching/lifecycle.py), a restart's new window running its agent
# (START_WAIT), tmux's answers.
LIFECYCLE = 60.0
SETTLE = 10.0  # seconds the service may take to finish its first look before it answers rows
ANSWER = 30.0  # seconds an answer may take to its final report, in the service
ANSWER_ASKED = ANSWER + 10.0  # seconds a client that asked an answer over the socket waits for its reply
START = 15.0  # seconds a service just started may take to answer its hello
