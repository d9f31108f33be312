-- purpose: when an Oban job ended: completed_at, discarded_at or cancelled_at (whichever it has; UTC, as Oban writes them); NULL while it may still run (a retryable job has none)
(coalesce(t.completed_at, t.discarded_at, t.cancelled_at) AT TIME ZONE 'UTC')
