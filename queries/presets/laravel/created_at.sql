-- purpose: when the job was pushed (created_at: Unix seconds)
to_timestamp(t.created_at)
