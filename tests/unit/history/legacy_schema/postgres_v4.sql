CREATE TABLE IF NOT EXISTS process_totals(
  tier SMALLINT NOT NULL, node INTEGER NOT NULL, t_ns BIGINT NOT NULL, span_ns BIGINT NOT NULL,
  pid INTEGER NOT NULL, start_ns BIGINT NOT NULL, calls BIGINT NOT NULL, errors BIGINT NOT NULL,
  PRIMARY KEY(tier, node, t_ns, pid, start_ns));
CREATE TABLE IF NOT EXISTS function_totals(
  tier SMALLINT NOT NULL, node INTEGER NOT NULL, t_ns BIGINT NOT NULL, span_ns BIGINT NOT NULL,
  domain INTEGER NOT NULL, function INTEGER NOT NULL,
  calls BIGINT NOT NULL, errors BIGINT NOT NULL, bytes BIGINT NOT NULL, timed BIGINT NOT NULL,
  estimated BIGINT NOT NULL, calls_variance DOUBLE PRECISION NOT NULL, latency BYTEA,
  PRIMARY KEY(tier, node, t_ns, domain, function));
