-- purpose: how many times pg-boss has claimed the job: retry_count counts the claims before the last one (its claim adds one only to a job that started before)
t.retry_count + CASE WHEN t.started_on IS NULL THEN 0 ELSE 1 END
