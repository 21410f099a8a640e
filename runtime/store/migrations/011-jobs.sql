-- The durable job queue (runtime/jobs/, docs/jobs.md).
--
-- job: the embedded engine's queue, in graphile-worker's design (a job's kind, payload, key,
-- attempts, run_at and lock), run by one process (runtime/jobs/embedded-queue.ts). On PostgreSQL,
-- graphile-worker keeps its own tables in the schema graphile_worker, and this one stays empty.
CREATE TABLE job (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  -- Jobs with the same key run one at a time, in the order they were enqueued.
  key text,
  payload jsonb NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  run_at timestamptz NOT NULL DEFAULT now(),
  locked_at timestamptz,
  last_error text
);
CREATE INDEX job_ready ON job (run_at, id) WHERE locked_at IS NULL;
CREATE INDEX job_key_locked ON job (key) WHERE locked_at IS NOT NULL;

-- job_process: on PostgreSQL, the processes running graphile-worker's workers, so that the jobs
-- a dead one held are released at once instead of after graphile-worker's 4 hours. A process is
-- alive while its connection named graphir-jobs/<process_id> is (runtime/jobs/process-liveness.ts).
CREATE TABLE job_process (
  process_id text PRIMARY KEY,
  worker_ids text[] NOT NULL DEFAULT '{}',
  started_at timestamptz NOT NULL DEFAULT now()
);
