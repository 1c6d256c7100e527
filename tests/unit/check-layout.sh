#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The layout's rules (docs/internals.md, Source layout): includes are
# written from the repository root, never with "../"; the agent, jsamplectl
# and the profile library include nothing of daemon/.
set -u
cd "$(dirname "$0")/../.."
fail=0
bad=$(grep -rn --include='*.[ch]' '#include "\.\./' bpf daemon userspace tests)
if [ -n "$bad" ]; then
	echo "FAIL: includes with ../:"; echo "$bad"; fail=1
fi
bad=$(grep -rn --include='*.[ch]' '#include "daemon/' userspace)
if [ -n "$bad" ]; then
	echo "FAIL: userspace/ (agent, jsamplectl, profile library) includes daemon/:"; echo "$bad"; fail=1
fi
# Every quoted include names a file that exists: beside the includer, from
# the root, or generated into build/.
missing=$(grep -rHo --include='*.[ch]' '^#include "[^"]*"' bpf daemon userspace tests | while IFS= read -r hit; do
	file=${hit%%:*}
	inc=${hit#*\"}; inc=${inc%\"}
	case $inc in *.skel.h|vmlinux.h|profile.pb-c.h|park_binder_class.h) continue ;; esac
	[ -f "$(dirname "$file")/$inc" ] || [ -f "$inc" ] || echo "$file: $inc"
done)
if [ -n "$missing" ]; then
	echo "FAIL: includes of no file:"; echo "$missing"; fail=1
fi
# Every source file carries the project's license identifier, and the BPF
# program tells the kernel the same license.
unmarked=$(git ls-files 'bpf/*' 'daemon/*' 'userspace/*' 'tests/*.c' 'tests/*.h' 'tests/*.sh' 'tests/*.py' 'tests/*.java' \
	Makefile .ci/run 2>/dev/null | grep -E '\.(c|h|sh|py|java)$|^Makefile$|^\.ci/run$' | while IFS= read -r f; do
	head -3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-only' || echo "$f"
done)
if [ -n "$unmarked" ]; then
	echo "FAIL: no SPDX-License-Identifier: GPL-2.0-only in:"; echo "$unmarked"; fail=1
fi
grep -q '^char LICENSE\[\] SEC("license") = "GPL";' bpf/sampler.bpf.c || {
	echo 'FAIL: bpf/sampler.bpf.c does not declare the license "GPL" (GPL-2.0-only)'; fail=1
}
[ $fail = 0 ] && echo "layout: no ../ includes, userspace/ includes nothing of daemon/, every include resolves, every file under GPL-2.0-only"
exit $fail
