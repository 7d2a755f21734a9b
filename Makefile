# mpimb — build the programs into the repository root.
#
#   make                      build with $(MPICC) (default mpicc)
#   make MPI=mpich|openmpi    shortcut for MPICC=mpicc.mpich / mpicc.openmpi
#   make MPI=smpi             SimGrid's simulated MPI (binaries in build/smpi/bin)
#   make simulate             halocompare on 1024 simulated ranks (torus-bgl); see docs/simulate.md
#   make SAN=asan|tsan        sanitizer build (binaries in build/<mpi>-<san>/bin)
#   make run                  install what is missing, build, run halocompare -n 4
#   make test                 install what is missing, build every variant, run all tests
#
# Objects go to build/<config>/ so builds against different MPI libraries
# never mix; the root binaries are copies of the last default-config build.

ifeq ($(MPI),mpich)
  MPICC := mpicc.mpich
else ifeq ($(MPI),openmpi)
  MPICC := mpicc.openmpi
else ifeq ($(MPI),smpi)
  MPICC := smpicc
else ifneq ($(MPI),)
  $(error MPI must be mpich, openmpi or smpi, got '$(MPI)')
endif
MPICC ?= mpicc

CONFIG  := $(or $(MPI),default)$(if $(SAN),-$(SAN))
BUILD   ?= build/$(CONFIG)
# Plain builds land in the repository root; variants keep their own bin/.
ifeq ($(CONFIG),default)
  BINDIR ?= .
else ifeq ($(MPI)$(SAN),$(MPI))
  BINDIR ?= $(if $(filter smpi,$(MPI)),$(BUILD)/bin,.)
else
  BINDIR ?= $(BUILD)/bin
endif

CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra $(if $(WERROR),-Werror)
# gcc 12 misreads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) as a zero-sized
# array once calls are inlined (a false -Wstringop-overflow), so that one
# warning is off; everything else stays an error under WERROR=1.
CFLAGS  += -Wno-stringop-overflow
ifeq ($(SAN),asan)
  CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
else ifeq ($(SAN),tsan)
  CFLAGS  += -fsanitize=thread -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=thread
else ifneq ($(SAN),)
  $(error SAN must be asan or tsan, got '$(SAN)')
endif
ifeq ($(MPI),smpi)
  CFLAGS += -DMB_SIMULATED
endif
LDLIBS  += -lhwloc -lm -lpthread

PROGRAMS := $(sort $(filter-out common profile,$(notdir $(wildcard src/*))))
COMMON_SRC := $(wildcard src/common/*.c)
COMMON_OBJ := $(COMMON_SRC:src/%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BUILDINFO := -DMB_GIT_COMMIT='"$(GIT_COMMIT)"' -DMB_CC='"$(MPICC)"' -DMB_CFLAGS='"$(strip $(CFLAGS))"'

.PHONY: all run test test-builds unit deps venv clean distclean lint check-mpicc simulate
.DEFAULT_GOAL := all

all: $(PROGRAMS:%=$(BINDIR)/%)

check-mpicc:
	@command -v $(firstword $(MPICC)) >/dev/null || { echo "make: '$(MPICC)' not found: run scripts/install-deps, 'module load' an MPI, or set MPICC=" >&2; exit 2; }

# Link into $(BUILD)/bin, then copy to $(BINDIR) only when it changed, so
# switching MPI= relinks the root binaries but an unchanged build does not.
define program_rules
$(1)_OBJ := $$(patsubst src/%.c,$$(BUILD)/obj/%.o,$$(wildcard src/$(1)/*.c))
$$(BUILD)/bin/$(1): $$($(1)_OBJ) $$(COMMON_OBJ) | check-mpicc
	@mkdir -p $$(@D)
	$$(MPICC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
ifneq ($$(BINDIR),$$(BUILD)/bin)
$$(BINDIR)/$(1): $$(BUILD)/bin/$(1) FORCE
	@cmp -s $$< $$@ || cp $$< $$@
endif
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rules,$(p))))
$(BUILD)/bin/threads: LDLIBS += -lbz2  # master-worker compresses with libbz2
FORCE:

$(BUILD)/obj/common/meta.o: CFLAGS += $(BUILDINFO)
$(BUILD)/obj/common/meta.o: $(BUILD)/buildinfo
$(BUILD)/buildinfo: FORCE
	@mkdir -p $(@D)
	@echo '$(BUILDINFO)' | cmp -s - $@ || echo '$(BUILDINFO)' > $@

$(BUILD)/obj/%.o: src/%.c | check-mpicc
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -Isrc/common -MMD -MP -c -o $@ $<

# ---------------------------------------------------------------- profiler
# libmpimb-prof.so (src/profile, docs/profile.md): the PMPI interposition
# library, used with LD_PRELOAD.  Position-independent objects of its own
# and of src/common (the one results writer) in $(BUILD)/pic, symbols hidden
# but the MPI ones.  Lands in $(BUILD)/lib, copied beside the programs for
# the root build.  Not for SimGrid (all ranks share one process there).
PROF_LIB := $(BUILD)/lib/libmpimb-prof.so
PROF_OBJ := $(patsubst src/%.c,$(BUILD)/pic/%.o,$(wildcard src/profile/*.c) $(COMMON_SRC))
ifneq ($(MPI),smpi)
all: $(PROF_LIB) $(if $(filter .,$(BINDIR)),./libmpimb-prof.so)
endif
$(BUILD)/pic/%.o: src/%.c | check-mpicc
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -fPIC -fvisibility=hidden -Isrc/common -I$(BUILD)/pic/profile -MMD -MP -c -o $@ $<
$(BUILD)/pic/common/meta.o: CFLAGS += $(BUILDINFO)
$(BUILD)/pic/common/meta.o: $(BUILD)/buildinfo
# Fortran symbols are lower case: their names come from the call table.
$(BUILD)/pic/profile/fortran.o: $(BUILD)/pic/profile/lcnames.h
$(BUILD)/pic/profile/lcnames.h: src/profile/calls.h src/profile/lcnames.in | check-mpicc
	@mkdir -p $(@D)
	$(MPICC) -E -P -Isrc/profile -x c src/profile/lcnames.in > $@.i
	tr ' ' '\n' < $@.i | awk '/^MBP_NAME_/ {n = substr($$0, 10); printf "#define MBP_LC_%s %s\n", n, tolower(n)}' > $@
$(PROF_LIB): $(PROF_OBJ) | check-mpicc
	@mkdir -p $(@D)
	$(MPICC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl
./libmpimb-prof.so: $(PROF_LIB) FORCE
	@cmp -s $< $@ || cp $< $@

# C unit tests: plain programs linked with the harness (MPI only where needed).
$(BUILD)/tests/%: tests/unit/%.c $(COMMON_OBJ) | check-mpicc
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -Isrc/common $(LDFLAGS) -o $@ $^ $(LDLIBS)
unit: $(UNIT_BIN)

-include $(shell find build -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- set-up
VENV := .venv
PY   := $(VENV)/bin/python
deps:
	@scripts/install-deps $(DEPS_ARGS)

$(VENV)/.stamp: analysis/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e './analysis[dev]'
	@touch $@
venv: $(VENV)/.stamp

# make run: the main job — halocompare on 4 processes, table on stdout,
# CSV + JSON under results/, then the HTML report of that run.
RUN_NP ?= 4
run: deps
	@$(MAKE) --no-print-directory all venv
	scripts/run-main $(RUN_NP)

# make test: every build variant, then the whole suite (pytest).
test: DEPS_ARGS = --test
test: deps
	@$(MAKE) --no-print-directory venv
	@$(MAKE) --no-print-directory test-builds
	scripts/run-tests

test-builds:
	@$(MAKE) --no-print-directory WERROR=1 MPI=mpich BINDIR=build/mpich/bin all unit
	@$(MAKE) --no-print-directory WERROR=1 MPI=openmpi BINDIR=build/openmpi/bin all unit
	@$(MAKE) --no-print-directory WERROR=1 MPI=mpich SAN=asan all unit
	@$(MAKE) --no-print-directory WERROR=1 MPI=mpich SAN=tsan all
	@if command -v smpicc >/dev/null; then $(MAKE) --no-print-directory WERROR=1 MPI=smpi all; fi

# make simulate: a program on a simulated cluster (SimGrid SMPI), e.g.
#   make simulate SIM_PROG=pingpong SIM_NP=2 SIM_PLATFORM=two-node SIM_ARGS='--quick'
SIM_PROG ?= halocompare
SIM_NP ?= 1024
SIM_PLATFORM ?= torus-bgl
SIM_ARGS ?= --quick --verify
simulate:
	scripts/simulate $(SIM_PROG) -n $(SIM_NP) --platform $(SIM_PLATFORM) -- $(SIM_ARGS)

lint: venv
	$(VENV)/bin/ruff check analysis tests
	$(VENV)/bin/mypy analysis/mpimb

clean:
	rm -rf build $(PROGRAMS) libmpimb-prof.so
distclean: clean
	rm -rf $(VENV)
