"""What was observed of a job or a backend before a guarded change (see records.py)."""
