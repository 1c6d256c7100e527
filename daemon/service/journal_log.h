/* SPDX-License-Identifier: GPL-2.0-only */
/* jsampled's log goes to the journal, with priorities, when systemd
 * connected its stderr to it (JOURNAL_STREAM names stderr's device and
 * inode); otherwise it stays on stderr. */
#ifndef JSAMPLED_JOURNAL_LOG_H
#define JSAMPLED_JOURNAL_LOG_H

/* Installs the journal as the log's sink if stderr is the journal. */
void journal_log_init(void);

#endif
