/* SIGHUP: read the command line and config file again and apply what can
 * change while running, keeping every profile. Settings baked into the
 * loaded BPF program or the open sockets are reported as needing a restart. */
#ifndef JSAMPLED_RELOAD_H
#define JSAMPLED_RELOAD_H

#include "daemon.h"

/* 0 if applied, -1 if the new settings are invalid (the old ones stay). */
int daemon_reload(struct daemon *d, int argc, char **argv);

#endif
