"""What acts for the user while they are away, beside the watcher.

The rules that answer (rule_answers.py: judging and answering; rule_book.py
the rules file; rule_life.py a rule's ttl, uses and pauses; rule_ledger.py
what they did, and pause, resume, revoke; rule_state.py the event log's read
model; rule_calls.py the calls they judge) and the nudge after a usage limit
(limit_resume.py).
"""
