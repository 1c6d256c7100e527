# SPDX-License-Identifier: GPL-2.0-only
# jsampled — top-level build.
#
#   make            build/jsampled, build/jsamplectl, build/libjsagent.so
#   make deps       install the Debian packages the build and tests need (root)
#   make check      unit tests (plain and ASan/UBSan), fuzzers briefly, integration tests
#   make fuzz       the libFuzzer targets (build/fuzz/fuzz_*); make fuzz-campaign FUZZ_CPU_SECONDS=3600
#   make demo       profile a bundled Java workload and print its CCT (root)
#   make bench-pipeline   samples/s, resolution, jsampled CPU and BPF cost (root)
#   make bench-decode     resolution on diverse workloads, JDK 17 and 25, 10 kHz (root)
#   make bench-decode-apps  the same on 20 real Debian-packaged Java applications, JDK 11 to 25 (installs them; root, ~60 min)
#   make bench-cost       jsampled's CPU per sample live and in replay, stack bytes, BPF time, drops (root, ~15 min)
#   make bench-page-faults what a first write to fresh memory costs, per 4 KiB, in small and huge pages
#   make bench-completion deep stacks completed from stack images vs whole copies (root)
#   make bench            accuracy and overhead vs JFR, a safepoint sampler and perf (root, ~25 min)
#   make bench-memory     jsampled's RSS against JVMs (1-50), threads (20-1,000) and one program vs many (root)
#   make bench-export     the ClickHouse exporter's CPU, bytes and rows per host, 50 JVMs (root, ~5 min)
#   make bench-soak       an hour at 1 kHz, 20 JVMs + one starting and exiting every 3 s: RSS, fds, held queues, CPU over time (root)
#   make install     PREFIX=/usr DESTDIR= (binaries, agent, units, config)
#   make deb         build/jsampled_<version>_amd64.deb
#   make check-vm    the package under a real systemd, in a QEMU virtual machine (root)
#   make clean

VERSION    := 0.3.0
PREFIX     ?= /usr
SYSCONFDIR ?= /etc
UNITDIR    ?= /lib/systemd/system
DESTDIR    ?=

CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
LLVM_STRIP ?= llvm-strip
JAVA_HOME  ?= /usr/lib/jvm/java-17-openjdk-amd64
JAVAC      ?= $(JAVA_HOME)/bin/javac

B ?= build
# Link-time optimisation: the decoder's small helpers in other files (code
# and method lookups, map probes) inline into the walk; xalan live, three
# interleaved pairs: 4.15 -> 4.01 us of jsampled CPU per sample.
OPT ?= -O2 -g -flto=auto
WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -fno-omit-frame-pointer -MMD -MP -I. -I$(B) -I$(B)/gen
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
JNI_INC := -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux
# The core needs zstd (recordings), zlib (older gzip recordings and pprof) and
# protobuf-c (pprof); the service libbpf, libsystemd, libcap.
DECODE_LIBS := -lz -lzstd -lprotobuf-c -lm
DAEMON_LIBS := -lbpf -lelf -lsystemd -lcap -lseccomp $(DECODE_LIBS)
# The native unwinder parses files profiled processes control: only the
# sandboxed helper (build/jsampled-unwind) and jsreplay link it, never
# jsampled (daemon/native/native_helper.h).
NATIVE_LIBS := -ldw -lelf -lstdc++

# Debian packages needed to build, test and demo (installed by `make deps`).
DEB_PACKAGES := gcc make clang llvm libclang-rt-14-dev libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev zstd \
	libsystemd-dev libcap-dev libseccomp-dev pkg-config dpkg-dev openjdk-17-jdk-headless python3 procps systemd \
	protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev libmicrohttpd-dev \
	protobuf-compiler golang-go chromium chromium-driver libcurl4-openssl-dev libjansson-dev \
	clickhouse-server clickhouse-client libdw-dev musl-tools xxd debootstrap podman uidmap runc
# pprof's profile.proto, as Debian ships it with Google's pprof sources.
PROFILE_PROTO := /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto

COMMON_SRC := userspace/common/wire.c userspace/common/u64_map.c userspace/common/big_alloc.c userspace/common/fd_io.c \
	userspace/common/pid_text.c userspace/common/kv_file.c userspace/common/maps_line.c
# Generated: pprof's protobuf-c code, and the flame-graph page as a C string.
GEN_SRC := $(B)/gen/profile.pb-c.c $(B)/gen/flamegraph_page.c
WEB_PAGE := userspace/common/web/flamegraph.html
# The profile library (libjsprofile.a, userspace/profile): calling-context
# trees, method tables and every rendering of a profile. jsampled, jsreplay
# and jsamplectl link it; it includes no daemon header.
PROFILE_SRC := $(wildcard userspace/profile/*.c) $(COMMON_SRC) $(GEN_SRC)
# The decoding core (libjsdecode.a): from an agent's records and a stack
# fragment to a trace (daemon/decode), the process table and its per-sample
# path (daemon/process), recordings (daemon/record). It reads no /proc
# (but /proc/kallsyms, when asked), opens no socket and loads no BPF;
# jsampled and jsreplay (daemon/replay) both link it, as do the unit tests
# of the decoder.
DECODE_SRC := $(wildcard daemon/decode/*.c daemon/process/*.c daemon/record/*.c daemon/support/*.c)
# The native unwinder (libdw) and the helper process around it.
ENGINE_SRC := $(addprefix daemon/native/,native_unwind.c native_files.c native_symbols.c perf_map.c)
HELPER_SRC := daemon/native/native_helper.c daemon/native/native_helper_main.c $(ENGINE_SRC) $(COMMON_SRC)
# The service around it (libjsdaemon.a): BPF (daemon/ingest), discovery,
# attach and agent links (daemon/jvm), the helper's client (daemon/native),
# sockets, queries, state, privileges (daemon/service). main.c is the
# event loop.
SERVICE_SRC := $(filter-out daemon/service/main.c $(HELPER_SRC),$(wildcard daemon/ingest/*.c daemon/jvm/*.c \
	daemon/native/*.c daemon/service/*.c))
# (The agent reads no config file and no pid from text.)
AGENT_SRC := $(wildcard userspace/agent/*.c) $(filter-out %/kv_file.c %/pid_text.c,$(COMMON_SRC))
# The agent's JVM-free parts, unit tested on their own.
AGENT_TESTABLE := userspace/agent/agent_store.c userspace/agent/frame_states.c userspace/agent/bytecode_calls.c \
	userspace/agent/constant_pool.c userspace/agent/code_extent.c
CTL_SRC := $(wildcard userspace/jsamplectl/*.c) $(B)/gen/index_page.c
# jsreplay: its own files, the option table (for its defaults) and the native
# unwinder (recordings with native frames are unwound in jsreplay itself).
REPLAY_SRC := $(wildcard daemon/replay/*.c) daemon/service/options.c $(ENGINE_SRC)
JAVA_SRC := $(wildcard tests/java/*.java)

# Unit tests, by what they link: core and service, the agent.
UNIT_SERVICE := test_links test_service
# The native unwinder and the helper's request path.
UNIT_ENGINE := test_native_unwind
UNIT_AGENT := test_agent
# The exporter's parts that need neither network nor daemon.
UNIT_CTL := test_export
# Every other tests/unit/test_x.c links the decoding core and the profile
# library: a new one is built and run without being listed.
UNIT_CORE := $(filter-out $(UNIT_SERVICE) $(UNIT_ENGINE) $(UNIT_AGENT) $(UNIT_CTL),\
	$(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c)))
EXPORT_TESTABLE := userspace/jsamplectl/export_queue.c userspace/jsamplectl/export_config.c \
	userspace/jsamplectl/process_identity.c userspace/jsamplectl/clickhouse_rows.c userspace/jsamplectl/url_safety.c \
	userspace/jsamplectl/serve_routes.c userspace/jsamplectl/time_spec.c userspace/jsamplectl/profiles_answer.c \
	userspace/jsamplectl/fleet_schema.c userspace/jsamplectl/pyroscope_names.c userspace/jsamplectl/pprof_read.c \
	userspace/profile/json.c userspace/profile/view_names.c userspace/profile/thread_pools.c userspace/profile/gzip.c \
	$(COMMON_SRC) $(B)/gen/profile.pb-c.c
UNIT_BINS := $(addprefix $(B)/tests/,$(UNIT_CORE) $(UNIT_SERVICE) $(UNIT_ENGINE) $(UNIT_AGENT) $(UNIT_CTL))
UNIT_ASAN_BINS := $(addprefix $(B)/asan/tests/,$(UNIT_CORE) $(UNIT_SERVICE) $(UNIT_ENGINE) $(UNIT_AGENT) $(UNIT_CTL))

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
asan_obj = $(patsubst %.c,$(B)/asan/obj/%.o,$(1))
pic_obj = $(patsubst %.c,$(B)/pic/%.o,$(1))
MUSL_CC ?= musl-gcc
fuzz_obj = $(patsubst %.c,$(B)/fuzz/obj/%.o,$(1))

.SECONDARY:
.PHONY: all
all: $(B)/jsampled $(B)/jsampled-unwind $(B)/jsamplectl $(B)/libjsagent.so $(B)/libjsagent-musl.so $(B)/jsreplay

# --- BPF: vmlinux.h from the running kernel's BTF, CO-RE objects, skeletons.
# bpf/x.bpf.c (+ its record header bpf/x.h) -> build/x.bpf.o -> build/x.skel.h
# holding `struct x_bpf`. ---
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(B) -Wall -Werror
$(B)/vmlinux.h:
	@mkdir -p $(B)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/%.bpf.o: bpf/%.bpf.c bpf/%.h $(B)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@
	$(LLVM_STRIP) -g $@

$(B)/%.skel.h: $(B)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@.tmp && mv $@.tmp $@

# --- Generated C: pprof's messages (protoc-c), the page (embed.py) ---
$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h &: $(PROFILE_PROTO)
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen --proto_path=$(dir $(PROFILE_PROTO)) $(notdir $(PROFILE_PROTO))
$(B)/gen/flamegraph_page.c: $(WEB_PAGE) userspace/common/web/embed.py
	@mkdir -p $(B)/gen
	python3 userspace/common/web/embed.py jsampled_flamegraph_page $< $@
$(B)/gen/index_page.c: userspace/jsamplectl/web/index.html userspace/common/web/embed.py
	@mkdir -p $(B)/gen
	python3 userspace/common/web/embed.py jsamplectl_index_page $< $@
# Everything that includes the generated header waits for it.
$(call obj,userspace/profile/cct_pprof.c) $(call asan_obj,userspace/profile/cct_pprof.c) $(call fuzz_obj,userspace/profile/cct_pprof.c): $(B)/gen/profile.pb-c.h

# --- C objects: plain, sanitized, position independent (agent) ---
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) $(CFLAGS) -c $< -o $@

$(B)/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) $(CFLAGS) -c $< -o $@

# The agent: no link-time optimisation, which would move its references to
# dlopen and friends away from the .symver that binds them to glibc's oldest
# versions (userspace/agent/libc_baseline.h).
AGENT_OPT := $(filter-out -flto%,$(OPT))
$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(AGENT_OPT) -fPIC -fvisibility=hidden $(JNI_INC) $(CFLAGS) -c $< -o $@

# The class the agent defines in the boot loader to bind Unsafe.park
# (userspace/agent/park_hook.c), as a C array. Class file version 52: JDK 8+.
$(B)/gen/park_binder_class.h: userspace/agent/java/jsampled/ParkBinder.java
	@mkdir -p $(B)/gen/park_binder
	$(JAVAC) --release 8 -Xlint:-options -d $(B)/gen/park_binder $<
	cd $(B)/gen/park_binder && xxd -i -n park_binder_class jsampled/ParkBinder.class > ../park_binder_class.h
$(B)/pic/userspace/agent/park_hook.o $(B)/musl/userspace/agent/park_hook.o: $(B)/gen/park_binder_class.h

# The same agent for musl-based JVMs (Alpine images), by Debian's musl-gcc.
$(B)/musl/%.o: %.c
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(BASE_CFLAGS) $(AGENT_OPT) -fPIC -fvisibility=hidden $(JNI_INC) -c $< -o $@

# The BPF loader includes the generated skeleton.
$(call obj,daemon/ingest/sampler_bpf.c) $(call asan_obj,daemon/ingest/sampler_bpf.c): $(B)/sampler.skel.h

# --- The two libraries, plain and sanitized ---
$(B)/libjsdecode.a: $(call obj,$(DECODE_SRC))
$(B)/libjsprofile.a: $(call obj,$(PROFILE_SRC))
$(B)/libjsdaemon.a: $(call obj,$(SERVICE_SRC))
$(B)/asan/libjsdecode.a: $(call asan_obj,$(DECODE_SRC))
$(B)/asan/libjsprofile.a: $(call asan_obj,$(PROFILE_SRC))
$(B)/asan/libjsdaemon.a: $(call asan_obj,$(SERVICE_SRC))
%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/jsampled: $(call obj,daemon/service/main.c) $(B)/libjsdaemon.a $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(DAEMON_LIBS)

$(B)/asan/jsampled: $(call asan_obj,daemon/service/main.c) $(B)/asan/libjsdaemon.a $(B)/asan/libjsdecode.a $(B)/asan/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ $(DAEMON_LIBS)

# The native helper: its request path, the unwinder, a seccomp filter.
$(B)/jsampled-unwind: $(call obj,$(HELPER_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(NATIVE_LIBS) -lseccomp

$(B)/asan/jsampled-unwind: $(call asan_obj,$(HELPER_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ $(NATIVE_LIBS) -lseccomp

# The replay tool links the core (with the option table and the native unwinder).
$(B)/jsreplay: $(call obj,$(REPLAY_SRC)) $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(NATIVE_LIBS) $(DECODE_LIBS)

$(B)/asan/jsreplay: $(call asan_obj,$(REPLAY_SRC)) $(B)/asan/libjsdecode.a $(B)/asan/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ $(NATIVE_LIBS) $(DECODE_LIBS)

$(B)/jsamplectl: $(call obj,$(CTL_SRC)) $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ -lmicrohttpd -lcurl -ljansson $(DECODE_LIBS)

# libdl and libpthread by soname (Debian ships no libdl.so link since glibc 2.34):
# where glibc before 2.34 keeps dlopen and threads.
$(B)/libjsagent.so: $(call pic_obj,$(AGENT_SRC))
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,defs -Wl,--no-undefined -Wl,--no-as-needed $^ -o $@ -l:libdl.so.2 -l:libpthread.so.0

$(B)/libjsagent-musl.so: $(patsubst %.c,$(B)/musl/%.o,$(AGENT_SRC))
	@mkdir -p $(dir $@)
	$(MUSL_CC) -shared -Wl,-z,defs -Wl,--no-undefined $^ -o $@

# --- Unit tests: each tests/unit/test_x.c is one program ---
$(addprefix $(B)/tests/,$(UNIT_CORE)): $(B)/tests/%: $(call obj,tests/unit/%.c) $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(DECODE_LIBS)
$(addprefix $(B)/tests/,$(UNIT_SERVICE)): $(B)/tests/%: $(call obj,tests/unit/%.c) $(B)/libjsdaemon.a $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(DAEMON_LIBS)
$(addprefix $(B)/tests/,$(UNIT_ENGINE)): $(B)/tests/%: $(call obj,tests/unit/%.c $(ENGINE_SRC) daemon/native/native_helper.c) $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(NATIVE_LIBS) $(DECODE_LIBS)
$(addprefix $(B)/asan/tests/,$(UNIT_ENGINE)): $(B)/asan/tests/%: $(call asan_obj,tests/unit/%.c $(ENGINE_SRC) daemon/native/native_helper.c) $(B)/asan/libjsdecode.a $(B)/asan/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ $(NATIVE_LIBS) $(DECODE_LIBS)
$(addprefix $(B)/tests/,$(UNIT_AGENT)): $(B)/tests/%: $(call obj,tests/unit/%.c $(AGENT_TESTABLE) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ -lpthread
# test_native_unwind dlopens a library nothing else maps, found beside it.
$(B)/tests/test_native_unwind: | $(B)/tests/libjsdlopen_probe.so
$(B)/asan/tests/test_native_unwind: | $(B)/asan/tests/libjsdlopen_probe.so
$(B)/tests/libjsdlopen_probe.so $(B)/asan/tests/libjsdlopen_probe.so: tests/unit/dlopen_probe.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) $(OPT) -fPIC -shared $< -o $@

$(addprefix $(B)/tests/,$(UNIT_CTL)): $(B)/tests/%: $(call obj,tests/unit/%.c $(EXPORT_TESTABLE))
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ -lprotobuf-c -lcurl -lz
$(addprefix $(B)/asan/tests/,$(UNIT_CTL)): $(B)/asan/tests/%: $(call asan_obj,tests/unit/%.c $(EXPORT_TESTABLE))
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ -lprotobuf-c -lcurl -lz

$(addprefix $(B)/asan/tests/,$(UNIT_CORE)): $(B)/asan/tests/%: $(call asan_obj,tests/unit/%.c) $(B)/asan/libjsdecode.a $(B)/asan/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ $(DECODE_LIBS)
$(addprefix $(B)/asan/tests/,$(UNIT_SERVICE)): $(B)/asan/tests/%: $(call asan_obj,tests/unit/%.c) $(B)/asan/libjsdaemon.a $(B)/asan/libjsdecode.a $(B)/asan/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ $(DAEMON_LIBS)
$(addprefix $(B)/asan/tests/,$(UNIT_AGENT)): $(B)/asan/tests/%: $(call asan_obj,tests/unit/%.c $(AGENT_TESTABLE) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ -lpthread

# The sampler's perf events on the running kernel (root: an integration test).
$(B)/tests/integration/sampler_events: $(call obj,tests/integration/sampler_events.c) $(B)/libjsdaemon.a $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $^ -o $@ $(DAEMON_LIBS)

# --- Java programs used by the demo and the integration tests ---
$(B)/java/.stamp: $(JAVA_SRC)
	@mkdir -p $(B)/java
	$(JAVAC) -d $(B)/java $(JAVA_SRC)
	@touch $@
.PHONY: java
java: $(B)/java/.stamp

.PHONY: asan
asan: $(B)/asan/jsampled $(B)/asan/jsampled-unwind

.PHONY: check-unit
check-unit: $(UNIT_BINS) $(B)/jsreplay $(B)/jsampled $(B)/jsamplectl $(B)/libjsagent.so $(B)/libjsagent-musl.so
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	@echo "== decoder fixtures, one per rule (tests/fixtures)"; JSREPLAY=$(B)/jsreplay tests/fixtures/check-fixtures.sh
	@echo "== decoder regression corpus (tests/corpus)"; JSREPLAY=$(B)/jsreplay tests/corpus/check-corpus.sh
	@echo "== docs/configuration.md against jsampled and jsamplectl --help"; JSAMPLED=$(B)/jsampled JSAMPLECTL=$(B)/jsamplectl tests/unit/check-help-doc.sh
	@echo "== source layout rules"; tests/unit/check-layout.sh
	@echo "== the agent's libc baseline (glibc 2.17, musl)"; tests/unit/check-agent-abi.sh $(B)

.PHONY: check-unit-asan
check-unit-asan: $(UNIT_ASAN_BINS) $(B)/asan/jsreplay
	@set -e; for t in $(UNIT_ASAN_BINS); do echo "== $$t (ASan/UBSan)"; \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $$t; done
	@echo "== decoder fixtures (ASan/UBSan)"; \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 JSREPLAY=$(B)/asan/jsreplay tests/fixtures/check-fixtures.sh
	@echo "== decoder regression corpus (ASan/UBSan)"; \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 JSREPLAY=$(B)/asan/jsreplay tests/corpus/check-corpus.sh

.PHONY: check-integration
check-integration: all $(B)/asan/jsampled $(B)/asan/jsampled-unwind java $(B)/tests/integration/sampler_events
	JSAMPLED_BUILD=$(abspath $(B)) tests/integration/run-all.sh

# --- Fuzzing: libFuzzer targets (tests/fuzz/fuzz_*.c) built by clang with
# ASan/UBSan, linked with the libraries they exercise. ---
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(addprefix $(B)/fuzz/fuzz_,$(FUZZ_TARGETS))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) $(CFLAGS) -c $< -o $@
$(call fuzz_obj,daemon/ingest/sampler_bpf.c): $(B)/sampler.skel.h
$(B)/fuzz/libjsdecode.a: $(call fuzz_obj,$(DECODE_SRC))
$(B)/fuzz/libjsprofile.a: $(call fuzz_obj,$(PROFILE_SRC))
$(B)/fuzz/libjsdaemon.a: $(call fuzz_obj,$(SERVICE_SRC))
$(B)/fuzz/libjsengine.a: $(call fuzz_obj,$(ENGINE_SRC) daemon/native/native_helper.c)
$(B)/fuzz/fuzz_%: $(call fuzz_obj,tests/fuzz/fuzz_%.c) $(B)/fuzz/libjsdaemon.a $(B)/fuzz/libjsengine.a $(B)/fuzz/libjsdecode.a $(B)/fuzz/libjsprofile.a
	$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) $^ -o $@ $(DAEMON_LIBS) $(NATIVE_LIBS)
# Targets in jsamplectl's code link its file(s) too.
$(B)/fuzz/fuzz_pprof_read: $(call fuzz_obj,userspace/jsamplectl/pprof_read.c)
$(B)/fuzz/fuzz_serve_router: $(call fuzz_obj,userspace/jsamplectl/serve_routes.c userspace/jsamplectl/time_spec.c userspace/profile/view_names.c userspace/profile/thread_pools.c)
$(B)/fuzz/fuzz_process_identity: $(call fuzz_obj,userspace/jsamplectl/process_identity.c)
$(call fuzz_obj,tests/fuzz/fuzz_pprof_read.c userspace/jsamplectl/pprof_read.c): $(B)/gen/profile.pb-c.h
.PHONY: fuzz
fuzz: $(FUZZ_BINS)
# A short run of each target in every `make check`; a campaign for longer.
FUZZ_SECONDS ?= 20
.PHONY: check-fuzz
check-fuzz: fuzz
	tests/fuzz/run-fuzzers.sh $(FUZZ_SECONDS)
.PHONY: fuzz-campaign
# CPU seconds per target, in 10-minute pieces that a rerun resumes;
# FUZZ_TARGETS_RUN picks targets, FUZZ_JOBS runs several at once.
FUZZ_CPU_SECONDS ?= 3600
fuzz-campaign: fuzz
	FUZZ_CPU_SECONDS=$(FUZZ_CPU_SECONDS) tests/fuzz/run-fuzzers.sh 600 $(FUZZ_TARGETS_RUN) | tee $(B)/fuzz/campaign.txt

.PHONY: check
check: check-unit check-unit-asan check-fuzz check-integration

.PHONY: demo
demo: all java
	tests/demo/run-demo.sh

.PHONY: bench-pipeline
bench-pipeline: all java
	tests/bench/pipeline.sh $(FREQS)

.PHONY: bench-decode
bench-decode: all java
	tests/bench/bench_decode.py $(BENCH_DECODE_ARGS)

.PHONY: bench-export
bench-export: all java
	tests/bench/bench_export.py $(BENCH_EXPORT_ARGS)

.PHONY: bench-decode-apps
bench-decode-apps: all java
	tests/bench/bench_decode_apps.py $(BENCH_DECODE_APPS_ARGS)

# What one sample costs, live and replayed, on real applications at 10 kHz.
.PHONY: bench-cost
bench-cost: all java
	tests/bench/bench_cost.py $(BENCH_COST_ARGS)

# What off-CPU sampling costs: a switch-heavy program, the servlet container
# and a process it does not profile, with it on and off in interleaved
# phases, async-profiler's wall mode beside (BENCH_OFFCPU_ARGS="--asprof DIR").
.PHONY: bench-offcpu
bench-offcpu: all java
	tests/bench/bench_offcpu.py $(BENCH_OFFCPU_ARGS)

# What allocation and lock profiles cost: the SQL database and a park-heavy
# program, each profile on and off in interleaved phases, async-profiler's
# allocation mode beside (BENCH_ALLOC_ARGS="--asprof DIR").
.PHONY: bench-alloc
bench-alloc: all java
	tests/bench/bench_alloc.py $(BENCH_ALLOC_ARGS)

# What a first write to fresh memory costs here, in small and huge pages
# (why big arrays go on huge pages: userspace/common/big_alloc.h).
.PHONY: bench-page-faults
bench-page-faults: $(B)/bench/page_faults
	$(B)/bench/page_faults
$(B)/bench/page_faults: tests/bench/page_faults.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) $< -o $@

# Deep stacks completed from stack images against whole copies' traces.
.PHONY: bench-completion
bench-completion: all java
	tests/bench/check_completion.py --record $(B)/bench-completion --check

.PHONY: deps
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y --no-install-recommends $$missing || \
		{ apt-get update && apt-get install -y --no-install-recommends $$missing; }; \
		case " $$missing " in *" clickhouse-server "*) \
			echo "the tests start their own ClickHouse servers: disabling the package's default one"; \
			systemctl disable --now clickhouse-server >/dev/null 2>&1 || true;; esac; \
	fi

.PHONY: clean
clean:
	rm -rf $(B)

-include $(shell find $(B)/obj $(B)/asan/obj $(B)/pic $(B)/musl $(B)/fuzz/obj -name '*.d' -type f 2>/dev/null)

# --- Install and package ---
# The package under a real systemd (PID 1) in a QEMU guest; not part of `make check`
# (it builds a Debian system with debootstrap once, ~5 minutes, then boots it: ~5 minutes).
VM_PACKAGES := qemu-system-x86 debootstrap e2fsprogs
.PHONY: check-vm
check-vm: deb java
	apt-get install -y --no-install-recommends $(VM_PACKAGES) >/dev/null
	tests/vm/check-vm.sh

# --- The comparison benchmark's peers (tests/bench/peers) ---
$(B)/bench/%.bpf.o: tests/bench/peers/%.bpf.c $(B)/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(LLVM_STRIP) -g $@
$(B)/bench/null_sampler: tests/bench/peers/null_sampler.c $(B)/bench/null_sampler.skel.h $(B)/libjsdaemon.a $(B)/libjsdecode.a $(B)/libjsprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) -I$(B)/bench $< $(B)/libjsdaemon.a $(B)/libjsdecode.a $(B)/libjsprofile.a -o $@ -lbpf -lelf -lz
$(B)/bench/libspsampler.so: tests/bench/peers/safepoint_sampler.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) -fPIC -shared $(JNI_INC) $< -o $@
BENCH_PEERS := $(B)/bench/null_sampler $(B)/bench/libspsampler.so

# jsampled vs JFR, a safepoint sampler, perf and a null sampler: accuracy and
# overhead in one run (root; about 25 minutes). Writes tests/bench/results/.
BENCH_PACKAGES := gnuplot-nox linux-perf
.PHONY: bench
bench: all $(BENCH_PEERS)
	apt-get install -y --no-install-recommends $(BENCH_PACKAGES) >/dev/null
	tests/bench/compare.py

# jsampled's memory with 50 JVMs x 200 threads (root).
.PHONY: bench-memory
bench-memory: all java
	tests/bench/bench_memory.py

# jsampled for an hour at 1 kHz with 20 live JVMs and one JVM starting and
# exiting every 3 s: RSS, fds, held queues, CPU and drops over time, and their
# slopes (root). BENCH_SOAK_ARGS="--duration 600" for a shorter one.
.PHONY: bench-soak
bench-soak: all java
	tests/bench/soak.py $(BENCH_SOAK_ARGS)

.PHONY: install
install: $(B)/jsampled $(B)/jsampled-unwind $(B)/jsamplectl $(B)/libjsagent.so $(B)/libjsagent-musl.so
	install -D -m 0755 $(B)/jsampled $(DESTDIR)$(PREFIX)/sbin/jsampled
	install -D -m 0755 $(B)/jsampled-unwind $(DESTDIR)$(PREFIX)/lib/jsampled/jsampled-unwind
	install -D -m 0755 $(B)/jsamplectl $(DESTDIR)$(PREFIX)/bin/jsamplectl
	install -D -m 0644 $(B)/libjsagent.so $(DESTDIR)$(PREFIX)/lib/jsampled/libjsagent.so
	install -D -m 0644 $(B)/libjsagent-musl.so $(DESTDIR)$(PREFIX)/lib/jsampled/libjsagent-musl.so
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/sbin/jsampled|$(PREFIX)/sbin/jsampled|; s|/etc/jsampled|$(SYSCONFDIR)/jsampled|g' \
		deploy/jsampled.service >$(DESTDIR)$(UNITDIR)/jsampled.service
	install -m 0644 deploy/jsampled.socket $(DESTDIR)$(UNITDIR)/jsampled.socket
	sed 's|/usr/bin/jsamplectl|$(PREFIX)/bin/jsamplectl|; s|/etc/jsampled|$(SYSCONFDIR)/jsampled|g' \
		deploy/jsampled-export.service >$(DESTDIR)$(UNITDIR)/jsampled-export.service
	install -d $(DESTDIR)$(SYSCONFDIR)/jsampled
	@# An edited config is never overwritten.
	[ -e $(DESTDIR)$(SYSCONFDIR)/jsampled/jsampled.conf ] || \
		install -m 0644 deploy/jsampled.conf $(DESTDIR)$(SYSCONFDIR)/jsampled/jsampled.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/jsampled/export.conf ] || \
		install -m 0600 deploy/export.conf $(DESTDIR)$(SYSCONFDIR)/jsampled/export.conf
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/jsampled/README.md
	install -D -m 0644 CHANGELOG.md $(DESTDIR)$(PREFIX)/share/doc/jsampled/CHANGELOG.md
	install -D -m 0644 LICENSE $(DESTDIR)$(PREFIX)/share/doc/jsampled/copyright
	install -d $(DESTDIR)$(PREFIX)/share/doc/jsampled/docs/images
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/jsampled/docs/
	install -m 0644 docs/images/* $(DESTDIR)$(PREFIX)/share/doc/jsampled/docs/images/
	install -D -m 0644 deploy/clickhouse/schema.sql $(DESTDIR)$(PREFIX)/share/jsampled/clickhouse/schema.sql
	install -m 0644 deploy/clickhouse/fleet_queries.sql deploy/clickhouse/README.md \
		$(DESTDIR)$(PREFIX)/share/jsampled/clickhouse/

DEB := $(B)/jsampled_$(VERSION)_amd64.deb
.PHONY: deb
deb: $(DEB)
$(DEB): $(B)/jsampled $(B)/jsampled-unwind $(B)/jsamplectl $(B)/libjsagent.so $(B)/libjsagent-musl.so deploy/jsampled.service deploy/jsampled.socket \
		deploy/jsampled.conf deploy/jsampled-export.service deploy/export.conf $(wildcard deploy/debian/*) README.md CHANGELOG.md LICENSE $(wildcard docs/*.md docs/images/*) \
		$(wildcard deploy/clickhouse/*)
	rm -rf $(B)/deb
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(B)/deb PREFIX=/usr SYSCONFDIR=/etc UNITDIR=/lib/systemd/system
	strip --strip-debug $(B)/deb/usr/sbin/jsampled $(B)/deb/usr/bin/jsamplectl $(B)/deb/usr/lib/jsampled/libjsagent.so \
		$(B)/deb/usr/lib/jsampled/libjsagent-musl.so $(B)/deb/usr/lib/jsampled/jsampled-unwind
	install -d $(B)/deb/DEBIAN
	sed 's/@VERSION@/$(VERSION)/' deploy/debian/control.in >$(B)/deb/DEBIAN/control
	printf '/etc/jsampled/jsampled.conf\n/etc/jsampled/export.conf\n' >$(B)/deb/DEBIAN/conffiles
	install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm $(B)/deb/DEBIAN/
	dpkg-deb --root-owner-group --build $(B)/deb $@
