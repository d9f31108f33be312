"""A queue's SQL parts, composed once for every layer that reads or changes it.

parts.py: the identifiers and expressions of one queue spec (`queue_parts`, `statement`);
advisory.py: advisory locks as a running signal; dead_table.py: the dead-letter table's.
"""
