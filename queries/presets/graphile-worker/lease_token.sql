-- purpose: the claim's own stamp as a lease token: locked_at in microseconds since the epoch (every claim sets a new one; the same in every session whatever its TimeZone)
(extract(epoch FROM t.locked_at) * 1000000)::bigint
