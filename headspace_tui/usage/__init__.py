"""What an agent's work costs and how much room it has left: tokens, context, an estimated cost, its rate limit.

Pure data and the price table (``prices.json``, dated); the numbers come
from each family's own files, folded per agent in ``service/records/usage_tally.py``.
"""
