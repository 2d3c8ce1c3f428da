"""The resident service: one headspace per user and tmux server, and the way its clients reach it.

``headspace serve`` runs the service (service/facade.py) in a process of its
own, with no Textual, and answers its clients over HTTP on a Unix socket in
the user's runtime folder (``server.py``); ``shared/resident_place.py`` says where that
socket, its lock and its card live; ``client.py`` is how the command line
asks it; ``start.py`` starts it in the background and stops it.
"""
