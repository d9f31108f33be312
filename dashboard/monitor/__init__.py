"""The monitor: snapshots of a queue and of the sessions around it, by ordinary reads only.

Every statement comes from queries/monitor/. The connection is expected to come from
db.connect_monitor (autocommit, read-only, with timeouts); nothing here takes a row
lock or anything stronger than AccessShareLock.

    snap = collect(conn, spec)                 # one snapshot, every section read once
    monitor = Monitor(spec, interval=1.0)      # the dashboard: sections paced by cost
    snap = monitor.poll(conn)
"""

from dashboard.monitor.poll import Monitor, collect
from dashboard.monitor.sessions import ROW_LIMIT, wait_chain
from dashboard.queue_sql.parts import queue_parts

__all__ = ["ROW_LIMIT", "Monitor", "collect", "queue_parts", "wait_chain"]
