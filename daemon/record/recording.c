/* SPDX-License-Identifier: GPL-2.0-only */
#include "recording.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "daemon/support/clock.h"
#include "recording_stacks.h"

/* Recordings are written with zstd: at 10 kHz a JVM's samples are tens of
 * MB/s of stack copies, and zlib's inflate and CRC were most of a replay's
 * time. Files written before are gzip; both are read (by their magic). */
#define ZSTD_FRAME_MAGIC 0xFD2FB528u
#define WRITE_BUFFER_BYTES (256u << 10)

struct recording {
	int error;
	uint64_t events;
	/* One of the two codecs is set. */
	gzFile gz;
	FILE *f;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	/* Writing: uncompressed bytes waiting for the compressor. Reading:
	 * compressed input (in) and decompressed output not yet consumed. */
	uint8_t *in;
	size_t in_cap, in_pos, in_len;
	uint8_t *out;
	size_t out_cap, out_pos, out_len;
	bool at_eof;
	bool in_frame; /* the last frame read has not ended: EOF now is a truncation */
	/* The current entry's payload (aligned: payloads are structs). */
	uint8_t *buf;
	uint32_t cap;
	/* The threads' last stacks (REC_SAMPLE_SHARED); reading, also the
	 * buffers samples are read into. */
	struct recording_stacks stacks;
};

/* Compresses what is buffered (ending the frame at the close) and writes it. */
static int zstd_flush(struct recording *r, ZSTD_EndDirective end)
{
	ZSTD_inBuffer in = {r->in, r->in_len, 0};
	size_t left;

	do {
		ZSTD_outBuffer out = {r->out, r->out_cap, 0};
		left = ZSTD_compressStream2(r->cctx, &out, &in, end);
		if (ZSTD_isError(left) || fwrite(r->out, 1, out.pos, r->f) != out.pos)
			return -1;
	} while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
	r->in_len = 0;
	return 0;
}

static int write_bytes(struct recording *r, const void *p, size_t len)
{
	const uint8_t *s = p;

	if (r->gz)
		return len && gzwrite(r->gz, p, (unsigned)len) != (int)len ? -1 : 0;
	while (len) {
		size_t n = r->in_cap - r->in_len < len ? r->in_cap - r->in_len : len;
		memcpy(r->in + r->in_len, s, n);
		r->in_len += n;
		s += n;
		len -= n;
		if (r->in_len == r->in_cap && zstd_flush(r, ZSTD_e_continue) != 0)
			return -1;
	}
	return 0;
}

/* level 1 (fast) .. 9 (small), spread over zstd's 1 .. 19. */
static int zstd_level(int level)
{
	if (level < 1 || level > 9)
		level = 1;
	return 1 + (level - 1) * 18 / 8;
}

struct recording *recording_create(const char *path, int level, bool exclusive)
{
	struct recording *r = calloc(1, sizeof(*r));
	int fd;

	if (!r)
		return NULL;
	r->in_cap = WRITE_BUFFER_BYTES;
	r->out_cap = ZSTD_CStreamOutSize();
	r->in = malloc(r->in_cap);
	r->out = malloc(r->out_cap);
	r->cctx = ZSTD_createCCtx();
	/* Never through a link, never another's file: a recording holds raw
	 * stacks of every profiled process. */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (exclusive ? O_EXCL : O_TRUNC), 0600);
	if (fd >= 0 && !(r->f = fdopen(fd, "wb")))
		close(fd);
	if (!r->in || !r->out || !r->cctx || !r->f ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(r->cctx, ZSTD_c_compressionLevel, zstd_level(level))) ||
	    write_bytes(r, RECORDING_MAGIC, 8) != 0) {
		int e = errno;
		recording_close(r);
		errno = e ? e : ENOMEM;
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
	if (r->f) {
		if (r->cctx && !r->error)
			(void)zstd_flush(r, ZSTD_e_end);
		fclose(r->f);
	}
	ZSTD_freeCCtx(r->cctx);
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
	free(r->out);
	free(r->buf);
	recording_stacks_free(&r->stacks);
	free(r);
}

static bool whole_sample(const void *payload, size_t len)
{
	const struct js_sample *s = payload;

	return len >= sizeof(*s) && len - sizeof(*s) == s->stack_len;
}

void recording_write_at(struct recording *r, uint8_t type, pid_t pid, uint64_t t, const void *payload, size_t len)
{
	uint8_t hdr[17];
	uint32_t p = (uint32_t)pid, l = (uint32_t)len, shared = 0;
	const struct js_sample *s = payload;

	if (!r || r->error || len > RECORDING_MAX_ENTRY)
		return;
	/* A sample whose stack bottom repeats its thread's last one: its
	 * header, the repeated length and the rest of its stack. */
	if (type == REC_SAMPLE && whole_sample(payload, len) && (shared = recording_stacks_put(&r->stacks, s))) {
		type = REC_SAMPLE_SHARED;
		l = (uint32_t)(sizeof(*s) + 4 + s->stack_len - shared);
	}
	hdr[0] = type;
	memcpy(hdr + 1, &p, 4);
	memcpy(hdr + 5, &t, 8);
	memcpy(hdr + 13, &l, 4);
	if (write_bytes(r, hdr, sizeof(hdr)) != 0 ||
	    (shared ? write_bytes(r, s, sizeof(*s)) != 0 || write_bytes(r, &shared, 4) != 0 ||
			      write_bytes(r, s->stack, s->stack_len - shared) != 0
		    : write_bytes(r, payload, len) != 0)) {
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

uint64_t recording_shared_bytes(const struct recording *r)
{
	return r ? r->stacks.shared_bytes : 0;
}

/* Decompresses more into out (after moving what is left to its start);
 * 0 at the end of the file, -1 on a corrupt stream. */
static int zstd_fill(struct recording *r)
{
	size_t before;

	memmove(r->out, r->out + r->out_pos, r->out_len - r->out_pos);
	r->out_len -= r->out_pos;
	r->out_pos = 0;
	before = r->out_len;
	while (r->out_len == before) {
		if (r->in_pos == r->in_len) {
			if (!r->at_eof) {
				r->in_len = fread(r->in, 1, r->in_cap, r->f);
				r->in_pos = 0;
				r->at_eof = r->in_len == 0;
			}
			if (r->at_eof)
				return r->in_frame ? -1 : 0;
		}
		ZSTD_inBuffer in = {r->in, r->in_len, r->in_pos};
		ZSTD_outBuffer out = {r->out, r->out_cap, r->out_len};
		size_t hint = ZSTD_decompressStream(r->dctx, &out, &in);
		if (ZSTD_isError(hint))
			return -1;
		r->in_frame = hint != 0;
		r->in_pos = in.pos;
		r->out_len = out.pos;
	}
	return 1;
}

/* Reads exactly len bytes (or fewer at the end of the file: the count). */
static long read_bytes(struct recording *r, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t got = 0;

	if (r->gz)
		return gzread(r->gz, dst, (unsigned)len);
	while (got < len) {
		size_t n = r->out_len - r->out_pos;
		if (n == 0) {
			int rc = zstd_fill(r);
			if (rc < 0)
				return -1;
			if (rc == 0)
				break;
			continue;
		}
		if (n > len - got)
			n = len - got;
		memcpy(d + got, r->out + r->out_pos, n);
		r->out_pos += n;
		got += n;
	}
	return (long)got;
}

static bool is_zstd(FILE *f)
{
	uint8_t m[4];
	uint32_t magic;
	bool yes = fread(m, 1, 4, f) == 4;

	memcpy(&magic, m, 4);
	rewind(f);
	return yes && magic == ZSTD_FRAME_MAGIC; /* little-endian, as zstd writes it */
}

static int open_zstd(struct recording *r, FILE *f)
{
	r->f = f;
	r->dctx = ZSTD_createDCtx();
	r->in_cap = ZSTD_DStreamInSize();
	/* Room for the largest entry's header and a good part of a frame. */
	r->out_cap = 4 * ZSTD_DStreamOutSize();
	r->in = malloc(r->in_cap);
	r->out = malloc(r->out_cap);
	return r->dctx && r->in && r->out ? 0 : -1;
}

struct recording *recording_open(const char *path)
{
	struct recording *r = calloc(1, sizeof(*r));
	FILE *f = fopen(path, "rb");
	char magic[8];
	int ok;

	if (!r || !f) {
		free(r);
		if (f)
			fclose(f);
		return NULL;
	}
	if (is_zstd(f)) {
		ok = open_zstd(r, f) == 0;
	} else {
		fclose(f);
		r->gz = gzopen(path, "rb");
		ok = r->gz != NULL;
	}
	if (!ok || read_bytes(r, magic, 8) != 8 ||
	    (memcmp(magic, RECORDING_MAGIC, 8) != 0 && memcmp(magic, RECORDING_MAGIC_V1, 8) != 0)) {
		recording_close(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

/* Room for n bytes in *buf (of *cap). */
static bool reserve(uint8_t **buf, uint32_t *cap, uint32_t n)
{
	uint8_t *grown;

	if (n <= *cap)
		return true;
	if (!(grown = realloc(*buf, n)))
		return false;
	*buf = grown;
	*cap = n;
	return true;
}

/* The rest of an entry whose first have bytes (the header h) were read,
 * returned as it is, in r->buf. */
static int read_rest(struct recording *r, const struct js_sample *h, uint32_t have, const uint8_t **payload,
		     uint32_t len)
{
	if (!reserve(&r->buf, &r->cap, len))
		return -1;
	memcpy(r->buf, h, have);
	if (read_bytes(r, r->buf + have, len - have) != (long)(len - have))
		return -1;
	*payload = r->buf;
	return 1;
}

/* A REC_SAMPLE or REC_SAMPLE_SHARED entry of len bytes, read into its
 * thread's buffer beside its last sample (recording_stacks.h) and returned
 * whole, as a REC_SAMPLE; -1 if it is malformed or names a stack the file
 * has not shown. A REC_SAMPLE that is no whole sample comes back as read. */
static int read_sample(struct recording *r, uint8_t *type, const uint8_t **payload, uint32_t *len)
{
	const bool delta = *type == REC_SAMPLE_SHARED;
	struct js_sample h, *s;
	uint32_t shared = 0;

	if (*len < sizeof(h) + (delta ? 4 : 0) || read_bytes(r, &h, sizeof(h)) != (long)sizeof(h) ||
	    (delta && read_bytes(r, &shared, 4) != 4))
		return -1;
	if (!delta && *len != sizeof(h) + (uint64_t)h.stack_len)
		return read_rest(r, &h, sizeof(h), payload, *len);
	if (delta && (shared > h.stack_len || h.stack_len > JS_MAX_FRAGMENT_BYTES ||
		      *len != sizeof(h) + 4 + (h.stack_len - shared)))
		return -1;
	if (!(s = recording_stacks_next(&r->stacks, &h, shared)))
		return delta ? -1 : read_rest(r, &h, sizeof(h), payload, *len);
	if (read_bytes(r, s->stack, h.stack_len - shared) != (long)(h.stack_len - shared))
		return -1;
	recording_stacks_keep(&r->stacks, s);
	*type = REC_SAMPLE;
	*payload = (const uint8_t *)s;
	*len = (uint32_t)sizeof(h) + h.stack_len;
	return 1;
}

int recording_next(struct recording *r, uint8_t *type, pid_t *pid, uint64_t *time_ns,
		   const uint8_t **payload, uint32_t *len)
{
	uint8_t hdr[17];
	long n = read_bytes(r, hdr, sizeof(hdr));
	uint32_t p, l;

	if (n == 0)
		return 0;
	if (n != (long)sizeof(hdr))
		return -1;
	*type = hdr[0];
	memcpy(&p, hdr + 1, 4);
	memcpy(time_ns, hdr + 5, 8);
	memcpy(&l, hdr + 13, 4);
	if (l > RECORDING_MAX_ENTRY)
		return -1;
	*pid = (pid_t)p;
	*len = l;
	if ((*type == REC_SAMPLE && l >= sizeof(struct js_sample)) || *type == REC_SAMPLE_SHARED)
		return read_sample(r, type, payload, len);
	if (!reserve(&r->buf, &r->cap, l) || (l && read_bytes(r, r->buf, l) != (long)l))
		return -1;
	*payload = r->buf;
	return 1;
}
