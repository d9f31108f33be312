-- purpose: whether the action connection reached a standby (in recovery, read-only), where every action must refuse before it starts
SELECT pg_is_in_recovery()
