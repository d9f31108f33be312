-- purpose: no queue rows to decode on awa's queue storage (of_value branch of the sessions statement): its jobs are rows of a query over several tables (the table is this folder's table.sql), and its workers hold no row lock on a job while they work; the sessions are read without it
SELECT NULL::oid AS tableoid, NULL::tid AS ctid, NULL::text AS xmax, NULL::text AS id,
       NULL::text AS status, NULL::text AS grp
WHERE false
