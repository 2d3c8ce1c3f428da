"""The phone page: the resident service's agents in a browser, answered through the facade (server.py)."""
