"""What Claude Code offers beyond its screen, plugged into its ``Family`` record.

Its status files (``status_files.py``), its transcripts (``transcript.py``),
the hooks it runs from its ``settings.json`` (installed by ``hooks/``), and
the answer channel those hooks open.  The core reaches them through
``family.status_files``, ``family.transcripts``, ``family.hooks`` and
``family.answer_channel``, never by importing this folder.
"""

from __future__ import annotations

from ..family import AnswerChannel, Hooks, StatusFiles, Transcripts
from .status_files import STATUS_SOURCES, claude_config_dir, read_statuses, status_observation
from .transcript import TranscriptTail, transcript_path

STATUS_FILES = StatusFiles(folder=claude_config_dir, read=read_statuses, observation=status_observation, sources=STATUS_SOURCES)
TRANSCRIPTS = Transcripts(path=transcript_path, tail=TranscriptTail)
HOOKS = Hooks(settings_folder=claude_config_dir)
ANSWER_CHANNEL = AnswerChannel()
