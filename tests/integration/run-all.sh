#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs every integration test; fails if any fails. Each test prints its own
# figures and, on failure, why.
set -u
cd "$(dirname "$0")"
failed=()
for t in test_*.sh; do
	echo "=== $t"
	start=$(date +%s)
	if bash "$t"; then
		echo "=== $t passed ($(( $(date +%s) - start )) s)"
	else
		echo "=== $t FAILED"
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "integration tests failed: ${failed[*]}"
	exit 1
fi
echo "all integration tests passed"
