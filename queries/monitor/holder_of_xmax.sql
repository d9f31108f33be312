-- purpose: who holds the row now, from its xmax {xmax}: nobody where it is 0; the transaction id when it is one of the running transactions (%(xids)s); 'm' and the multixact's number when a running transaction is a member of the multixact there (read only where a multixact by that number exists, from the oldest any database keeps to the next one to be made); else NULL. The cheap tests first: most rows have no xmax
CASE WHEN {xmax} = '0'::xid THEN NULL
     WHEN {xmax} = ANY (%(xids)s::text[]::xid[]) THEN {xmax}::text
     WHEN mxid_age({xmax}) > 0
      AND mxid_age({xmax}) <= (SELECT max(mxid_age(d.datminmxid)) FROM pg_database AS d)
     THEN CASE WHEN EXISTS (SELECT 1 FROM pg_get_multixact_members({xmax}) AS m
                            WHERE m.xid::text = ANY (%(xids)s::text[]))
               THEN 'm' || {xmax}::text END
END
