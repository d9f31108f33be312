-- purpose: what the catalog says of some tables beyond their columns: the primary key (or a unique index over NOT NULL columns) in key order, column defaults, CHECK constraints, each index's first column and partial predicate, and foreign keys (column -> referenced table); catalog only, but printing an expression takes each table's AccessShareLock, so it waits at most lock_timeout behind a table locked exclusively
SELECT c.oid::bigint AS oid,
       (SELECT array_agg(a.attname::text ORDER BY k.ord)
        FROM pg_index AS i
        CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = c.oid AND i.indisprimary) AS primary_key,
       (SELECT array_agg(x.cols ORDER BY x.n, x.name)
        FROM (SELECT array_to_string(array_agg(quote_ident(a.attname::text) ORDER BY k.ord), ',') AS cols,
                     count(*) AS n, ic.relname AS name
              FROM pg_index AS i
              JOIN pg_class AS ic ON ic.oid = i.indexrelid
              CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
              JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
              WHERE i.indrelid = c.oid AND i.indisunique AND NOT i.indisprimary
                AND i.indpred IS NULL AND i.indexprs IS NULL
                AND a.attnotnull
              GROUP BY i.indexrelid, ic.relname
              HAVING count(*) = i.indnkeyatts) AS x) AS unique_keys,
       (SELECT array_agg(a.attname::text ORDER BY a.attnum)
        FROM pg_attrdef AS d JOIN pg_attribute AS a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
        WHERE d.adrelid = c.oid) AS default_columns,
       (SELECT array_agg(pg_get_expr(d.adbin, d.adrelid) ORDER BY a.attnum)
        FROM pg_attrdef AS d JOIN pg_attribute AS a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
        WHERE d.adrelid = c.oid) AS default_exprs,
       (SELECT array_agg(pg_get_constraintdef(k.oid) ORDER BY k.conname)
        FROM pg_constraint AS k WHERE k.conrelid = c.oid AND k.contype = 'c') AS checks,
       (SELECT array_agg(pg_get_expr(i.indpred, i.indrelid) ORDER BY ic.relname)
        FROM pg_index AS i JOIN pg_class AS ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = c.oid AND i.indpred IS NOT NULL) AS partial_predicates,
       (SELECT array_agg(a.attname::text ORDER BY ic.relname)
        FROM pg_index AS i
        JOIN pg_class AS ic ON ic.oid = i.indexrelid
        JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
        WHERE i.indrelid = c.oid) AS index_leads,
       (SELECT array_agg(a.attname::text || '=' || rn.nspname::text || '.' || rc.relname::text
                         ORDER BY k.conname)
        FROM pg_constraint AS k
        JOIN pg_attribute AS a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
        JOIN pg_class AS rc ON rc.oid = k.confrelid
        JOIN pg_namespace AS rn ON rn.oid = rc.relnamespace
        WHERE k.conrelid = c.oid AND k.contype = 'f' AND cardinality(k.conkey) = 1) AS foreign_keys
FROM pg_class AS c
WHERE c.oid = ANY (%(oids)s::oid[])
