ALTER TABLE gpus ADD COLUMN sm_active_mean REAL;
ALTER TABLE gpus ADD COLUMN sm_active_max REAL;
ALTER TABLE gpus ADD COLUMN tensor_active_mean REAL;
ALTER TABLE gpus ADD COLUMN tensor_active_max REAL;
ALTER TABLE gpus ADD COLUMN dram_active_mean REAL;
ALTER TABLE gpus ADD COLUMN dram_active_max REAL;
