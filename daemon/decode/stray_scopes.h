/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stray descriptors in C2's non-safepoint debug info.
 *
 * C2 gives each machine instruction the inline scope of the ideal node it
 * came from (output.cpp, NonSafepointEmitter), and GVN shares one node
 * between all the inlined calls that compute the same value (a constant,
 * a poll, a static field's base): such a node has one call's scope -
 * presumably why the descriptors seen below appear. So a hot loop of one
 * inlined call can hold descriptors naming another inlined call of the
 * same method, one that is not running at all, and every instruction
 * before such a descriptor is charged to it.
 * Measured on tests/java/PhasedWorkload (runPhase compiled with its phases
 * inlined): 2.4% of phaseSort's samples were charged to phaseHash@54 that
 * way, with a timeline of the phases as the truth.
 *
 * A descriptor stands alone when its call neither contains nor is
 * contained in the calls of the kept descriptors on both sides, which are
 * one call (or one inside the other): it sits in that call's code. Such a
 * descriptor is taken for a shared node's when its scope (bcis and all)
 * stands alone at least 3 times, in code of at least two different calls:
 * two inlined calls unrolled together in one loop interleave with each
 * other only, and stay as they are. Rounds mark the scope that stands
 * alone most often, then look again (up to 8 scopes per blob). Shared
 * nodes' descriptors also come in runs where none stands alone (JDK 25:
 * phaseHash@54 and phaseRecurse@20 one after the other in phaseMatrix's
 * loop, 0.9 % of the profile misplaced): with the scopes the rounds found
 * seen through, a descriptor of one of them between two kept descriptors
 * of one call unrelated to it is stray too. An interrupted pc takes the
 * first kept descriptor after it.
 */
#ifndef JSAMPLED_STRAY_SCOPES_H
#define JSAMPLED_STRAY_SCOPES_H

#include "codemap.h"

/* Sets pc_scope.stray on b's descriptors (sorted by pc) that are stray. */
void stray_scopes_mark(struct code_blob *b);

#endif
