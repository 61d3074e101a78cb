ALTER TABLE gpus ADD COLUMN energy_mj REAL;
ALTER TABLE gpus ADD COLUMN energy_counter_ns INTEGER;
ALTER TABLE gpu_processes ADD COLUMN idle_samples INTEGER;
