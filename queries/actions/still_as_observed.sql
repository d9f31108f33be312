-- purpose: the guard of every job action, on the job row t and the operator's observation o: still in the observed state, with the observed worker and lease token, not refused by the queue's library, and, unless forced, not running or past its lease
{state}::text = o.status
AND o.status = ANY (%(from_values)s::text[])
AND {worker}::text IS NOT DISTINCT FROM o.worker
AND {lease_token}::text IS NOT DISTINCT FROM o.lease_token
AND {refusal} IS NULL
AND (%(force)s
     OR o.status <> ALL (%(running_values)s::text[])
     OR {is_stale})
