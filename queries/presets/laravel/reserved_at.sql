-- purpose: when a worker reserved the job (reserved_at: Unix seconds), NULL while not reserved
to_timestamp(t.reserved_at)
