-- purpose: one job's whole row for the browser's detail (to_jsonb of the row), each column's text cut on the server so a huge payload never crosses the wire whole, with its full length
SELECT c.key AS name,
       left(c.value, %(cut)s) AS text,
       length(c.value) AS length,
       jsonb_typeof(r.row -> c.key) AS kind
FROM (SELECT to_jsonb(t) AS row FROM {table} AS t WHERE {job_id} = %(id)s::text::{id_type}) AS r
CROSS JOIN LATERAL jsonb_each_text(r.row) AS c(key, value)
