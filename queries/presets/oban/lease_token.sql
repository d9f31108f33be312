-- purpose: Oban's lease token: attempted_at, the stamp every ack of the claim must match (its fence), as fixed text (microseconds, no zone) so that every session reads the same value
to_char(t.attempted_at, 'YYYY-MM-DD"T"HH24:MI:SS.US')
