-- purpose: River's lease of a running job: its attempt and when it was attempted (every claim, even of a snoozed job, changes attempted_at), as text independent of the session's settings
CASE WHEN t.attempted_at IS NOT NULL
     THEN t.attempt || '@' || to_char(t.attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
END
