CREATE TABLE IF NOT EXISTS job_gpus(
  tier SMALLINT NOT NULL, node INTEGER NOT NULL, t_ns BIGINT NOT NULL, span_ns BIGINT NOT NULL,
  gpu INTEGER NOT NULL, pid INTEGER NOT NULL, start_ns BIGINT NOT NULL, samples BIGINT NOT NULL,
  memory_max BIGINT, sm_mean DOUBLE PRECISION, idle_samples BIGINT, power_sum_w DOUBLE PRECISION,
  gpu_processes BIGINT NOT NULL, gpu_processes_with_sm BIGINT NOT NULL, gpu_sm_sum DOUBLE PRECISION,
  gpu_samples BIGINT, util_mean DOUBLE PRECISION, sm_active_mean DOUBLE PRECISION,
  tensor_active_mean DOUBLE PRECISION, memory_total BIGINT, power_mean_w DOUBLE PRECISION,
  energy_mj DOUBLE PRECISION, energy_counter_ns BIGINT,
  PRIMARY KEY(tier, node, t_ns, gpu, pid, start_ns));
CREATE TABLE IF NOT EXISTS job_calls(
  tier SMALLINT NOT NULL, node INTEGER NOT NULL, t_ns BIGINT NOT NULL, span_ns BIGINT NOT NULL,
  pid INTEGER NOT NULL, start_ns BIGINT NOT NULL, domain INTEGER NOT NULL, function INTEGER NOT NULL,
  calls BIGINT NOT NULL, timed BIGINT NOT NULL, estimated BIGINT NOT NULL,
  latency_count BIGINT NOT NULL, latency_sum_ns BIGINT NOT NULL,
  PRIMARY KEY(tier, node, t_ns, pid, start_ns, domain, function));
