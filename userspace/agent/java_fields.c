/* SPDX-License-Identifier: GPL-2.0-only */
#include "java_fields.h"

/* The ID of an instance field is offset << 2 with bit 1 set; bit 0 is set
 * when -Xcheck:jni adds a class hash above the 7 offset bits. */
int64_t java_field_offset(JNIEnv *jni, jclass cls, const char *name, const char *sig)
{
	jfieldID id = cls ? (*jni)->GetFieldID(jni, cls, name, sig) : NULL;
	uintptr_t v = (uintptr_t)id;

	if (!id) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	if (!(v & 2))
		return -1;
	return (int64_t)((v & 1) ? (v >> 2) & 0x7f : v >> 2);
}

jclass java_find_class(JNIEnv *jni, const char *name)
{
	jclass c = (*jni)->FindClass(jni, name);

	if (!c)
		(*jni)->ExceptionClear(jni);
	return c;
}

int64_t java_reference_size(const int64_t *offs, int n)
{
	int64_t best = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int64_t d = offs[i] - offs[j];

			if (offs[i] > 0 && offs[j] > 0 && d > 0 && (!best || d < best))
				best = d;
		}
	return best;
}

int java_narrow_oops(const struct vmstructs *vs, int64_t *base, int64_t *shift)
{
	struct vm_field b = vmstructs_field(vs, "CompressedOops", "_base");
	struct vm_field s = vmstructs_field(vs, "CompressedOops", "_shift");
	uint64_t bv = 0;
	int64_t sv = 0;

	if (!b.present) {
		b = vmstructs_field(vs, "CompressedOops", "_narrow_oop._base");
		s = vmstructs_field(vs, "CompressedOops", "_narrow_oop._shift");
	}
	if (!b.present || !s.present || vm_read_ptr(&b, 0, &bv) != 0 || vm_read_int(&s, 0, &sv) != 0 || sv < 0 ||
	    sv > 7)
		return -1;
	*base = (int64_t)bv;
	*shift = sv;
	return 0;
}
