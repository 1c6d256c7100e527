/* Bad input never crashes anything: deterministic random and mutated input
 * for the agent-record parsers, the decoder (stacks full of plausible and
 * implausible pointers) and the query parser. Run under ASan/UBSan by
 * `make check`. */
#include <stdlib.h>

#include "../../daemon/daemon.h"
#include "../../daemon/decoder.h"
#include "../../daemon/query_server.h"
#include "check.h"
#include "model_builder.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static void fuzz_batches(void)
{
	struct jvm_model m;
	struct batch_info info;
	uint8_t buf[512];
	const struct test_scope sc[] = {{0x10, 2, {1, 2}, {3, 4}}};
	const struct test_state st[] = {{0, 4, 0}};
	const struct test_code c = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x100,
				    .frame_size = 4, .frame_complete = 8, .method_id = 1,
				    .scopes = sc, .nscopes = 1, .states = st, .nstates = 1};
	struct wbuf valid;

	jvm_model_init(&m);
	for (int i = 0; i < 20000; i++) {
		size_t n = rnd() % sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd();
		jvm_model_apply_batch(&m, buf, n, &info);
		jvm_model_apply_record(&m, (uint16_t)(rnd() % 8), buf, n);
	}
	/* Mutations of valid records: flip bytes, truncate, extend. */
	wbuf_init(&valid);
	tb_code_load(&valid, &c);
	for (int i = 0; i < 20000; i++) {
		size_t n = valid.len;
		memcpy(buf, valid.data, n);
		for (int f = 0; f < 3; f++)
			buf[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
		if (rnd() % 4 == 0)
			n = rnd() % n;
		jvm_model_apply_record(&m, JS_REC_CODE_LOAD, buf, n);
	}
	wbuf_free(&valid);
	CHECK(m.malformed_records > 0);
	jvm_model_free(&m);
}

static void fuzz_decoder(void)
{
	enum { LEN = 2048 };
	struct jvm_model m;
	static struct trace tr;
	struct js_sample *s = calloc(1, sizeof(*s) + LEN);
	const uint64_t sp = 0x7fff00000000ull;
	const struct test_scope sc[] = {{0x10, 1, {1}, {0}}, {0x40, 2, {2, 1}, {1, 2}}};
	const struct test_state st[] = {{0, 4, 0}, {4, 6, 1}, {0x80, 0x82, 3}};
	const struct test_code codes[] = {
		{.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x10001000, .size = 0x100, .frame_size = 4,
		 .frame_complete = 8, .stub_offset = 0xc0, .orig_pc_offset = 8, .method_id = 1,
		 .scopes = sc, .nscopes = 2, .states = st, .nstates = 3},
		{.id = 2, .kind = JS_CODE_INTERPRETER, .start = 0x10002000, .size = 0x100, .frame_complete = -1},
		{.id = 3, .kind = JS_CODE_CALL_STUB, .start = 0x10003000, .size = 0x100, .frame_complete = -1},
		{.id = 4, .kind = JS_CODE_STUB, .start = 0x10004000, .size = 0x100, .frame_size = 2,
		 .frame_complete = -1},
		{.id = 5, .kind = JS_CODE_NATIVE_WRAPPER, .start = 0x10005000, .size = 0x100, .frame_size = 6,
		 .frame_complete = 4, .method_id = 2},
	};
	/* Values a stack word may hold: code addresses, stack addresses,
	 * Method*, small numbers and noise. */
	const uint64_t interesting[] = {0x10001010, 0x10001040, 0x10001002, 0x10001090, 0x100010c8,
					0x10002010, 0x10003080, 0x10004010, 0x10005010, 0x7000, 0,
					1, 0x10009000};
	int counts[DECODE_FAILED + 1] = {0};

	jvm_model_init(&m);
	CHECK(tb_apply_layout(&m, 0x10003080, 0x10000000, 0x20000000) == 0);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		CHECK(tb_apply_code(&m, &codes[i]) == 0);
	CHECK(tb_apply_class(&m, 1, "LF;", "") == 0);
	CHECK(tb_apply_method(&m, 1, 1, 0x7000, 0x8000, 40, "a") == 0);
	CHECK(tb_apply_method(&m, 2, 1, 0x7100, 0x8100, 40, "b") == 0);
	struct decode_ctx ctx = {&m.layout, &m.code, &m.methods, true, NULL};
	for (int i = 0; i < 200000; i++) {
		uint64_t *words = (uint64_t *)s->stack;
		memset(s, 0, sizeof(*s));
		s->regs[JS_REG_SP] = sp;
		s->stack_addr = sp;
		s->stack_len = (uint32_t)(rnd() % (LEN + 1)) & ~7u;
		s->stack_end = rnd() % 2 ? sp + LEN : 0;
		for (size_t k = 0; k < LEN / 8; k++) {
			uint64_t r = rnd();
			switch (r % 4) {
			case 0:
				words[k] = interesting[(r >> 8) % (sizeof(interesting) / sizeof(interesting[0]))];
				break;
			case 1:
				words[k] = sp + ((r >> 8) % (LEN + 64)) - 32;
				break;
			case 2:
				words[k] = r;
				break;
			default:
				words[k] = 0;
			}
		}
		s->regs[JS_REG_IP] = interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))] + rnd() % 8;
		s->regs[JS_REG_BP] = rnd() % 2 ? sp + (rnd() % (LEN + 64)) : rnd();
		int reason = -1;
		enum decode_status r = decode_sample(&ctx, s, &tr, &reason);
		CHECK(r <= DECODE_FAILED);
		CHECK(tr.n <= TRACE_MAX_FRAMES);
		if (r == DECODE_FAILED)
			CHECK(reason > 0 && reason < DECODE_FAILURE_COUNT);
		counts[r]++;
		if (check_failures > 20)
			break;
	}
	printf("  decoded %d, incomplete %d, failed %d\n", counts[DECODE_RESOLVED], counts[DECODE_INCOMPLETE],
	       counts[DECODE_FAILED]);
	CHECK(counts[DECODE_FAILED] > 0);
	free(s);
	jvm_model_free(&m);
}

static void fuzz_queries(void)
{
	struct daemon d;
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 16, .hold_ns = 1};
	struct wbuf out;
	char line[QUERY_MAX_REQUEST + 1];
	static const char *words[] = {"cct", "list", "stats", "json", "tree", "collapsed", "1", "-1",
				      "99999999999999999999", "4242", " ", "\t"};

	memset(&d, 0, sizeof(d));
	process_table_init(&d.processes, &lim);
	CHECK(process_create(&d.processes, 4242, 0, "") != NULL);
	wbuf_init(&out);
	for (int i = 0; i < 20000; i++) {
		size_t n = 0;
		int k = (int)(rnd() % 6);
		while (k-- > 0) {
			const char *w = rnd() % 5 ? words[rnd() % (sizeof(words) / sizeof(words[0]))] : "\x01\xff";
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s ", w);
			if (n >= sizeof(line) - 1)
				break;
		}
		line[n < sizeof(line) ? n : sizeof(line) - 1] = 0;
		wbuf_reset(&out);
		query_answer(&d, (uid_t)(rnd() % 2 ? 0 : 1000), line, &out);
		CHECK(out.len >= 3 && (memcmp(out.data, "OK\n", 3) == 0 || memcmp(out.data, "ERROR ", 6) == 0));
	}
	wbuf_free(&out);
	process_table_free(&d.processes);
}

int main(void)
{
	RUN(fuzz_batches);
	RUN(fuzz_decoder);
	RUN(fuzz_queries);
	return CHECK_DONE();
}
