-- purpose: the lease token of a pgqueuer job: its heartbeat in microseconds since 1970, a whole number that prints the same in every session and client
(extract(epoch FROM t.heartbeat) * 1000000)::bigint
