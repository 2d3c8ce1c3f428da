"""The service: every host watched, its agents kept current, and what a front end may ask (``facade.py``)."""
