// SPDX-License-Identifier: GPL-2.0-only
package jsampled;

/**
 * Defined by jsampled's agent in the boot class loader (JNI DefineClass),
 * never on any class path. HotSpot warns ("Re-registering of platform
 * native method") when a JDK class's native method is bound by code of
 * another class loader; bound from here, through a Java caller of the
 * boot loader, it is not.
 */
final class ParkBinder {
    private ParkBinder() {
    }

    /** Binds Unsafe.park to the function at entry. */
    static void bind(long entry) {
        bind0(entry);
    }

    private static native void bind0(long entry);
}
