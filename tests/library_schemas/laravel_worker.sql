-- Laravel's DatabaseQueue statements (src/Illuminate/Queue/DatabaseQueue.php of
-- laravel/framework 13.x, bd71b45) as its query builder writes them for pgsql; ? are
-- its bindings (queue, now, now - retry_after; reserved_at, attempts, id; …).
-- ==== claim (getNextAvailableJob: isAvailable or isReservedButExpired, FOR UPDATE SKIP LOCKED)
select * from "jobs" where "queue" = ? and (("reserved_at" is null and "available_at" <= ?) or ("reserved_at" <= ?)) order by "id" asc limit 1 for update skip locked
-- ==== reserve (markJobAsReserved)
update "jobs" set "reserved_at" = ?, "attempts" = ? where "id" = ?
-- ==== push (pushToDatabase / buildDatabaseRecord)
insert into "jobs" ("queue", "attempts", "reserved_at", "available_at", "created_at", "payload") values (?, ?, ?, ?, ?, ?) returning "id"
-- ==== delete (deleteReserved, once the job is done)
delete from "jobs" where "id" = ?
