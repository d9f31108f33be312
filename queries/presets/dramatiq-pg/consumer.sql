-- purpose: the consumer working a message: the backend pid of the session holding the message's advisory lock (dramatiq-pg records no worker; its consume connection takes the lock and keeps it while the message is processed), else NULL
{lock_holder}::text
