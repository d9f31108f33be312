-- purpose: the schema of the lock-table scenario's side tables
CREATE SCHEMA IF NOT EXISTS queuetop_bench
