-- purpose: a Laravel job's state from its times (Unix seconds): reserved while reserved_at is set (an expired reservation stays reserved: a stale lease its claim takes again), delayed while available_at is ahead, else available
CASE WHEN t.reserved_at IS NOT NULL THEN 'reserved'
     WHEN t.available_at > extract(epoch FROM now()) THEN 'delayed'
     ELSE 'available'
END
