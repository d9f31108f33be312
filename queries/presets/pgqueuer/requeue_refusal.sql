-- purpose: why pgqueuer forbids requeueing this job, else NULL: a held failed job whose dedupe_key another queued or picked job holds (unique among active jobs; a picked job already holds its own)
CASE
    WHEN t.status = 'failed' AND t.dedupe_key IS NOT NULL AND EXISTS (
            SELECT 1 FROM {table} AS other
            WHERE other.dedupe_key = t.dedupe_key AND other.status IN ('queued', 'picked')
              AND other.{id} <> {job_id})
        THEN 'pgqueuer refuses: another active job holds dedupe_key '
             || quote_literal(t.dedupe_key)
END
