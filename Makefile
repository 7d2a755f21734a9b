# mpimb — build the programs into the repository root.
#
#   make                      build with $(MPICC) (default mpicc) into build/<its library>/
#   make MPI=mpich|openmpi    shortcut for MPICC=mpicc.mpich / mpicc.openmpi
#   make MPI=smpi             SimGrid's simulated MPI (binaries in build/smpi/bin)
#   make simulate             halocompare on 1024 simulated ranks (torus-bgl); see docs/simulate.md
#   make SAN=asan|tsan        sanitizer build (binaries in build/<mpi>-<san>/bin)
#   make run                  install what is missing, build, run halocompare -n 4
#   make test                 install what is missing, build every variant, run all tests
#   make install PREFIX=DIR   programs, mpimb-report, Slurm scripts, data under DIR (docs/install.md):
#                             the build the root binaries are copies of, or MPI=...'s
#   make uninstall PREFIX=DIR remove exactly what install wrote
#   make dist                 mpimb-<version>.tar.gz, buildable without git
#
# Each MPI library has its own build, build/<library>/ (mpich, openmpi, ...:
# what $(MPICC)'s mpi.h says it is), which no other build touches; the root
# binaries (./halocompare ...) are copies of the last plain build's, and
# make says whose (build/root.mk records it, for make install).
#
# CC (on the command line, when MPICC is not given), MPICC, CPPFLAGS, CFLAGS,
# LDFLAGS and LDLIBS follow the GNU conventions: yours come after what the
# build needs (NEEDED_*), so they add to it and never remove it.

# make install without MPI=, MPICC= or CC=: the build the root binaries are
# copies of (the MPI= or MPICC= that made them), else the default one.
ROOT_RECORD := build/root.mk
ifneq ($(filter install,$(MAKECMDGOALS)),)
  ifeq ($(MPI)-$(origin MPICC)-$(filter command,$(origin CC)),-undefined-)
    -include $(ROOT_RECORD)
  endif
endif

ifeq ($(MPI),mpich)
  MPICC := mpicc.mpich
else ifeq ($(MPI),openmpi)
  MPICC := mpicc.openmpi
else ifeq ($(MPI),smpi)
  MPICC := smpicc
else ifneq ($(MPI),)
  $(error MPI must be mpich, openmpi or smpi, got '$(MPI)')
endif
# OSU-style `make CC=mpicc`: a command-line CC names the MPI compiler wrapper
# (an environment CC is usually the plain compiler and is not used).
ifeq ($(origin CC)-$(origin MPICC),command line-undefined)
  MPICC := $(CC)
endif
MPICC ?= mpicc

# The library $(MPICC) compiles for, from the macros its mpi.h defines (the
# programs say the same in --version and the JSON's mpi.built_with);
# "unknown" where there is no mpi.h to read (no such compiler: check-mpicc says so).
ifneq ($(MPI),)
  MPI_LIB := $(MPI)
else
  MPI_LIB := $(or $(shell printf '\043include <mpi.h>\n' | $(MPICC) -E -dM -x c - 2>/dev/null | \
               awk '/^.define I_MPI_VERSION /{i=1} /^.define MVAPICH2_VERSION /{v=1} /^.define OPEN_MPI /{o=1} \
                    /^.define MPICH_VERSION /{m=1} END{print i?"intelmpi":v?"mvapich2":o?"openmpi":m?"mpich":""}'),unknown)
endif
lib_name = $(or $(word 2,$(subst :, ,$(filter $(1):%,mpich:MPICH openmpi:Open_MPI smpi:SimGrid_SMPI \
                  intelmpi:Intel_MPI mvapich2:MVAPICH2))),$(1))
MPI_NAME := $(subst _, ,$(call lib_name,$(MPI_LIB)))

CONFIG  := $(MPI_LIB)$(if $(SAN),-$(SAN))
BUILD   ?= build/$(CONFIG)
# Plain builds land in the repository root; variants keep their own bin/.
ifeq ($(MPI_LIB)$(SAN),$(filter-out smpi,$(MPI_LIB)))
  BINDIR ?= .
else
  BINDIR ?= $(BUILD)/bin
endif

# Sanitizer builds at -O1, as ASan and TSan advise: exact stack traces, and a
# quarter of -O2's compile time with -fsanitize (measured: ASan+UBSan 17 s of
# CPU against 66 s, TSan 8 against 27).  The warnings -O2 adds are the plain
# builds' to catch.
ifneq ($(SAN),)
  CFLAGS ?= -O1 -g
endif
CFLAGS ?= -O2 -g
NEEDED_CPPFLAGS := -D_GNU_SOURCE -Isrc/common
NEEDED_CFLAGS   := -std=c11 -Wall -Wextra $(if $(WERROR),-Werror)
NEEDED_LDFLAGS  :=
NEEDED_LDLIBS   := -lhwloc -lm -lpthread
# gcc 12 misreads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) as a zero-sized
# array once calls are inlined (a false -Wstringop-overflow), so that one
# warning is off; everything else stays an error under WERROR=1.
NEEDED_CFLAGS   += -Wno-stringop-overflow
ifeq ($(SAN),asan)
  NEEDED_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  NEEDED_LDFLAGS += -fsanitize=address,undefined
else ifeq ($(SAN),tsan)
  NEEDED_CFLAGS  += -fsanitize=thread -fno-omit-frame-pointer
  NEEDED_LDFLAGS += -fsanitize=thread
else ifneq ($(SAN),)
  $(error SAN must be asan or tsan, got '$(SAN)')
endif
ifeq ($(MPI),smpi)
  NEEDED_CPPFLAGS += -DMB_SIMULATED
endif
COMPILE = $(MPICC) $(NEEDED_CPPFLAGS) $(CPPFLAGS) $(NEEDED_CFLAGS) $(CFLAGS)
LINK    = $(MPICC) $(NEEDED_LDFLAGS) $(LDFLAGS)
LIBS    = $(NEEDED_LDLIBS) $(LDLIBS)

PROGRAMS := $(sort $(filter-out common profile,$(notdir $(wildcard src/*))))
COMMON_SRC := $(wildcard src/common/*.c)
# The harness is compiled once per build, position-independent with hidden
# symbols, for the programs and the profiler alike ($(BUILD)/pic, below):
# hidden symbols are bound inside the executable as -fPIE binds them, and a
# second copy would only double a fifth of every build's compile time.
COMMON_OBJ := $(COMMON_SRC:src/%.c=$(BUILD)/pic/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# The version: VERSION's first line, the one definition (the analysis package
# reads it too).  The commit: git's when this directory is its own checkout,
# else the "commit" line make dist wrote into the tarball's VERSION.
VERSION    := $(shell sed -n 1p VERSION)
IN_GIT     := $(filter $(CURDIR),$(shell git rev-parse --show-toplevel 2>/dev/null))
ifneq ($(IN_GIT),)
  GIT_COMMIT := $(shell git rev-parse --short=12 HEAD)$(shell git diff --quiet HEAD || echo -dirty)
else
  GIT_COMMIT := $(or $(shell sed -n 's/^commit //p' VERSION),unknown)
endif
# $(call cstring,TEXT): TEXT as a C string literal, one shell word
cstring = '"$(subst ','\'',$(subst ",\",$(subst \,\\,$(1))))"'
BUILDINFO := -DMB_VERSION=$(call cstring,$(VERSION)) -DMB_GIT_COMMIT=$(call cstring,$(GIT_COMMIT)) \
             -DMB_CC=$(call cstring,$(MPICC)) \
             -DMB_CFLAGS=$(call cstring,$(strip $(NEEDED_CPPFLAGS) $(CPPFLAGS) $(NEEDED_CFLAGS) $(CFLAGS)))

.PHONY: all run test test-builds unit deps venv clean distclean lint check-mpicc simulate install uninstall dist root-note
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
	$$(LINK) -o $$@ $$^ $$(LIBS)
ifneq ($$(BINDIR),$$(BUILD)/bin)
$$(BINDIR)/$(1): $$(BUILD)/bin/$(1) FORCE
	@cmp -s $$< $$@ || cp $$< $$@
endif
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rules,$(p))))
$(BUILD)/bin/threads: NEEDED_LDLIBS += -lbz2  # master-worker compresses with libbz2
FORCE:

# The build info goes into meta.o alone, which is rebuilt when it changes.
$(BUILD)/pic/common/meta.o: NEEDED_CPPFLAGS += $(BUILDINFO)
$(BUILD)/pic/common/meta.o: $(BUILD)/buildinfo
$(BUILD)/buildinfo: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(subst ','\'',$(BUILDINFO))' | cmp -s - $@ || printf '%s\n' '$(subst ','\'',$(BUILDINFO))' > $@

$(BUILD)/obj/%.o: src/%.c $(BUILD)/compiler | check-mpicc
	@mkdir -p $(@D)
	$(COMPILE) -MMD -MP -c -o $@ $<

# The compiler a build's objects come from: another installation of the same
# library (MPICC=/other/mpicc) rebuilds them rather than mixing with them.
MPICC_PATH := $(realpath $(shell command -v $(firstword $(MPICC)) 2>/dev/null))
$(BUILD)/compiler: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(subst ','\'',$(MPICC_PATH) $(wordlist 2,999,$(MPICC)))' | cmp -s - $@ || \
	    printf '%s\n' '$(subst ','\'',$(MPICC_PATH) $(wordlist 2,999,$(MPICC)))' > $@

# The root binaries: say whose they are now, and record it for make install.
ifeq ($(BINDIR),.)
all: root-note
root-note: $(PROGRAMS:%=./%) $(if $(filter smpi,$(MPI_LIB)),,./libmpimb-prof.so)
	@mkdir -p $(dir $(ROOT_RECORD))
	@{ echo '# written by make: the build the root binaries are copies of (make install installs it)'; \
	   $(if $(MPI),echo 'MPI := $(MPI)';,echo 'MPICC := $(subst ','\'',$(subst $$,$$$$,$(MPICC)))';) \
	   echo 'BUILD := $(BUILD)'; } > $(ROOT_RECORD)
	@echo "make: $(PROGRAMS:%=./%) are now the $(MPI_NAME) build ($(BUILD)/bin)"
endif

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
$(BUILD)/pic/%.o: src/%.c $(BUILD)/compiler | check-mpicc
	@mkdir -p $(@D)
	$(COMPILE) -fPIC -fvisibility=hidden -I$(BUILD)/pic/profile -MMD -MP -c -o $@ $<
# Fortran symbols are lower case: their names come from the call table.
$(BUILD)/pic/profile/fortran.o: $(BUILD)/pic/profile/lcnames.h
$(BUILD)/pic/profile/lcnames.h: src/profile/calls.h src/profile/lcnames.in | check-mpicc
	@mkdir -p $(@D)
	$(MPICC) -E -P -Isrc/profile -x c src/profile/lcnames.in > $@.i
	tr ' ' '\n' < $@.i | awk '/^MBP_NAME_/ {n = substr($$0, 10); printf "#define MBP_LC_%s %s\n", n, tolower(n)}' > $@
$(PROF_LIB): $(PROF_OBJ) | check-mpicc
	@mkdir -p $(@D)
	$(LINK) -shared -o $@ $^ $(LIBS) -ldl
./libmpimb-prof.so: $(PROF_LIB) FORCE
	@cmp -s $< $@ || cp $< $@

# SMPI: every simulated rank is a privatized copy of the program (smpirun
# dlopens one per rank), so nothing can be preloaded; --trace runs a second
# build of each program with the profiler linked in, build/smpi/trace/PROGRAM
# (scripts/simulate picks it; the plain build never contains the profiler).
# The profiler and its own copy of src/common are one object whose hidden
# symbols are made local, so they share no state with the program's harness;
# -Bsymbolic-functions binds the program's MPI_* calls to the profiler's
# wrappers rather than to libsimgrid's.
ifeq ($(MPI),smpi)
all: $(PROGRAMS:%=$(BUILD)/trace/%)
$(BUILD)/trace/prof.o: $(filter-out %/fortran.o,$(PROF_OBJ))
	@mkdir -p $(@D)
	$(LD) -r -o $@.tmp $^ && objcopy --localize-hidden $@.tmp $@ && rm -f $@.tmp
define traced_rule
$$(BUILD)/trace/$(1): $$($(1)_OBJ) $$(COMMON_OBJ) $$(BUILD)/trace/prof.o | check-mpicc
	@mkdir -p $$(@D)
	$$(LINK) -Wl,-Bsymbolic-functions -o $$@ $$^ $$(LIBS)
endef
$(foreach p,$(PROGRAMS),$(eval $(call traced_rule,$(p))))
$(BUILD)/trace/threads: NEEDED_LDLIBS += -lbz2
# The XT models' NIC, a SimGrid plugin scripts/simulate preloads into smpimain
# where the platform asks for it (platforms/models/nic.cpp; docs/simulate.md).
all: $(BUILD)/libmpimb-nic.so
# (written aside, then renamed: a simulation running meanwhile keeps the copy it mapped)
$(BUILD)/libmpimb-nic.so: platforms/models/nic.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -fPIC -shared -Wall -Wextra $(if $(WERROR),-Werror) -o $@.tmp $< -lsimgrid && mv -f $@.tmp $@
endif

# C unit tests: plain programs linked with the harness (MPI only where needed).
$(BUILD)/tests/%: tests/unit/%.c $(COMMON_OBJ) | check-mpicc
	@mkdir -p $(@D)
	$(COMPILE) $(NEEDED_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)
unit: $(UNIT_BIN)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- install, dist
# GNU conventions (docs/install.md): PREFIX (or prefix), bindir, libdir,
# datadir, docdir one by one, DESTDIR for staging.  What is installed is the
# build of one library, $(BUILD)/bin: MPI='s (or MPICC='s, SAN='s), by default
# the one the root binaries are copies of (build/root.mk); never the root
# copies themselves, which a later make may have replaced.  Plus mpimb-report in its
# own virtual environment under $(libdir)/mpimb/venv (REPORT=no: without it;
# PIP_ARGS for an offline wheel directory).  make uninstall removes what the
# install manifest ($(datadir)/mpimb/install-manifest) lists.
PREFIX      ?= /usr/local
prefix      ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir      ?= $(exec_prefix)/bin
libdir      ?= $(exec_prefix)/lib
datarootdir ?= $(prefix)/share
datadir     ?= $(datarootdir)
docdir      ?= $(datarootdir)/doc/mpimb
PYTHON      ?= python3
REPORT      ?= yes
INSTALL_DIRS = --destdir '$(DESTDIR)' --prefix '$(prefix)' --bindir '$(bindir)' --libdir '$(libdir)' \
               --datadir '$(datadir)' --docdir '$(docdir)'

install: $(PROGRAMS:%=$(BUILD)/bin/%) $(if $(filter smpi,$(MPI_LIB)),,$(PROF_LIB))
	@scripts/install-tree install $(INSTALL_DIRS) --programs '$(PROGRAMS:%=$(BUILD)/bin/%)' \
	    --prof-lib '$(PROF_LIB)' --python '$(PYTHON)' --report '$(REPORT)' --pip-args '$(PIP_ARGS)' \
	    --built-for '$(MPI_NAME) build in $(BUILD)/bin'

uninstall:
	@scripts/install-tree uninstall $(INSTALL_DIRS)

# make dist: HEAD as mpimb-$(VERSION).tar.gz, its VERSION file also naming
# the commit, so a build from the tarball (no .git) records both.
DIST := mpimb-$(VERSION)
dist:
	@test -n "$(IN_GIT)" || { echo "make dist: needs the git checkout (this tree has no .git of its own)" >&2; exit 2; }
	@git diff --quiet HEAD || echo "make dist: note: uncommitted changes are not in $(DIST).tar.gz (it is HEAD)" >&2
	@rm -rf $(BUILD)/dist && mkdir -p $(BUILD)/dist
	@git archive --format=tar --prefix=$(DIST)/ HEAD | tar -x -C $(BUILD)/dist
	@printf '%s\ncommit %s\n' '$(VERSION)' "$$(git rev-parse --short=12 HEAD)" > $(BUILD)/dist/$(DIST)/VERSION
	@tar -C $(BUILD)/dist --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$(git log -1 --format=%ct) \
	    -cf - $(DIST) | gzip -n -9 > $(DIST).tar.gz
	@rm -rf $(BUILD)/dist
	@echo "make dist: $(DIST).tar.gz (commit $$(git rev-parse --short=12 HEAD))"

# ---------------------------------------------------------------- set-up
VENV := .venv
PY   := $(VENV)/bin/python
deps:
	@scripts/install-deps $(DEPS_ARGS)

$(VENV)/.stamp: analysis/pyproject.toml analysis/setup.py VERSION
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e './analysis[dev]'
	@# byte-code of what the tools import, on every core (pip compiles one file at a time, the
	@# dependencies' own test suites included: a third of the files); as with pip's, a module that
	@# does not compile is named and compiled when imported instead
	$(PY) -m compileall -q -j 0 -x 'site-packages/(.*/)?tests?/' $(VENV)/lib || \
	    echo "make venv: the modules named above were not byte-compiled (they compile when imported)" >&2
	@touch $@
venv: $(VENV)/.stamp

# make run: the main job — halocompare on 4 processes (fewer where the
# machine has fewer cores; RUN_NP=N to choose; RUN_ARGS="..." adds
# halocompare options, e.g. RUN_ARGS="--quick"; RUN_LAUNCHES=N launches
# into one result set, default 1), table on stdout, CSV + JSON under
# results/, then the HTML report of the set.  The three reach
# scripts/run-main through the environment, never through the recipe's
# shell text, which a quote in them would break (or a '; cmd' run).
RUN_NP ?=
RUN_ARGS ?=
RUN_LAUNCHES ?= 1
run: export RUN_NP := $(RUN_NP)
run: export RUN_ARGS := $(RUN_ARGS)
run: export RUN_LAUNCHES := $(RUN_LAUNCHES)
run: deps
	@$(MAKE) --no-print-directory all venv
	scripts/run-main

# make test: every build variant, then the whole suite (pytest; its 30
# slowest tests are listed at the end).  The virtual environment (pip, one
# core) is made while the variants compile: one more job than cores.  pip
# byte-compiles at install, as by default: where PYTHONDONTWRITEBYTECODE is
# set, nothing else would, and every mpimb-report the tests start would
# compile pandas and matplotlib again (3.7 s against 2.2 s per start here).
test: DEPS_ARGS = --test
test: deps
	@$(MAKE) --no-print-directory -j$$(( $(TEST_JOBS) + 1 )) --output-sync=target venv $(TEST_BUILDS:%=test-build-%)
	scripts/run-tests

# The variants build side by side ($(TEST_JOBS) jobs, one job server shared by
# all): each has its own build/<config>/ and bin/, so none writes another's
# files, and none copies into the repository root.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_BUILDS := mpich openmpi mpich-asan mpich-tsan smpi
.PHONY: $(TEST_BUILDS:%=test-build-%)
test-builds:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target $(TEST_BUILDS:%=test-build-%)
test-build-mpich:
	@$(MAKE) --no-print-directory WERROR=1 MPI=mpich BINDIR=build/mpich/bin all unit
test-build-openmpi:
	@$(MAKE) --no-print-directory WERROR=1 MPI=openmpi BINDIR=build/openmpi/bin all unit
test-build-mpich-asan:
	@$(MAKE) --no-print-directory WERROR=1 MPI=mpich SAN=asan all unit
test-build-mpich-tsan:
	@$(MAKE) --no-print-directory WERROR=1 MPI=mpich SAN=tsan all
test-build-smpi:
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
	$(VENV)/bin/ruff check analysis tests integrations
	$(VENV)/bin/mypy analysis/mpimb

clean:
	rm -rf build $(PROGRAMS) libmpimb-prof.so
distclean: clean
	rm -rf $(VENV) mpimb-*.tar.gz
