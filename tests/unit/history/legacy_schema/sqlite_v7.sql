ALTER TABLE gpu_processes ADD COLUMN power_sum_w REAL;
