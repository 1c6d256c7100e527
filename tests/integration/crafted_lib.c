/* SPDX-License-Identifier: GPL-2.0-only */
/* The library test_hostile.sh crafts hostile copies of (hostile_elf.py):
 * one function that keeps the CPU busy, under a long name whose bytes the
 * crafted copies overwrite in the symbol table. */
int jsampled_crafted_spin_function_name_of_forty_bytes(int x);

int jsampled_crafted_spin_function_name_of_forty_bytes(int x)
{
	volatile int v = x;

	for (int i = 0; i < 200000; i++)
		v = v * 31 + i;
	return v;
}
