-- purpose: when a pg-boss job may run: start_after, or not at all while it waits for a flow parent (blocked), which pg-boss counts apart from its ready jobs
CASE WHEN t.blocked THEN 'infinity'::timestamptz ELSE t.start_after END
