"""Rules that answer for you: scoped, time-boxed, tried on your history first, every answer audited (docs/rules.md)."""
