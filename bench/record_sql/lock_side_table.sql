-- purpose: a lock held on one side table for as long as the session's transaction lasts (a row of the locks table)
LOCK TABLE {table} IN ACCESS SHARE MODE
