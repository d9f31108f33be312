-- purpose: when the job becomes available (available_at: Unix seconds)
to_timestamp(t.available_at)
