#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The sampler's perf events (daemon/ingest/sampler_events.h) on this
# machine's kernel, without jsampled around them: tests/integration/
# sampler_events.c opens them on a child's threads (those that exist and
# one started later) and counts, with an empty BPF program, which ticks
# reach it. Needs root, as every integration test.
set -u
. "$(dirname "$0")/lib.sh"
"$B/tests/integration/sampler_events" || fail "the sampler's perf events on this kernel"
echo "PASS: the sampler's perf events reach the threads they should"
