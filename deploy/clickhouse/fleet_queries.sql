-- jsampled fleet queries, over the Distributed tables of schema.sql.
--
-- Each query starts at a line `-- name: NAME` and ends at a line `;`.
-- Placeholders are written as current ClickHouse query parameters,
-- {name:Type}: on a current release pass them as HTTP parameters
-- (param_service=..., or clickhouse-client --param_service=...). 18.16 has no
-- query parameters: the caller substitutes literals (a quoted, escaped string
-- for String, digits for UInt32), as tests/integration/clickhouse_cluster.sh
-- (ch_named_query) does. Tested on 18.16.1 through the Distributed tables of a
-- two-shard cluster by tests/integration/test_clickhouse_schema.sh.
--
-- Parameters:
--   service  String   the service
--   host     String   one host, or '' for every host of the service
--   from     UInt32   window start, unix seconds, included
--   until    UInt32   window end, unix seconds, excluded
--                     ([from, until) applies to `time`, the interval start)
--   a_from, a_until, b_from, b_until: the two windows of the diff
--
-- Each is of one profile type: the CPU samples' rows have profile_type ''
-- (add `AND profile_type = 'wall'` for wall-clock, 'offcpu' for waits; the
-- conditions below are the CPU's).
--
-- The shape of all of them: samples may hold duplicates of a row until
-- ReplacingMergeTree merges them (a retried batch), so the innermost query
-- takes any(count) per row identity (the ORDER BY key: service, host, time,
-- pid, stack_hash) and only the queries around it add up. The `date`
-- conditions only prune partitions: toDate(toDateTime(x, 'UTC')) is the UTC
-- day whatever the server's time zone, as the exporter's `date` is.
-- Stacks: a stack has one row per day it was used (and, before merges,
-- possibly more), so it is reduced to one row per stack_hash (any() of its
-- frames and kinds, which are equal) before the join. The join is written
-- `ANY LEFT JOIN (subquery) USING stack_hash`: accepted by 18.16 and by
-- current releases; LEFT so that samples whose stack row is missing still
-- count (with empty frames) rather than vanish; the right side is already
-- unique per stack_hash, so ANY and ALL give the same rows.
-- FINAL is not used: it would also deduplicate, but on a Distributed table
-- it needs every shard's parts merged at read time and is slower than the
-- any() per key.

-- name: fleet_cct
-- The fleet's calling-context tree for service S (and optionally host H)
-- over [from, until): one row per distinct stack, with its samples added up
-- over every host (and process and interval) of the window.
SELECT
    stack_hash,
    frames,
    kinds,
    total
FROM
(
    SELECT stack_hash, sum(c) AS total
    FROM
    (
        SELECT service, host, time, pid, stack_hash, any(count) AS c
        FROM jsampled.samples
        WHERE service = {service:String} AND profile_type = ''
          AND ({host:String} = '' OR host = {host:String})
          AND date >= toDate(toDateTime({from:UInt32}, 'UTC'))
          AND date <= toDate(toDateTime({until:UInt32}, 'UTC'))
          AND time >= toDateTime({from:UInt32}, 'UTC')
          AND time < toDateTime({until:UInt32}, 'UTC')
        GROUP BY service, host, time, pid, stack_hash
    )
    GROUP BY stack_hash
)
ANY LEFT JOIN
(
    SELECT stack_hash, any(frames) AS frames, any(kinds) AS kinds
    FROM jsampled.stacks
    WHERE date >= toDate(toDateTime({from:UInt32}, 'UTC'))
      AND date <= toDate(toDateTime({until:UInt32}, 'UTC'))
    GROUP BY stack_hash
) USING stack_hash
ORDER BY total DESC, stack_hash
;

-- name: fleet_cct_by_host
-- The same window, per host and stack: (host, stack_hash, count), the rows
-- that each host's own profile of the window adds up to.
SELECT host, stack_hash, sum(c) AS count
FROM
(
    SELECT service, host, time, pid, stack_hash, any(count) AS c
    FROM jsampled.samples
    WHERE service = {service:String} AND profile_type = ''
      AND ({host:String} = '' OR host = {host:String})
      AND date >= toDate(toDateTime({from:UInt32}, 'UTC'))
      AND date <= toDate(toDateTime({until:UInt32}, 'UTC'))
      AND time >= toDateTime({from:UInt32}, 'UTC')
      AND time < toDateTime({until:UInt32}, 'UTC')
    GROUP BY service, host, time, pid, stack_hash
)
GROUP BY host, stack_hash
ORDER BY host, count DESC, stack_hash
;

-- name: fleet_host_totals
-- The same window, per host: (host, total samples).
SELECT host, sum(c) AS total
FROM
(
    SELECT service, host, time, pid, stack_hash, any(count) AS c
    FROM jsampled.samples
    WHERE service = {service:String} AND profile_type = ''
      AND ({host:String} = '' OR host = {host:String})
      AND date >= toDate(toDateTime({from:UInt32}, 'UTC'))
      AND date <= toDate(toDateTime({until:UInt32}, 'UTC'))
      AND time >= toDateTime({from:UInt32}, 'UTC')
      AND time < toDateTime({until:UInt32}, 'UTC')
    GROUP BY service, host, time, pid, stack_hash
)
GROUP BY host
ORDER BY host
;

-- name: fleet_diff
-- Two windows A = [a_from, a_until) and B = [b_from, b_until) of service S
-- (and optionally host H) in one query: per stack, its samples in A and in
-- B (0 where it has none); the windows may overlap. Ordered by growth.
SELECT
    stack_hash,
    frames,
    kinds,
    count_a,
    count_b
FROM
(
    SELECT
        stack_hash,
        sum(in_a * c) AS count_a,
        sum(in_b * c) AS count_b
    FROM
    (
        SELECT
            service, host, time, pid, stack_hash,
            any(count) AS c,
            time >= toDateTime({a_from:UInt32}, 'UTC') AND time < toDateTime({a_until:UInt32}, 'UTC') AS in_a,
            time >= toDateTime({b_from:UInt32}, 'UTC') AND time < toDateTime({b_until:UInt32}, 'UTC') AS in_b
        FROM jsampled.samples
        WHERE service = {service:String} AND profile_type = ''
          AND ({host:String} = '' OR host = {host:String})
          AND ((date >= toDate(toDateTime({a_from:UInt32}, 'UTC'))
                AND date <= toDate(toDateTime({a_until:UInt32}, 'UTC')))
            OR (date >= toDate(toDateTime({b_from:UInt32}, 'UTC'))
                AND date <= toDate(toDateTime({b_until:UInt32}, 'UTC'))))
          AND ((time >= toDateTime({a_from:UInt32}, 'UTC') AND time < toDateTime({a_until:UInt32}, 'UTC'))
            OR (time >= toDateTime({b_from:UInt32}, 'UTC') AND time < toDateTime({b_until:UInt32}, 'UTC')))
        GROUP BY service, host, time, pid, stack_hash
    )
    GROUP BY stack_hash
)
ANY LEFT JOIN
(
    SELECT stack_hash, any(frames) AS frames, any(kinds) AS kinds
    FROM jsampled.stacks
    WHERE (date >= toDate(toDateTime({a_from:UInt32}, 'UTC'))
           AND date <= toDate(toDateTime({a_until:UInt32}, 'UTC')))
       OR (date >= toDate(toDateTime({b_from:UInt32}, 'UTC'))
           AND date <= toDate(toDateTime({b_until:UInt32}, 'UTC')))
    GROUP BY stack_hash
) USING stack_hash
ORDER BY toInt64(count_b) - toInt64(count_a) DESC, stack_hash
;
