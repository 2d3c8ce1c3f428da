"""Telling the user an agent needs them: when (``decide.py``) and how it gets out (``deliver.py``)."""
