/* SPDX-License-Identifier: GPL-2.0-only */
/* The systemd service protocol (Type=notify): READY once jsampled samples
 * and serves, STATUS with what it is doing, WATCHDOG pings from the main
 * loop (so a wedged loop gets the service restarted), STOPPING at exit.
 * Without NOTIFY_SOCKET every call is a no-op. */
#ifndef JSAMPLED_SERVICE_NOTIFY_H
#define JSAMPLED_SERVICE_NOTIFY_H

#include <stdint.h>

/* Reads the watchdog interval systemd asked for (WATCHDOG_USEC). */
void service_notify_init(uint64_t now_ns);
void service_notify_ready(const char *status);
/* Called from the main loop's maintenance timer: pings the watchdog when
 * half its interval has passed, and refreshes STATUS. */
void service_notify_tick(uint64_t now_ns, const char *status);
/* A SIGHUP reload begins; READY=1 (service_notify_ready) ends it. */
void service_notify_reloading(void);
void service_notify_stopping(void);

#endif
