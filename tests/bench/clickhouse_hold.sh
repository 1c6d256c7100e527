#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Holds a two-shard ClickHouse test cluster (tests/integration/
# clickhouse_cluster.sh) for a program that is not bash (bench_export.py):
#   tests/bench/clickhouse_hold.sh DIR
# starts the cluster under DIR, prints one line
#   ready CH1_HTTP CH2_HTTP CH1_TCP CH2_TCP
# on stdout, then waits until its stdin closes (the caller exited, however
# it exited) or it gets SIGTERM/SIGINT, and stops both servers. If the
# cluster does not start: the reason on stderr, exit 1, no "ready" line.
set -euo pipefail
DIR=${1:?usage: clickhouse_hold.sh DIR}
# shellcheck source=../integration/clickhouse_cluster.sh
. "$(dirname "$0")/../integration/clickhouse_cluster.sh"

stopped=0
stop() {
	[ $stopped = 1 ] && return 0
	stopped=1
	ch_cluster_stop || true
}
trap 'stop' EXIT
trap 'stop; exit 0' TERM INT HUP

ch_cluster_start "$DIR" || exit 1
echo "ready $CH1_HTTP $CH2_HTTP $CH1_TCP $CH2_TCP"
# Until the caller closes our stdin (or dies).
while read -r _; do :; done
