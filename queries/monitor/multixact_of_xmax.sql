-- purpose: the multixact an xmax {xmax} names, or NULL: an xmax that is no running transaction is read as a multixact only when it lies in the range of multixacts that exist (from the oldest any database keeps to the next one to be made), where pg_get_multixact_members can read it
CASE WHEN {xmax} NOT IN (SELECT x.xid FROM xacts AS x)
      AND mxid_age({xmax}::xid) > 0
      AND mxid_age({xmax}::xid) <= (SELECT max(mxid_age(d.datminmxid)) FROM pg_database AS d)
     THEN {xmax}::xid END
