"""The one API every front end speaks: the Facade Protocol and its value types, every call on the wire, the data's JSON.

``facade.py`` holds the Protocol and its vocabulary; ``call.py``,
``calls.py``, ``own_calls.py`` and ``page_calls.py`` declare every route
once; ``codec.py`` writes the facade's data as JSON.  Imported by every
front end and by the service; it loads none of the watcher (an
import-linter contract says so), so a client holds it cheaply.
"""
