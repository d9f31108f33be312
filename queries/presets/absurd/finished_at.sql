-- purpose: when an Absurd run ended: completed_at, or failed_at for a failed attempt (a retry is a new run); NULL while it may still run
coalesce(t.completed_at, t.failed_at)
