"""queuetop doctor: what would make a queue cheap to watch and healthy to run.

    report = doctor.examine(conn, spec)     # conn from db.connect_monitor(idle_timeout=False)
    print(report.text()); report.findings   # each Finding carries the SQL that would fix it

Reads the catalog, the statistics, the settings and EXPLAIN plans; never a queue row,
never DDL: a finding's SQL is for a person to read and run.
"""

from __future__ import annotations

import psycopg
from psycopg import errors

from dashboard.config import resolve_table
from dashboard.doctor.findings import Finding, Limits, Report
from dashboard.doctor.indexes import index_findings, read_indexes
from dashboard.doctor.latency_index import latency_findings
from dashboard.doctor.upkeep import (
    fillfactor_findings,
    horizon_findings,
    idle_timeout_findings,
    read_health,
    vacuum_findings,
)
from dashboard.errors import UserError
from dashboard.models import QueueSpec

__all__ = ["Finding", "Limits", "Report", "examine"]


def examine(conn: psycopg.Connection, spec: QueueSpec, limits: Limits | None = None) -> Report:
    """Every check against the validated spec's table and its server."""
    limits = limits or Limits()
    found = resolve_table(conn, spec.table)
    if found is None:
        raise UserError(f"table {spec.table} not found; fix the queue spec or --table")
    oid = found[1]
    findings: list[Finding] = []
    notes: list[str] = []
    checks = ["indexes", "vacuum", "fillfactor", "xmin horizon", "idle timeout"]
    try:
        more, why = index_findings(conn, spec, read_indexes(conn, oid))
        findings += more
        notes += why
        more, why = latency_findings(conn, spec)
        findings += more
        notes += why
    except errors.InsufficientPrivilege as exc:
        notes.append(f"indexes not checked: {str(exc).splitlines()[0]}")
    health = read_health(conn, oid)
    findings += vacuum_findings(conn, spec, health, limits)
    findings += fillfactor_findings(conn, spec, health, limits)
    findings += horizon_findings(conn, spec, limits)
    findings += idle_timeout_findings(conn, spec)
    return Report(str(spec.table), tuple(findings), tuple(notes), tuple(checks))
