/* SPDX-License-Identifier: GPL-2.0-only */
/* Every outcome of decoding one sample has a name; the names are what
 * `jsamplectl stats` shows. X(enum suffix, name, description). */
#ifndef JSAMPLED_DECODE_REASONS_H
#define JSAMPLED_DECODE_REASONS_H

#define DECODE_FAILURES(X)                                                                   \
	X(NO_LAYOUT, "no_layout", "the agent never reported the VM layout")                  \
	X(EMPTY_STACK, "empty_stack", "no user stack was copied")                            \
	X(TOP_IN_NATIVE, "top_in_native", "Java thread in native/VM code without a usable frame anchor") \
	X(TOP_IN_STUB, "top_in_stub", "interrupted in a stub or adapter")                    \
	X(PROLOGUE, "prologue", "interrupted in a compiled method's prologue")              \
	X(UNKNOWN_CODE, "unknown_code", "pc in the code cache but in no known code blob")     \
	X(UNKNOWN_FRAME_SIZE, "unknown_frame_size", "compiled frame without a known frame size") \
	X(BAD_RETURN_ADDRESS, "bad_return_address", "a return address points into no known code") \
	X(NOT_A_CALL_SITE, "not_a_call_site", "a return address into compiled code is not a call site") \
	X(RETURN_INTO_STUB, "return_into_stub", "a return address points into a stub")       \
	X(INTERP_BAD_METHOD, "interp_bad_method", "interpreted frame without a known Method*") \
	X(INTERP_ENTRY, "interp_entry", "no caller found for a method entry in the interpreter") \
	X(BAD_FRAME_POINTER, "bad_frame_pointer", "a frame or stack pointer outside the stack") \
	X(BAD_ENTRY_FRAME, "bad_entry_frame", "an entry frame's call wrapper is unreadable")  \
	X(DEPTH_LIMIT, "depth_limit", "more frames than the decoder follows")                 \
	X(WORK_LIMIT, "work_limit", "the walk took more steps than a sample may cost") \
	X(BEFORE_AGENT, "before_agent", "taken before the agent came, in code or a method unloaded by then") \
	X(IMPOSSIBLE_CALL, "impossible_call", "the top Java frame's caller does not call it (code the agent had not reported)")

/* How the top of a decoded trace was found: one counter per heuristic, so
 * each one's share of the decoded samples is visible in `stats`. */
#define DECODE_RULES(X)                                                                        \
	X(COMPILED, "compiled", "top frame in compiled code, walked by frame size")            \
	X(PARTIAL_FRAME, "partial_frame", "top frame in a compiled prologue or epilogue")      \
	X(STUB_SECTION, "stub_section", "top pc in a compiled method's stub section")          \
	X(SHIFTED_FRAME, "shifted_frame", "top frame in compiled code below words an intrinsic pushed") \
	X(INTERPRETED, "interpreted", "top frame interpreted, walked through its frame pointer") \
	X(ANCHOR, "anchor", "thread outside Java code: its frame anchor named the last Java frame") \
	X(STUB_FRAME, "stub_frame", "top frame in a stub with a known frame size")             \
	X(INTERP_ENTRY, "interp_entry", "top frame being built by an interpreter method entry") \
	X(SCAN, "scan", "caller found by scanning for a return address, validated by the walk on") \
	X(FRAME_CHAIN, "frame_chain", "no frame anchor (sampled before the agent): native frames' rbp chain led to the last Java frame")

enum decode_rule {
	DECODE_RULE_NONE = 0,
#define X(e, n, d) DECODE_RULE_##e,
	DECODE_RULES(X)
#undef X
	DECODE_RULE_COUNT
};

const char *decode_rule_name(int rule);
const char *decode_rule_description(int rule);

enum decode_failure {
	DECODE_FAILURE_NONE = 0,
#define X(e, n, d) DECODE_FAIL_##e,
	DECODE_FAILURES(X)
#undef X
	DECODE_FAILURE_COUNT
};

const char *decode_failure_name(int reason);
const char *decode_failure_description(int reason);

#endif
