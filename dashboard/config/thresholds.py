"""The threshold in force: which liveness signal decides a stale lease, its time limit,
and who set it (the preset's default, a key of the user's spec, or --stale-after).

The user's --stale-after sets the limit of whatever signal the spec uses: a workers
table's timeout, a per-job heartbeat's, or the start-time rule. Where each job carries
its own expiry (lease_until: pg-boss's expire_seconds, the demo's leased_until) or a held
advisory lock decides (Que), there is no single limit to set, and the flag is refused in
one line rather than silently ignored.

In a spec file each signal's own key sets its limit (workers.timeout, heartbeat_timeout,
stale_after); `stale_after` also stands for the signal's key where that key is absent.
"""

from __future__ import annotations

from dataclasses import replace

from dashboard.errors import UserError
from dashboard.models import Derived, QueueSpec, Threshold

# The spec key that holds each signal's limit, and queuetop's default for it.
SIGNAL_KEY = {
    "workers": "workers.timeout",
    "heartbeat": "heartbeat_timeout",
    "start": "stale_after",
}
DEFAULT_S = {"workers.timeout": 60.0, "heartbeat_timeout": 60.0, "stale_after": 600.0}


def signal_of(spec: QueueSpec) -> str:
    """The signal that decides first, as queue_sql.parts.liveness_parts composes it."""
    cols = spec.columns
    if cols.lease_until:
        return "expiry"
    if spec.liveness == "heartbeat":
        return "heartbeat"
    if spec.liveness == "workers":
        return "workers"
    if cols.advisory_lock and not cols.started_at:
        return "lock"
    return "start"


def _named(spec: QueueSpec, value: object) -> str:
    if isinstance(value, Derived):
        return f"{value.name}, derived by the {spec.adapter} adapter's SQL"
    return str(value)


def _what(spec: QueueSpec, signal: str) -> str:
    cols = spec.columns
    if signal == "workers" and spec.workers:
        return f"silence in {spec.workers.table}.{spec.workers.last_seen}"
    if signal == "heartbeat":
        return f"silence in the job's heartbeat ({_named(spec, cols.heartbeat)})"
    if signal == "expiry":
        return f"each job's own expiry ({_named(spec, cols.lease_until)})"
    if signal == "lock":
        return "the job's advisory lock (running while held; a dead worker's job is free at once)"
    started = _named(spec, cols.started_at) if cols.started_at else "none: --started-at-column"
    return f"running since the claim (start time {started})"


def _origin(spec: QueueSpec, key: str | None) -> str:
    source = spec.source
    suffix = f", {key}" if key else ""
    if source.startswith("preset "):
        return f"{source} default{suffix}"
    if source == "flags":
        return f"queuetop default{suffix}"
    return f"spec {source}{suffix}"


def _refusal(spec: QueueSpec, signal: str) -> str:
    flag = spec.stale_after_override[1] if spec.stale_after_override else "--stale-after"
    if signal == "lock":
        return (
            f"{flag} has nothing to set for {spec.table}: a running job's advisory lock "
            "tells a live worker, not a time limit (a dead worker's job is free at once); "
            f"drop {flag}"
        )
    return (
        f"{flag} cannot apply to {spec.table}: each running job carries its own expiry "
        f"({_named(spec, spec.columns.lease_until)}), which decides when it is stale and "
        f"which queuetop follows; change the expiry where the jobs get it, or drop {flag}"
    )


def _with_seconds(spec: QueueSpec, signal: str, seconds: float, override: bool) -> QueueSpec:
    policy = spec.policy
    if signal == "workers" and spec.workers:
        spec = replace(spec, workers=replace(spec.workers, timeout_s=seconds))
    elif signal == "heartbeat":
        policy = replace(policy, heartbeat_timeout_s=seconds)
    if signal == "start" or override:  # the flag also covers jobs the signal cannot see
        policy = replace(policy, stale_after_s=seconds)
    return replace(spec, policy=policy)


def apply(spec: QueueSpec) -> QueueSpec:
    """The spec with its signal's limit set and `threshold` saying which and from where.

    Idempotent: run after building the spec and again after validation has found the
    columns of a `--table` queue (which may change the signal).
    """
    signal = signal_of(spec)
    override = spec.stale_after_override
    if signal in ("expiry", "lock"):
        if override:
            raise UserError(_refusal(spec, signal))
        source = _origin(spec, None)
        return replace(spec, threshold=Threshold(signal, None, source, _what(spec, signal)))
    key = SIGNAL_KEY[signal]
    given = spec.threshold_keys
    if override:
        seconds, source = override
    elif key in given:
        seconds, source = given[key], _origin(spec, key)
    elif "stale_after" in given:
        seconds, source = given["stale_after"], _origin(spec, "stale_after")
    else:
        seconds, source = DEFAULT_S[key], _origin(spec, key)
        if spec.source.startswith("preset "):
            source = f"queuetop default ({key})"
    spec = _with_seconds(spec, signal, seconds, override is not None)
    return replace(spec, threshold=Threshold(signal, seconds, source, _what(spec, signal)))
