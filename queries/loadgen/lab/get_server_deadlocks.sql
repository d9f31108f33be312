-- purpose: the server's own count of deadlocks detected in this database since its statistics were reset (the lab reads it before and after a cell)
SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()
