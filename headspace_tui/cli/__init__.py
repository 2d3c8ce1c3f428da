"""The command line: ``headspace`` and its subcommands (``main.py``), ``doctor``, and starting the app (``launch.py``)."""
