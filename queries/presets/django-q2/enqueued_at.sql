-- purpose: when a django-q2 task was enqueued: the time in its payload's signature (Django's TimestampSigner, 'data:time:signature', the time in seconds in base 62), which async_task writes just before the row (whose lock it sets to now)
(SELECT to_timestamp(sum((strpos('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                                 substr(s.stamp, i, 1)) - 1)::float8
                         * 62::float8 ^ (length(s.stamp) - i)))
 FROM (SELECT split_part(t.payload, ':', 2) AS stamp) AS s
 CROSS JOIN generate_series(1, length(s.stamp)) AS i
 WHERE s.stamp ~ '^[0-9A-Za-z]+$' AND length(s.stamp) <= 11)
