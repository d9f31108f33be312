-- purpose: the Oban jobs that ended since {since}: each terminal state with its own end time, compared as the column itself so that Oban's partial index on it serves it (oban_jobs_completed_at_index, _cancelled_at_, _discarded_at_; UTC, as Oban writes them)
(t.state = 'completed' AND t.completed_at >= ({since} AT TIME ZONE 'UTC'))
OR (t.state = 'discarded' AND t.discarded_at >= ({since} AT TIME ZONE 'UTC'))
OR (t.state = 'cancelled' AND t.cancelled_at >= ({since} AT TIME ZONE 'UTC'))
