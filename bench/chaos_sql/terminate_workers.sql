-- purpose: terminate every worker's backend (their sessions vanish as in a network cut or a DBA's kill)
SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
FROM pg_stat_activity
WHERE application_name LIKE 'queuetop-worker-%'
