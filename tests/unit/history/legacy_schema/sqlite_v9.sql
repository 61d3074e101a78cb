CREATE TABLE IF NOT EXISTS nccl_standings(
  node INTEGER NOT NULL, comm_id INTEGER NOT NULL, rank INTEGER NOT NULL, pid INTEGER NOT NULL,
  nranks INTEGER NOT NULL, entered INTEGER NOT NULL, finished INTEGER NOT NULL,
  waiting_ns INTEGER NOT NULL, collective TEXT NOT NULL DEFAULT '', written_ns INTEGER NOT NULL,
  PRIMARY KEY(node, comm_id, rank)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS nccl_standings_comm ON nccl_standings(comm_id);
