-- purpose: the indexes of the queue table for doctor: name, key columns (NULL for an expression), partial predicate, valid or not, and the definition
SELECT i.relname AS name,
       array(SELECT a.attname::text
             FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, pos)
             LEFT JOIN pg_attribute AS a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
             ORDER BY k.pos) AS columns,
       pg_get_expr(x.indpred, x.indrelid) AS predicate,
       x.indisvalid AS valid,
       pg_get_indexdef(x.indexrelid) AS definition
FROM pg_index AS x
JOIN pg_class AS i ON i.oid = x.indexrelid
WHERE x.indrelid = %(oid)s::oid
ORDER BY i.relname
