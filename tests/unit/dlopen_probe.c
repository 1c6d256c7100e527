/* SPDX-License-Identifier: GPL-2.0-only */
/* A library of the tests' own for test_native_unwind's dlopen case: no
 * other program maps it, so it is certainly loaded only after the unwinder
 * first read the test's memory map. */
int jsampled_dlopen_probe(int x);

int jsampled_dlopen_probe(int x)
{
	return x * 3 + 1;
}
