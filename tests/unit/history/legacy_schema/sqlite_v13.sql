ALTER TABLE gpu_processes ADD COLUMN power_share_w REAL;
ALTER TABLE job_gpus ADD COLUMN power_share_w REAL;
ALTER TABLE namespace_gpus ADD COLUMN energy_share REAL;
