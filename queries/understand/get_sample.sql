-- purpose: a bounded sample of a table's rows (at most the limit; a large table's pages picked at random by TABLESAMPLE SYSTEM), grouped by the state value and the shape of a few telling columns (null, set, past, future, zero, positive, true, false): an ordinary read, AccessShareLock only
SELECT {columns}, count(*)::bigint
FROM (SELECT * FROM {source} LIMIT %(limit)s) AS s
GROUP BY {ordinals}
