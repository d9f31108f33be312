-- purpose: jobs in the dead-letter table (the dead role, where dead jobs are moved out of the queue table): an ordinary count
SELECT count(*)::bigint FROM {dead_table}
