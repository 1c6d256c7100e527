/* The call sites of a method's bytecode: the bcis of its invoke
 * instructions. jsampled uses them to check decoded traces: a Java frame
 * that calls another (not through the VM) must stand at one of them. */
#ifndef JSAGENT_BYTECODE_CALLS_H
#define JSAGENT_BYTECODE_CALLS_H

#include <stddef.h>
#include <stdint.h>

/* Fills bcis (up to max) with the invoke sites of code[0..len) in order and
 * returns how many there are (possibly more than max), or -1 if the
 * bytecode does not parse. */
int bytecode_call_sites(const uint8_t *code, size_t len, uint16_t *bcis, size_t max);

#endif
