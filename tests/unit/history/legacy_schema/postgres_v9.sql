CREATE TABLE IF NOT EXISTS nccl_standings(
  node INTEGER NOT NULL, comm_id BIGINT NOT NULL, rank INTEGER NOT NULL, pid INTEGER NOT NULL,
  nranks INTEGER NOT NULL, entered BIGINT NOT NULL, finished BIGINT NOT NULL,
  waiting_ns BIGINT NOT NULL, collective TEXT NOT NULL DEFAULT '', written_ns BIGINT NOT NULL,
  PRIMARY KEY(node, comm_id, rank));
CREATE INDEX IF NOT EXISTS nccl_standings_comm ON nccl_standings(comm_id);
