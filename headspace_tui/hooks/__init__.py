"""Claude Code hooks: the tiny program Claude runs, its settings, and the spool it fills.

* ``program.py`` is run by Claude for every hook event (``python -S
  program.py``).  It is standalone on purpose: it imports nothing from this
  package, so it starts in milliseconds and cannot break when headspace is
  upgraded or half-installed.  Nothing imports it.
* ``settings.py`` adds (and removes) headspace's entries in a Claude
  ``settings.json`` without disturbing the user's own hooks.
* ``spool.py`` reads the spool the program writes and turns events into
  ``Observation`` values.
"""
