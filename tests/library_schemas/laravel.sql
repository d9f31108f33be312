-- Laravel's jobs table on PostgreSQL, as `php artisan make:queue-table` creates it:
-- src/Illuminate/Queue/Console/stubs/jobs.stub of laravel/framework (13.x, bd71b45),
-- its Blueprint through the pgsql grammar (bigIncrements: bigserial primary key;
-- string()->index(): varchar(255) and an index; longText: text; unsignedSmallInteger:
-- smallint; unsignedInteger: integer).
CREATE TABLE jobs (
    id bigserial PRIMARY KEY,
    queue varchar(255) NOT NULL,
    payload text NOT NULL,
    attempts smallint NOT NULL,
    reserved_at integer,
    available_at integer NOT NULL,
    created_at integer NOT NULL
);
CREATE INDEX jobs_queue_index ON jobs (queue);
