-- purpose: check for a deadlock after a shorter wait in the lab's deadlock scenario (superuser only; refused elsewhere, then the server's own setting applies)
SELECT set_config('deadlock_timeout', %(value)s, false)
