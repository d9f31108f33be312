# A delayed_job application for the tests: Debian's delayed_job and delayed_job_active_record
# on ActiveRecord and ruby-pg. The database comes from libpq's PG* environment variables.
#
#   ruby delayed_job_app.rb schema                 the table (its generator's migration)
#   ruby delayed_job_app.rb enqueue SECONDS [fail] one job; prints its id
#   ruby delayed_job_app.rb work NAME             a worker (MAX_RUN_TIME seconds), until TERM
#   ruby delayed_job_app.rb view                   the library's own counts, as JSON
require "json"
require "logger"
require "active_record"
require "delayed_job"
require "delayed_job_active_record"

ActiveRecord::Base.establish_connection(adapter: "postgresql")
ActiveRecord::Base.default_timezone = :utc
Delayed::Worker.max_run_time = Integer(ENV.fetch("MAX_RUN_TIME", "14400"))
Delayed::Worker.sleep_delay = 0.2
Delayed::Worker.max_attempts = 1
Delayed::Worker.destroy_failed_jobs = false
$stdout.sync = true
Delayed::Worker.logger = Logger.new($stdout)

# Sleeps (on its first run only: a run after a crash is quick), then records that it ran;
# its side effects name the job by its id.
class SleepJob < Struct.new(:seconds, :fail)
  def before(job)
    @job_id = job.id
    effect("started")
  end

  def perform
    runs = ActiveRecord::Base.connection.select_value(
      "SELECT count(*) FROM side_effects WHERE job_id = #{Integer(@job_id)} AND event = 'started'"
    )
    sleep(Integer(runs) == 1 ? seconds : 0.1)
    raise "asked to fail" if fail
    effect("done")
  end

  def effect(event)
    conn = ActiveRecord::Base.connection
    conn.execute("INSERT INTO side_effects (job_id, event) VALUES (#{Integer(@job_id)}, #{conn.quote(event)})")
  end
end

case ARGV[0]
when "schema"
  ActiveRecord::Schema.verbose = false
  ActiveRecord::Schema.define do
    create_table :delayed_jobs do |table|
      table.integer :priority, default: 0, null: false
      table.integer :attempts, default: 0, null: false
      table.text :handler, null: false
      table.text :last_error
      table.datetime :run_at
      table.datetime :locked_at
      table.datetime :failed_at
      table.string :locked_by
      table.string :queue
      table.timestamps null: true
    end
    add_index :delayed_jobs, [:priority, :run_at], name: "delayed_jobs_priority"
    create_table :side_effects do |table|
      table.bigint :job_id, null: false
      table.string :event, null: false
    end
  end
when "enqueue"
  job = Delayed::Job.enqueue(SleepJob.new(Float(ARGV[1]), ARGV[2] == "fail"), queue: "default")
  puts job.id
when "work"
  worker = Delayed::Worker.new
  worker.name = ARGV[1]
  worker.start
when "view"
  now = Delayed::Job.db_time_now
  waiting = Delayed::Job.where(failed_at: nil, locked_at: nil)
  puts JSON.generate(
    "dead" => Delayed::Job.where.not(failed_at: nil).count,
    "running" => Delayed::Job.where(failed_at: nil).where.not(locked_at: nil).count,
    "later" => waiting.where("run_at > ?", now).count,
    "ready" => waiting.where("run_at <= ?", now).count,
    "claimable" => Delayed::Job.ready_to_run("view", Delayed::Worker.max_run_time).count
  )
else
  abort "usage: delayed_job_app.rb schema | enqueue SECONDS [fail] | work NAME | view"
end
