"""The audit trail: writers.py records each action (in its transaction, or a file written
ahead); trail.py reads the latest records back. Below actions and the load generator."""
