-- jsampled fleet export: the ClickHouse schema.
--
-- Load it on EVERY server of the cluster (it is idempotent):
--     clickhouse-client --multiquery < schema.sql
-- or run `jsamplectl fleet init --clickhouse-url URL --cluster jsampled`
-- against each; for a single server, `jsamplectl fleet init --clickhouse-url
-- URL` makes stacks and samples plain tables. (A unit test holds this file
-- to what fleet init creates: `jsamplectl fleet schema --cluster jsampled`.)
-- Each table is a *_local MergeTree-family table holding that server's share
-- of the rows, plus a Distributed table of the same columns over the cluster
-- `jsampled` (defined in the servers' <remote_servers>), which the exporter
-- inserts into and the queries read from.
--
-- Written for Debian bookworm's clickhouse-server 18.16.1 and kept to what
-- current ClickHouse releases also accept: no TTL, Map, DateTime64,
-- LowCardinality or Nullable. Tested on 18.16.1 with
-- tests/integration/test_clickhouse_schema.sh. Notes on 18.16:
--   * ON CLUSTER is not used: it needs ZooKeeper (distributed_ddl); hence
--     "load it on every server".
--   * The modern syntax (PARTITION BY / ORDER BY after the engine) is
--     accepted by 18.16 as written, so no legacy
--     MergeTree(date, key, 8192) form is needed.
--   * 18.16 fills a column that a JSONEachRow row omits with the type's
--     zero, not with a DEFAULT expression, so the exporter sends every
--     column (date included); no column here has a DEFAULT.

CREATE DATABASE IF NOT EXISTS jsampled;

-- One row per (day, stack): the frames of a stack, which the samples refer
-- to by stack_hash. The exporter writes each stack once per day it is used,
-- so a day's partition is self-contained and dropping old days (retention)
-- never removes a stack that a kept day's samples need.
-- ReplacingMergeTree: a retried batch, or the same stack sent by several
-- hosts on one day, collapses to one row per (date, stack_hash) when parts
-- merge. Until then, and across days (and across shards, should a row have
-- been written to another server's stacks_local), a stack may have several
-- rows: readers take any() of its frames per stack_hash (they are the same).
CREATE TABLE IF NOT EXISTS jsampled.stacks_local
(
    date       Date,           -- UTC day on which samples used this stack
    stack_hash UInt64,         -- the exporter's hash of (frames, kinds)
    frames     Array(String),  -- frame names, root (outermost) first
    kinds      Array(String)   -- same length as frames: interpreted,
                               -- compiled, inlined, native, pseudo, ...
                               -- thread: the root, the thread pool
)
ENGINE = ReplacingMergeTree()
PARTITION BY date              -- one partition a day: retention drops days
ORDER BY stack_hash;           -- the dedup key and the join key

-- Sharded by stack_hash, so every row of a stack goes to the same shard.
CREATE TABLE IF NOT EXISTS jsampled.stacks AS jsampled.stacks_local
ENGINE = Distributed(jsampled, jsampled, stacks_local, stack_hash);

-- One row per (service, host, interval, pid, stack): how many samples that
-- stack got in that process during that interval.
-- ReplacingMergeTree with ORDER BY = the row's identity: a retried batch
-- writes rows with identical keys, and merges keep one of them. Merges run
-- whenever ClickHouse likes, so duplicates can be present at read time:
-- queries must take any(count) per ORDER BY key first and only then add up
-- (see fleet_queries.sql), never sum(count) straight from the table.
CREATE TABLE IF NOT EXISTS jsampled.samples_local
(
    date         Date,            -- UTC day of `time`; the partition key
    time         DateTime('UTC'), -- interval start; the 'UTC' only fixes
                                  -- how it is shown and parsed as text
                                  -- (the value is unix seconds either way)
    interval_s   UInt32,          -- interval length in seconds
    host         String,
    service      String,
    pid          UInt32,
    label_keys   Array(String),   -- the process's labels, as parallel
    label_values Array(String),   -- key and value arrays (no Map type)
    stack_hash   UInt64,          -- refers to stacks.stack_hash
    count        UInt64,          -- samples of this stack in the interval
    batch_id     String,          -- the exporter's batch (same on a retry)
    profile_type String           -- '' for CPU samples (a row of an older
                                  -- exporter has none), 'offcpu', 'wall';
                                  -- added to an older table by fleet init
)
ENGINE = ReplacingMergeTree()
PARTITION BY date
ORDER BY (service, host, time, pid, stack_hash);

-- Sharded by host: all of a host's rows live on one shard, so a host's
-- retried batch lands on the same server as the original and collapses.
CREATE TABLE IF NOT EXISTS jsampled.samples AS jsampled.samples_local
ENGINE = Distributed(jsampled, jsampled, samples_local, cityHash64(host));
