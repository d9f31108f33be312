-- purpose: how many times AutomaticRetry has retried a Hangfire job: its RetryCount job parameter (JSON text)
(SELECT CASE WHEN btrim(p.value, '"') ~ '^[0-9]+$' AND length(btrim(p.value, '"')) < 10
             THEN btrim(p.value, '"')::int END
 FROM {schema}.jobparameter AS p
 WHERE p.jobid = t.id AND p.name = 'RetryCount'
 ORDER BY p.id DESC
 LIMIT 1)
