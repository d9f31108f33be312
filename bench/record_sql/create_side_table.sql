-- purpose: one of the small tables the lock-table scenario's sessions hold locks on
CREATE TABLE IF NOT EXISTS {table} (x int)
