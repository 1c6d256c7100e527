# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# A two-shard ClickHouse cluster on 127.0.0.1 for integration tests; source
# it (safe under set -euo pipefail). Uses Debian's clickhouse-server and
# clickhouse-client (18.16.1 on bookworm; `make deps` installs them).
#
#   ch_cluster_start DIR   writes configs under DIR/ch1 and DIR/ch2 (data,
#                          tmp and logs there too), picks free ports, starts
#                          both servers, waits for SELECT 1 over HTTP and
#                          loads deploy/clickhouse/schema.sql on both. Exports
#                          CH1_HTTP CH2_HTTP CH1_TCP CH2_TCP (and
#                          CH1_INTERSERVER CH2_INTERSERVER). Cluster `jsampled`:
#                          shard 1 = server 1, shard 2 = server 2.
#   ch_server_stop N       stops server N (SIGTERM, then SIGKILL after
#                          CH_STOP_TIMEOUT s); its data stays.
#   ch_server_start N      starts server N again on the same ports and data.
#   ch_query N SQL [setting=value...]
#                          runs SQL on server N over HTTP, prints the result;
#                          an HTTP error or no answer: message, return 1.
#   ch_insert [-z] N SQL [setting=value...]
#                          POSTs stdin as the data of SQL (an INSERT ... FORMAT
#                          ..., sent as ?query=); -z: gzip the body and send
#                          Content-Encoding: gzip.
#   ch_sql_string S        S as a quoted ClickHouse string literal.
#   ch_named_query FILE NAME [param=value...]
#                          the query `-- name: NAME` of FILE (up to a line
#                          `;`) with its {param:Type} placeholders replaced
#                          by literals (18.16 has no query parameters).
#   ch_cluster_stop        stops both servers; safe in a trap, safe twice.
#
# CH_SINGLE=1: server 1 alone, with no <remote_servers> and no schema
# loaded: a server as a user installs it (`jsamplectl fleet init` makes the
# schema).
# Settings from the environment: CH_TIMEZONE (the servers' time zone, UTC
# by default), CH_START_TIMEOUT (30 s), CH_STOP_TIMEOUT (20 s), CH_SCHEMA,
# CH_SERVER_BIN, CH_CLIENT_BIN.
# Runs the servers as the calling user: 18.16 does not refuse root.
# Both servers start and load the schema in about 0.3 s; a stop takes
# about 1 s.

CH_SERVER_BIN=${CH_SERVER_BIN:-/usr/sbin/clickhouse-server}
CH_CLIENT_BIN=${CH_CLIENT_BIN:-/usr/bin/clickhouse-client}
CH_START_TIMEOUT=${CH_START_TIMEOUT:-30}
CH_STOP_TIMEOUT=${CH_STOP_TIMEOUT:-20}
CH_SCHEMA=${CH_SCHEMA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/deploy/clickhouse/schema.sql}
CH_CLUSTER_DIR=
# shellcheck disable=SC2034 # read through ch__var
CH1_PID='' CH2_PID=''

ch__die() {
	echo "clickhouse_cluster: $*" >&2
	return 1
}

# ch__alive PID: the process exists and is not a zombie.
ch__alive() {
	local state
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 1
	state=$(sed -e 's/^.*) //' -e 's/ .*//' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# ch__port_used PORT: some TCP socket (any state, IPv4 or IPv6) has it as
# its local port.
ch__port_used() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p=":$hex" 'NR > 1 && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }'
}

# ch__pick_ports: six distinct free ports, below the kernel's ephemeral
# range (ip_local_port_range; above it if there is no room below). A port
# in that range that a stopped server leaves free can be taken by any
# outgoing connection as its local port until the server starts again
# (server 1's queued Distributed insert keeps connecting to the stopped
# shard's TCP port, and a connect can even get that very port as its own:
# TCP self-connect). A CI run found server 2's TCP port taken so.
ch__pick_ports() {
	local picked=() p tries=0 lo=20000 span eph_lo eph_hi
	read -r eph_lo eph_hi 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range || { eph_lo=32768 eph_hi=60999; }
	span=$((eph_lo - lo))
	if [ $span -lt 1000 ]; then
		lo=$((eph_hi + 1)) span=$((65536 - eph_hi - 1))
		[ $span -ge 1000 ] || ch__die "no room for test ports outside the ephemeral range $eph_lo-$eph_hi" || return 1
	fi
	while [ ${#picked[@]} -lt 6 ]; do
		tries=$((tries + 1))
		[ $tries -le 1000 ] || ch__die "no free TCP ports found" || return 1
		p=$((lo + (RANDOM * 32768 + RANDOM) % span))
		case " ${picked[*]:-} " in *" $p "*) continue ;; esac
		ch__port_used "$p" && continue
		picked+=("$p")
	done
	CH1_HTTP=${picked[0]} CH1_TCP=${picked[1]} CH1_INTERSERVER=${picked[2]}
	CH2_HTTP=${picked[3]} CH2_TCP=${picked[4]} CH2_INTERSERVER=${picked[5]}
	export CH1_HTTP CH1_TCP CH1_INTERSERVER CH2_HTTP CH2_TCP CH2_INTERSERVER
}

ch__var() { # ch__var N NAME: the value of CH<N>_<NAME>
	local v="CH$1_$2"
	printf '%s' "${!v}"
}

ch__check_n() {
	case "${1:-}" in 1 | 2) return 0 ;; esac
	ch__die "server number must be 1 or 2, not '${1:-}'"
}

# The cluster `jsampled` of both servers (none with CH_SINGLE=1).
ch__remote_servers() {
	[ "${CH_SINGLE:-}" = 1 ] && return 0
	cat <<EOF
    <remote_servers>
        <jsampled>
            <shard>
                <replica><host>127.0.0.1</host><port>$CH1_TCP</port></replica>
            </shard>
            <shard>
                <replica><host>127.0.0.1</host><port>$CH2_TCP</port></replica>
            </shard>
        </jsampled>
    </remote_servers>
EOF
}

# ch__write_config N: DIR/chN/config.xml and users.xml.
ch__write_config() {
	local n=$1 d="$CH_CLUSTER_DIR/ch$1"
	mkdir -p "$d/data" "$d/tmp" "$d/log" "$d/user_files" "$d/format_schemas"
	cat >"$d/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>information</level>
        <log>$d/log/server.log</log>
        <errorlog>$d/log/server.err.log</errorlog>
        <size>100M</size>
        <count>1</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$(ch__var "$n" HTTP)</http_port>
    <tcp_port>$(ch__var "$n" TCP)</tcp_port>
    <interserver_http_port>$(ch__var "$n" INTERSERVER)</interserver_http_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <format_schema_path>$d/format_schemas/</format_schema_path>
    <timezone>${CH_TIMEZONE:-UTC}</timezone>
    <mark_cache_size>268435456</mark_cache_size>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <max_concurrent_queries>50</max_concurrent_queries>
    <users_config>$d/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
$(ch__remote_servers)
</yandex>
EOF
	cat >"$d/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <!-- An idle connection (another server's pooled one) notices a
                 shutdown within poll_interval s: 10 by default, which made
                 a stop take 10 s. -->
            <poll_interval>1</poll_interval>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default></default>
    </quotas>
</yandex>
EOF
}

# ch__launch N: starts server N in the background (no wait).
ch__launch() {
	local n=$1 d="$CH_CLUSTER_DIR/ch$1" pid
	"$CH_SERVER_BIN" --config-file="$d/config.xml" >>"$d/log/stdout.log" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$d/pid"
	printf -v "CH${n}_PID" '%s' "$pid"
}

ch__log_tail() {
	local d="$CH_CLUSTER_DIR/ch$1" f
	for f in "$d/log/stdout.log" "$d/log/server.err.log" "$d/log/server.log"; do
		[ -s "$f" ] || continue
		echo "--- $f (last 25 lines):" >&2
		tail -n 25 "$f" >&2
	done
}

# ch__wait_up N: SELECT 1 answers over HTTP within CH_START_TIMEOUT s.
# Returns 2 if the server died with a port already taken (the caller may
# retry on other ports), 1 on any other failure.
ch__wait_up() {
	local n=$1 port pid deadline out
	port=$(ch__var "$n" HTTP)
	pid=$(ch__var "$n" PID)
	deadline=$((SECONDS + CH_START_TIMEOUT))
	while [ $SECONDS -lt $deadline ]; do
		out=$(curl -sS --max-time 2 "http://127.0.0.1:$port/?query=SELECT%201" 2>/dev/null) || out=
		[ "$out" = 1 ] && return 0
		if ! ch__alive "$pid"; then
			wait "$pid" 2>/dev/null || true
			if grep -qs -e 'Address already in use' -e 'Net Exception: Address' \
				"$CH_CLUSTER_DIR/ch$n/log/stdout.log" "$CH_CLUSTER_DIR/ch$n/log/server.err.log"; then
				return 2
			fi
			echo "clickhouse_cluster: server $n (pid $pid) exited at start" >&2
			ch__log_tail "$n"
			return 1
		fi
		sleep 0.1
	done
	echo "clickhouse_cluster: server $n did not answer SELECT 1 on http://127.0.0.1:$port/ within $CH_START_TIMEOUT s" >&2
	ch__log_tail "$n"
	return 1
}

ch_cluster_start() {
	local dir=${1:-} attempt rc n servers="1 2"
	[ "${CH_SINGLE:-}" = 1 ] && servers=1
	[ -n "$dir" ] || ch__die "usage: ch_cluster_start DIR" || return 1
	[ -x "$CH_SERVER_BIN" ] || ch__die "no $CH_SERVER_BIN (apt-get install clickhouse-server, or make deps)" || return 1
	[ -x "$CH_CLIENT_BIN" ] || ch__die "no $CH_CLIENT_BIN (apt-get install clickhouse-client, or make deps)" || return 1
	[ -r "$CH_SCHEMA" ] || ch__die "no schema at $CH_SCHEMA" || return 1
	command -v curl >/dev/null || ch__die "curl is not installed" || return 1
	mkdir -p "$dir"
	CH_CLUSTER_DIR=$(cd "$dir" && pwd)
	export CH_CLUSTER_DIR
	for attempt in 1 2 3; do
		rm -rf "$CH_CLUSTER_DIR/ch1" "$CH_CLUSTER_DIR/ch2"
		ch__pick_ports || return 1
		for n in $servers; do
			ch__write_config "$n"
			ch__launch "$n"
		done
		rc=0
		for n in $servers; do
			ch__wait_up "$n" || { rc=$?; break; }
		done
		[ $rc -eq 0 ] && break
		ch_cluster_stop
		[ $rc -eq 2 ] && [ $attempt -lt 3 ] && {
			echo "clickhouse_cluster: a port was taken meanwhile; retrying on other ports" >&2
			continue
		}
		[ $rc -eq 2 ] && ch__log_tail "$n"
		ch__die "the cluster did not start (server $n)" || return 1
	done
	[ "${CH_SINGLE:-}" = 1 ] && return 0
	for n in 1 2; do
		"$CH_CLIENT_BIN" --host 127.0.0.1 --port "$(ch__var "$n" TCP)" --multiquery <"$CH_SCHEMA" ||
			ch__die "loading $CH_SCHEMA on server $n failed" || return 1
	done
}

ch_server_stop() {
	local n=${1:-} pid deadline
	ch__check_n "$n" || return 1
	pid=$(ch__var "$n" PID)
	[ -n "$pid" ] || return 0
	if ch__alive "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		deadline=$((SECONDS + CH_STOP_TIMEOUT))
		while ch__alive "$pid" && [ $SECONDS -lt $deadline ]; do
			sleep 0.1
		done
		if ch__alive "$pid"; then
			echo "clickhouse_cluster: server $n did not stop on SIGTERM within $CH_STOP_TIMEOUT s; SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
			while ch__alive "$pid"; do sleep 0.1; done
		fi
	fi
	wait "$pid" 2>/dev/null || true
	printf -v "CH${n}_PID" '%s' ""
}

ch_server_start() {
	local n=${1:-} pid rc=0
	ch__check_n "$n" || return 1
	[ -n "$CH_CLUSTER_DIR" ] && [ -f "$CH_CLUSTER_DIR/ch$n/config.xml" ] ||
		ch__die "ch_server_start $n: no cluster (call ch_cluster_start first)" || return 1
	pid=$(ch__var "$n" PID)
	if ch__alive "$pid"; then
		ch__die "ch_server_start $n: server $n is already running (pid $pid)" || return 1
	fi
	ch__launch "$n"
	ch__wait_up "$n" || rc=$?
	[ $rc -eq 2 ] && { echo "clickhouse_cluster: server $n's ports were taken while it was stopped" >&2; ch__log_tail "$n"; }
	[ $rc -eq 0 ] || ch__die "server $n did not start again" || return 1
}

ch_cluster_stop() {
	ch_server_stop 1 || true
	ch_server_stop 2 || true
	return 0
}

# ch__curl N BODYFILE CURLARGS...: a POST to server N, the answer's body to
# BODYFILE; fails (with the body on stderr) unless the status is 200.
ch__curl() {
	local n=$1 out=$2 code
	shift 2
	code=$(curl -sS -o "$out" -w '%{http_code}' "$@" "http://127.0.0.1:$(ch__var "$n" HTTP)/") || {
		echo "clickhouse_cluster: no HTTP answer from server $n (port $(ch__var "$n" HTTP))" >&2
		cat "$out" >&2 2>/dev/null || true
		return 1
	}
	if [ "$code" != 200 ]; then
		echo "clickhouse_cluster: server $n answered HTTP $code:" >&2
		cat "$out" >&2
		return 1
	fi
}

# ch__settings_args [setting=value...]: CH__ARGS, the curl --url-query
# arguments. Always wait_end_of_query=1: the server answers only once the
# whole result is there, so an error raised midway still gives an HTTP
# error status rather than a 200 with the error text at the end of the body.
ch__settings_args() {
	local kv
	CH__ARGS=(--url-query wait_end_of_query=1)
	for kv in "$@"; do
		case "$kv" in *=*) ;; *) ch__die "not a setting=value: '$kv'" || return 1 ;; esac
		CH__ARGS+=(--url-query "$kv")
	done
}

ch_query() {
	local n=${1:-} sql=${2:-} out rc=0
	ch__check_n "$n" || return 1
	[ -n "$sql" ] || ch__die "usage: ch_query N SQL [setting=value...]" || return 1
	shift 2
	ch__settings_args "$@" || return 1
	out=$(mktemp "${TMPDIR:-/tmp}/ch_query.XXXXXX")
	printf '%s' "$sql" | ch__curl "$n" "$out" "${CH__ARGS[@]}" --data-binary @- || rc=$?
	if [ $rc -eq 0 ]; then
		cat "$out"
	else
		echo "clickhouse_cluster: the query was: $sql" >&2
	fi
	rm -f "$out"
	return $rc
}

ch_insert() {
	local gzip=0 n sql out rc=0
	if [ "${1:-}" = -z ]; then
		gzip=1
		shift
	fi
	n=${1:-}
	sql=${2:-}
	ch__check_n "$n" || return 1
	[ -n "$sql" ] || ch__die "usage: ch_insert [-z] N 'INSERT ... FORMAT ...' [setting=value...] <data" || return 1
	shift 2
	ch__settings_args "$@" || return 1
	CH__ARGS+=(--url-query "query=$sql")
	out=$(mktemp "${TMPDIR:-/tmp}/ch_insert.XXXXXX")
	if [ $gzip -eq 1 ]; then
		gzip -c | ch__curl "$n" "$out" "${CH__ARGS[@]}" -H 'Content-Encoding: gzip' --data-binary @- || rc=$?
	else
		ch__curl "$n" "$out" "${CH__ARGS[@]}" --data-binary @- || rc=$?
	fi
	[ $rc -eq 0 ] && cat "$out"
	[ $rc -eq 0 ] || echo "clickhouse_cluster: the insert was: $sql" >&2
	rm -f "$out"
	return $rc
}

ch_sql_string() {
	local s=${1-} bs=\\ q=\'
	s=${s//"$bs"/"$bs$bs"}
	s=${s//"$q"/"$bs$q"}
	printf "'%s'" "$s"
}

ch_named_query() {
	local file=${1:-} name=${2:-} sql kv out='' rest m lit re
	local -A params=()
	[ -r "$file" ] && [ -n "$name" ] || ch__die "usage: ch_named_query FILE NAME [param=value...]" || return 1
	shift 2
	sql=$(awk -v name="$name" '
		$0 == "-- name: " name { on = 1; next }
		on && $0 == ";" { done = 1; exit }
		on { print }
		END { exit !done }' "$file") || ch__die "no query '-- name: $name' ended by a line ';' in $file" || return 1
	for kv in "$@"; do
		[ "${kv%%=*}" != "$kv" ] || ch__die "not a param=value: '$kv'" || return 1
		params[${kv%%=*}]=${kv#*=}
	done
	# Left to right, so that a value is never scanned for placeholders.
	re='\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9]+)\}'
	rest=$sql
	while [[ $rest =~ $re ]]; do
		m=${BASH_REMATCH[0]}
		[ -n "${params[${BASH_REMATCH[1]}]+set}" ] ||
			ch__die "query $name: no value given for $m" || return 1
		case "${BASH_REMATCH[2]}" in
		String) lit=$(ch_sql_string "${params[${BASH_REMATCH[1]}]}") ;;
		UInt8 | UInt16 | UInt32 | UInt64)
			lit=${params[${BASH_REMATCH[1]}]}
			[[ $lit =~ ^[0-9]+$ ]] || ch__die "query $name: $m: '$lit' is not a number" || return 1
			;;
		*) ch__die "query $name: $m: type not handled" || return 1 ;;
		esac
		out+=${rest%%"$m"*}$lit
		rest=${rest#*"$m"}
	done
	printf '%s\n' "$out$rest"
}
