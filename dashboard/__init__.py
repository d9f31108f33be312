"""queuetop: a terminal dashboard for PostgreSQL tables used as job queues."""

__version__ = "0.1.0"
