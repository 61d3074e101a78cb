ALTER TABLE nccl_standings ADD COLUMN arrivals TEXT NOT NULL DEFAULT '';
ALTER TABLE nccl_standings ADD COLUMN clock_uncertainty_ns INTEGER NOT NULL DEFAULT -1;
