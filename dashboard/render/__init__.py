"""Snapshots as text: report.py (plain text and JSON), who_holds.py (row locks in words),
fit.py (a line of labelled numbers fitted into a width)."""
