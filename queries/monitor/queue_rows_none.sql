-- purpose: no queue rows to decode (the table is locked by someone else, or unreadable): the sessions are read without it
SELECT NULL::oid AS tableoid, NULL::tid AS ctid, NULL::text AS xmax, NULL::text AS id,
       NULL::text AS status, NULL::text AS grp
WHERE false
