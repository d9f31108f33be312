-- purpose: the workflows that ended since {since}: completed_at (epoch milliseconds) compared as the column itself, which DBOS's idx_workflow_status_completed_at serves
t.completed_at >= (extract(epoch FROM {since}) * 1000)::bigint
