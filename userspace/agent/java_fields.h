/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a Java field lies in its objects, from its JNI field ID, which
 * HotSpot encodes as the field's offset (jfieldIDWorkaround.hpp): the
 * Java fields the BPF program reads are not in vmStructs. */
#ifndef JSAGENT_JAVA_FIELDS_H
#define JSAGENT_JAVA_FIELDS_H

#include <jni.h>
#include <stdint.h>

#include "vmstructs.h"

/* An instance field's offset in bytes, -1 if it is not there. */
int64_t java_field_offset(JNIEnv *jni, jclass cls, const char *name, const char *sig);

/* A loaded class, or NULL (no exception left pending). */
jclass java_find_class(JNIEnv *jni, const char *name);

/* The size of a reference (4 with compressed oops, 8 without) from the
 * offsets of n reference fields of one class, which HotSpot lays out
 * together: their smallest distance. 0 if it cannot tell. */
int64_t java_reference_size(const int64_t *offs, int n);

/* How narrow oops decode (CompressedOops::_base and _shift). Returns 0, or
 * -1 if vmStructs lacks them. */
int java_narrow_oops(const struct vmstructs *vs, int64_t *base, int64_t *shift);

#endif
