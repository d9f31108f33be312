-- purpose: Que's worker of a running job: the backend pid of the locker session holding the advisory lock on its id (Que's que_lockers.pid, application_name 'Que Locker: <pid>')
{lock_holder}::text
