-- purpose: make the monitoring session read-only once connected (not a startup option: libpq's target_session_attrs=read-write would then find every host read-only)
SET default_transaction_read_only = on
