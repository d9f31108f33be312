-- purpose: drop this session's cached statistics snapshot, so the next read of pg_stat_database sees the counters as they are now
SELECT pg_stat_clear_snapshot()
