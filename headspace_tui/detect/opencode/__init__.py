"""opencode (sst/opencode, npm ``opencode-ai``), read like Claude: screen first.  Filled in below."""

from ..family import Family
from .screen import classify, classify_capture, is_opencode_command

__all__ = ["classify", "classify_capture", "is_opencode_command"]
