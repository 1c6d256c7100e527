#!/bin/sh
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
	case $inc in *.skel.h|vmlinux.h|profile.pb-c.h) continue ;; esac
	[ -f "$(dirname "$file")/$inc" ] || [ -f "$inc" ] || echo "$file: $inc"
done)
if [ -n "$missing" ]; then
	echo "FAIL: includes of no file:"; echo "$missing"; fail=1
fi
[ $fail = 0 ] && echo "layout: no ../ includes, userspace/ includes nothing of daemon/, every include resolves"
exit $fail
