-- purpose: a django-q2 task's state in its ORM broker, which keeps one lock-until time: enqueue sets it to now, a cluster's pull to now + its retry; so locked while it is later than the enqueue time in the payload's signature (to the second, 2 s allowed for the insert), whether or not it has passed (a passed one is a stale lease any cluster of that key pulls again), else queued (no lock: NULL, a row no cluster ever pulls)
CASE
    WHEN t.lock IS NULL THEN NULL
    WHEN t.lock > (SELECT to_timestamp(sum((strpos('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                                                   substr(s.stamp, i, 1)) - 1)::float8
                                           * 62::float8 ^ (length(s.stamp) - i)))
                   FROM (SELECT split_part(t.payload, ':', 2) AS stamp) AS s
                   CROSS JOIN generate_series(1, length(s.stamp)) AS i
                   WHERE s.stamp ~ '^[0-9A-Za-z]+$' AND length(s.stamp) <= 11)
                  + interval '2 seconds'
        THEN 'locked'
    ELSE 'queued'
END
