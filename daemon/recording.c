#include "recording.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "clock.h"

struct recording {
	gzFile gz;
	int error;
	uint64_t events;
	uint8_t *buf;
	uint32_t cap;
};

struct recording *recording_create(const char *path, int level)
{
	struct recording *r = calloc(1, sizeof(*r));
	char mode[4] = "wb1";

	if (!r)
		return NULL;
	if (level >= 1 && level <= 9)
		mode[2] = (char)('0' + level);
	r->gz = gzopen(path, mode);
	if (!r->gz || gzwrite(r->gz, RECORDING_MAGIC, 8) != 8) {
		if (r->gz)
			gzclose(r->gz);
		free(r);
		return NULL;
	}
	return r;
}

void recording_close(struct recording *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->buf);
	free(r);
}

void recording_write_at(struct recording *r, uint8_t type, pid_t pid, uint64_t t, const void *payload, size_t len)
{
	uint8_t hdr[17];
	uint32_t p = (uint32_t)pid, l = (uint32_t)len;

	if (!r || r->error || len > RECORDING_MAX_ENTRY)
		return;
	hdr[0] = type;
	memcpy(hdr + 1, &p, 4);
	memcpy(hdr + 5, &t, 8);
	memcpy(hdr + 13, &l, 4);
	if (gzwrite(r->gz, hdr, sizeof(hdr)) != (int)sizeof(hdr) ||
	    (len && gzwrite(r->gz, payload, (unsigned)len) != (int)len)) {
		r->error = EIO;
		return;
	}
	r->events++;
}

void recording_write(struct recording *r, uint8_t type, pid_t pid, const void *payload, size_t len)
{
	recording_write_at(r, type, pid, monotonic_ns(), payload, len);
}

int recording_error(const struct recording *r)
{
	return r ? r->error : 0;
}

uint64_t recording_events(const struct recording *r)
{
	return r ? r->events : 0;
}

struct recording *recording_open(const char *path)
{
	struct recording *r = calloc(1, sizeof(*r));
	char magic[8];

	if (!r)
		return NULL;
	r->gz = gzopen(path, "rb");
	if (!r->gz || gzread(r->gz, magic, 8) != 8 || memcmp(magic, RECORDING_MAGIC, 8) != 0) {
		if (r->gz)
			gzclose(r->gz);
		free(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

int recording_next(struct recording *r, uint8_t *type, pid_t *pid, uint64_t *time_ns,
		   const uint8_t **payload, uint32_t *len)
{
	uint8_t hdr[17];
	int n = gzread(r->gz, hdr, sizeof(hdr));
	uint32_t p, l;

	if (n == 0)
		return 0;
	if (n != (int)sizeof(hdr))
		return -1;
	*type = hdr[0];
	memcpy(&p, hdr + 1, 4);
	memcpy(time_ns, hdr + 5, 8);
	memcpy(&l, hdr + 13, 4);
	if (l > RECORDING_MAX_ENTRY)
		return -1;
	if (l > r->cap) {
		uint8_t *b = realloc(r->buf, l);
		if (!b)
			return -1;
		r->buf = b;
		r->cap = l;
	}
	if (l && gzread(r->gz, r->buf, l) != (int)l)
		return -1;
	*pid = (pid_t)p;
	*payload = r->buf;
	*len = l;
	return 1;
}
