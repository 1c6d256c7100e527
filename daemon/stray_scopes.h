/*
 * Stray descriptors in C2's non-safepoint debug info.
 *
 * C2 gives each machine instruction the inline scope of the ideal node it
 * came from, and GVN shares one node between all the inlined calls that
 * compute the same value (a constant, a static field's base, a
 * loop-invariant load): the node keeps the scope of the call that created
 * it first. So a hot loop of one inlined call can hold descriptors naming
 * another inlined call of the same method, one that is not running at all,
 * and every instruction before such a descriptor is charged to it.
 * Measured on tests/java/PhasedWorkload (runPhase compiled with its phases
 * inlined): 2.4% of phaseSort's samples were charged to phaseHash@54 that
 * way, with a timeline of the phases as the truth.
 *
 * A descriptor is stray when it names a call that neither contains nor is
 * contained in the call of the descriptor before it, and a descriptor of
 * that same call (or of one inlined in it) follows within a few entries:
 * the code around it belongs to the call it interrupts.
 */
#ifndef JSAMPLED_STRAY_SCOPES_H
#define JSAMPLED_STRAY_SCOPES_H

#include "codemap.h"

/* Sets pc_scope.stray on b's descriptors (sorted by pc) that are stray. */
void stray_scopes_mark(struct code_blob *b);

#endif
