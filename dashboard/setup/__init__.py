"""Schema setup: the demo queue and the audit table (schema.py)."""
