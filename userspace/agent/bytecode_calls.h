/* SPDX-License-Identifier: GPL-2.0-only */
/* The invoke instructions of a method's bytecode: their bcis, opcodes and
 * constant-pool indexes (as JVMTI's GetBytecodes gives them: the class
 * file's, consistent with GetConstantPool). jsampled uses them to check
 * decoded traces: a Java frame that calls another (not through the VM)
 * must stand at one of them, and one that calls the method the next frame
 * runs (constant_pool.h). */
#ifndef JSAGENT_BYTECODE_CALLS_H
#define JSAGENT_BYTECODE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#define OP_INVOKEVIRTUAL 0xb6
#define OP_INVOKESPECIAL 0xb7
#define OP_INVOKESTATIC 0xb8
#define OP_INVOKEINTERFACE 0xb9
#define OP_INVOKEDYNAMIC 0xba

struct bytecode_call {
	uint16_t bci;
	uint8_t opcode;
	uint16_t cp_index;
};

/* Fills calls (up to max) with the invoke instructions of code[0..len) in
 * order and returns how many there are (possibly more than max), or -1 if
 * the bytecode does not parse. */
int bytecode_calls(const uint8_t *code, size_t len, struct bytecode_call *calls, size_t max);

#endif
