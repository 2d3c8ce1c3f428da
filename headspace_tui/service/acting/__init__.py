"""What acts for the user while they are away, beside the watcher.

The rules that answer (rule_answers.py, with the rules' state and the calls
they judge) and the nudge after a usage limit (limit_resume.py).
"""
