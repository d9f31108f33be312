-- purpose: why dramatiq-pg forbids changing a message now: a live consumer session holds its advisory lock, so a worker has it and will still ack or nack it (its ack only marks a message done while it is consumed); ending that session releases the lock
CASE WHEN t.state = 'consumed' AND {lock_held}
     THEN 'a dramatiq consumer (backend pid ' || {lock_holder} || ') holds its advisory lock: '
          'it is being worked; ending that session (queuetop terminate) releases it'
END
