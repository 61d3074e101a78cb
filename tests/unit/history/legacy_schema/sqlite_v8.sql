CREATE TABLE IF NOT EXISTS job_gpus(
  tier INTEGER NOT NULL, node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,
  gpu INTEGER NOT NULL, pid INTEGER NOT NULL, start_ns INTEGER NOT NULL, samples INTEGER NOT NULL,
  memory_max INTEGER, sm_mean REAL, idle_samples INTEGER, power_sum_w REAL,
  gpu_processes INTEGER NOT NULL, gpu_processes_with_sm INTEGER NOT NULL, gpu_sm_sum REAL,
  gpu_samples INTEGER, util_mean REAL, sm_active_mean REAL, tensor_active_mean REAL,
  memory_total INTEGER, power_mean_w REAL, energy_mj REAL, energy_counter_ns INTEGER,
  PRIMARY KEY(tier, t_ns, node, gpu, pid, start_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_calls(
  tier INTEGER NOT NULL, node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,
  pid INTEGER NOT NULL, start_ns INTEGER NOT NULL, domain INTEGER NOT NULL, function INTEGER NOT NULL,
  calls INTEGER NOT NULL, timed INTEGER NOT NULL, estimated INTEGER NOT NULL,
  latency_count INTEGER NOT NULL, latency_sum_ns INTEGER NOT NULL,
  PRIMARY KEY(tier, t_ns, node, pid, start_ns, domain, function)) WITHOUT ROWID;
