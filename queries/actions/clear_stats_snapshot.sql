-- purpose: drop this transaction's cached view of pg_stat_activity, so the next guard reads it fresh
SELECT pg_stat_clear_snapshot()
