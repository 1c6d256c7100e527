/* SPDX-License-Identifier: GPL-2.0-only */
#include "service_notify.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "daemon/support/log.h"

static uint64_t watchdog_ns; /* 0: no watchdog */
static uint64_t last_ping_ns;
static char last_status[256];

void service_notify_init(uint64_t now_ns)
{
	uint64_t usec = 0;

	/* > 0 only if WATCHDOG_USEC is set (and WATCHDOG_PID, if set, is us). */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		watchdog_ns = usec * 1000;
		log_info("systemd watchdog every %llu ms", (unsigned long long)(usec / 1000));
	}
	last_ping_ns = now_ns;
}

static void set_status(const char *status, const char *extra)
{
	if (!extra && strcmp(status, last_status) == 0)
		return;
	snprintf(last_status, sizeof(last_status), "%s", status);
	if (sd_notifyf(0, "%sSTATUS=%s", extra ? extra : "", status) < 0)
		log_debug("sd_notify failed");
}

void service_notify_ready(const char *status)
{
	set_status(status, "READY=1\n");
}

void service_notify_tick(uint64_t now_ns, const char *status)
{
	/* At least every half interval, as sd_watchdog_enabled(3) asks: the
	 * timer ticks once a second, so a third of the interval (WatchdogSec
	 * of 2 s or more) never lets a tick's jitter stretch it past half. */
	if (watchdog_ns && now_ns - last_ping_ns >= watchdog_ns / 3) {
		sd_notify(0, "WATCHDOG=1");
		last_ping_ns = now_ns;
	}
	set_status(status, NULL);
}

void service_notify_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
		   (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
	last_status[0] = 0;
}

void service_notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}
