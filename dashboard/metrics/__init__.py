"""Queue metrics: families.py (the metric families of a snapshot), exporter.py (the
Prometheus endpoint), checks.py (`queuetop check`'s thresholds)."""
