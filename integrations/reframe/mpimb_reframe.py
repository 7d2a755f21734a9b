# mpimb ReFrame test library (docs/reframe.md): the base classes of the
# mpimb tests.  They are not registered; mpimb_checks.py registers one test
# per program, and a site's own check file may subclass them instead (to set
# references, options or the number of tasks).
#
# Each test is run-only: the programs come from the environment's
# extras['mpimb_bindir'], the test variable mpimb_bindir, or $PATH (a module
# that puts an installed mpimb on it), and are launched by the partition's
# configured launcher.  Sanity comes from the results themselves: the JSON's
# "complete" flag and the CSV's "verified" column (the runs use --verify).
# Performance variables are read from the CSV with the standard library (csv,
# json), so the tests need nothing besides ReFrame; their names are fixed by
# the columns that identify a row (analysis/mpimb/schema/results.schema.json).
#
# ruff: noqa: RUF012 (ReFrame's test attributes are class-level lists by design)

from __future__ import annotations

import csv
import json
import os
import re

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

CSV = 'mpimb.csv'
SUFFIXES = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}


def parse_size(text: str) -> int:
    '''"8", "64K", "1M" -> bytes (the programs' --sizes syntax).'''
    m = re.fullmatch(r'(\d+)([KMG]?)', text.strip())
    if not m:
        raise ValueError(f'bad size {text!r}')
    return int(m.group(1)) * SUFFIXES.get(m.group(2), 1)


def size_name(n: int) -> str:
    '''8 -> "8B", 65536 -> "64KiB", 1048576 -> "1MiB" (perf variable names).'''
    for unit, mult in (('GiB', 1 << 30), ('MiB', 1 << 20), ('KiB', 1 << 10)):
        if n >= mult and n % mult == 0:
            return f'{n // mult}{unit}'
    return f'{n}B'


def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def read_meta(path: str) -> dict:
    with open(os.path.splitext(path)[0] + '.json') as f:
        return json.load(f)


def params_of(row: dict[str, str]) -> dict[str, str]:
    '''The params column: "key=value;..." -> dict.'''
    return dict(p.split('=', 1) for p in row.get('params', '').split(';') if '=' in p)


def measured(row: dict[str, str]) -> bool:
    return not row['stop_reason'].startswith('n/a') and row['time_median_s'] != ''


@sn.deferrable
def results_ok(path: str) -> bool:
    '''A run's results are sane: its metadata says it completed, the CSV holds
    every row the metadata counts, no row failed verification and at least
    one row was measured.  Raises SanityError saying what is wrong.'''
    try:
        meta, rows = read_meta(path), read_rows(path)
    except (OSError, ValueError) as e:
        raise SanityError(f'{path}: no results ({e})') from e
    if meta.get('complete') is not True:
        raise SanityError(f'{path}: the run did not complete ({meta.get("ended_by", "no end recorded")})')
    if meta.get('rows') != len(rows):
        raise SanityError(f'{path}: {len(rows)} rows, the metadata says {meta.get("rows")}')
    bad = [r for r in rows if r['verified'] == 'no']
    if bad:
        first = bad[0]
        raise SanityError(f'{path}: {len(bad)} row(s) failed verification, first: '
                          f'{first["test"]} {first["method"]} {first["comm"]} {first["bytes"]} B')
    if not any(measured(r) for r in rows):
        raise SanityError(f'{path}: no row was measured ({rows[0]["stop_reason"] if rows else "no rows"})')
    return True


@sn.deferrable
def csv_value(path: str, column: str, scale: float, key: tuple[tuple[str, str], ...]) -> float:
    '''The one row of the CSV whose columns equal key: column x scale.'''
    rows = [r for r in read_rows(path) if all(r[k] == v for k, v in key)]
    if len(rows) != 1:
        raise SanityError(f'{path}: {len(rows)} rows match {dict(key)}, expected one')
    if rows[0][column] == '':
        raise SanityError(f'{path}: {column} is empty for {dict(key)} ({rows[0]["stop_reason"]})')
    return float(rows[0][column]) * scale


def row_key(row: dict[str, str]) -> tuple[tuple[str, str], ...]:
    '''The identifying columns of a row (the schema's x-key columns that vary
    within one run).'''
    return tuple((k, row[k]) for k in ('test', 'method', 'comm', 'neighbors', 'periodic', 'bytes', 'threads',
                                        'thread_level', 'params'))


class mpimb_base(rfm.RunOnlyRegressionTest):
    '''What every mpimb test shares: the command line, sanity, the CSV.'''

    #: The program (set by each test).
    program = variable(str)

    #: Directory of the mpimb programs.  Empty: the environment's
    #: ``extras['mpimb_bindir']`` if set, else the programs on ``$PATH``.
    mpimb_bindir = variable(str, value='')

    #: ``--quick``: tiny counts, for smoke tests of the set-up.
    quick = variable(bool, value=False)

    #: ``--verify``: every byte received is checked before timing (sanity
    #: then requires every row verified).
    verify = variable(bool, value=True)

    #: Further program options (e.g. ``['--time-budget', '1']``).
    options = variable(typ.List[str], value=[])

    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    num_tasks = 2
    tags = {'mpimb'}
    maintainers = ['mpimb']

    def program_args(self) -> list[str]:
        '''The test's own program options (each test adds its selection).'''
        return []

    def outputs(self) -> list[str]:
        '''The CSV files the job writes, relative to the stage directory.'''
        return [CSV]

    def mpimb_executable(self) -> str:
        d = self.mpimb_bindir or self.current_environ.extras.get('mpimb_bindir', '')
        return os.path.join(d, self.program) if d else self.program

    def common_args(self, csv_name: str) -> list[str]:
        '''-o, --label (system-partition-environment), --quick, --verify.'''
        label = re.sub(r'[^A-Za-z0-9._-]', '_', f'{self.current_system.name}-{self.current_partition.name}-'
                                                 f'{self.current_environ.name}')
        return ['-o', csv_name, '--label', label[:60], *(['--quick'] if self.quick else []),
                *(['--verify'] if self.verify else [])]

    @run_before('run')
    def set_command(self):
        self.executable = self.mpimb_executable()
        self.executable_opts = [*self.common_args(self.outputs()[0]), *self.program_args(), *self.options]
        self.keep_files = [f for c in self.outputs() for f in (c, os.path.splitext(c)[0] + '.json')]

    def csv_path(self, name: str = CSV) -> str:
        return os.path.join(self.stagedir, name)

    @sanity_function
    def validate(self):
        # the results say why a run failed; the exit code catches the rest
        return sn.all([*(results_ok(self.csv_path(c)) for c in self.outputs()),
                       sn.assert_eq(self.job.exitcode, 0, msg=f'{self.program} exited with {{0}}')])

    def perf_rows(self) -> list[dict[str, str]]:
        '''The measured rows of the run (after it: the CSV exists).'''
        return [r for r in read_rows(self.csv_path()) if measured(r)]

    def perf_time_us(self, row: dict[str, str]):
        return sn.make_performance_function(csv_value(self.csv_path(), 'time_median_s', 1e6, row_key(row)), 'us')

    def perf_mbps(self, row: dict[str, str]):
        return sn.make_performance_function(csv_value(self.csv_path(), 'mbps', 1.0, row_key(row)), 'MB/s')


class halocompare_base(mpimb_base):
    '''The 2-D halo exchange: MB/s per process of each method on each
    communicator (variables METHOD_COMM, METHOD_COMM_periodic).'''

    program = 'halocompare'
    neighbors = parameter([4, 8])
    methods = variable(str, value='irecv-isend')
    comms = variable(str, value='all')
    periodic = variable(str, value='no')
    num_tasks = 4

    def program_args(self):
        return ['--tests', 'halo', '--neighbors', str(self.neighbors), '--methods', self.methods,
                '--comms', self.comms, '--periodic', self.periodic]

    @run_before('performance')
    def set_perf_variables(self):
        self.perf_variables = {
            f'{r["method"]}_{r["comm"]}{"_periodic" if r["periodic"] == "1" else ""}': self.perf_mbps(r)
            for r in self.perf_rows()}


class pingpong_base(mpimb_base):
    '''Point-to-point as OSU: KIND_SIZE_PAIRS at the smallest and largest
    size, latency and ping-ping in us, bandwidths in MB/s, for each pair
    placement the allocation has (intra, inter).'''

    program = 'pingpong'
    kind = parameter(['latency', 'pingping', 'bw', 'bibw'])
    sizes = variable(str, value='8:1M')

    def program_args(self):
        return ['--tests', self.kind, '--sizes', self.sizes]

    @run_before('performance')
    def set_perf_variables(self):
        ends = {str(parse_size(s)) for s in self.sizes.split(':')}
        self.perf_variables = {
            f'{self.kind}_{size_name(int(r["bytes"]))}_{r["comm"]}':
                self.perf_time_us(r) if self.kind in ('latency', 'pingping') else self.perf_mbps(r)
            for r in self.perf_rows() if r['bytes'] in ends}


class collectives_base(mpimb_base):
    '''Library collectives, OSU timing: COLLECTIVE_SIZE in us at the
    smallest and largest size (barrier: "barrier").'''

    program = 'collectives'
    collective = parameter(['barrier', 'bcast', 'allreduce', 'alltoall'])
    sizes = variable(str, value='8:1M')
    num_tasks = 4

    def program_args(self):
        return ['--tests', self.collective, *([] if self.collective == 'barrier' else ['--sizes', self.sizes])]

    @run_before('performance')
    def set_perf_variables(self):
        ends = {str(parse_size(s)) for s in self.sizes.split(':')} | {''}
        self.perf_variables = {
            f'{r["test"]}{"_" + size_name(int(r["bytes"])) if r["bytes"] else ""}': self.perf_time_us(r)
            for r in self.perf_rows() if r['bytes'] in ends and r['method'] == 'library'}


class rma_base(mpimb_base):
    '''One-sided put per synchronisation mode: TEST_WINDOW_SIZE (put-latency
    in us, put-bw in MB/s) at the smallest and largest size, beside the
    send/receive reference (window "p2p").'''

    program = 'rma'
    sync = parameter(['fence', 'pscw', 'lock-shared', 'lockall-flush'])
    op = variable(str, value='put')
    windows = variable(str, value='allocate')
    sizes = variable(str, value='8:1M')

    def program_args(self):
        return ['--ops', self.op, '--syncs', self.sync, '--windows', self.windows, '--sizes', self.sizes]

    @run_before('performance')
    def set_perf_variables(self):
        ends = {str(parse_size(s)) for s in self.sizes.split(':')}
        self.perf_variables = {
            f'{r["test"]}_{r["comm"]}_{size_name(int(r["bytes"]))}':
                self.perf_time_us(r) if r['test'].endswith('-latency') else self.perf_mbps(r)
            for r in self.perf_rows() if r['bytes'] in ends}


class threads_base(mpimb_base):
    '''The cost of MPI_THREAD_MULTIPLE for a single-threaded program: the
    same ping-pong launched at level SINGLE and at MULTIPLE (two launches in
    one job, the first before the main one); single_SIZE, multiple_SIZE and
    overhead_SIZE = multiple - single, in us per message.'''

    program = 'threads'
    kind = parameter(['overhead-latency', 'overhead-bw'])
    sizes = variable(str, value='8:8')
    levels = ('single', 'multiple')

    def outputs(self):
        return [f'{lev}.csv' for lev in reversed(self.levels)]  # the main launch first

    def program_args(self):
        return ['--tests', self.kind, '--sizes', self.sizes]

    @run_before('run')
    def launch_single_first(self):
        main, first = self.levels[1], self.levels[0]
        self.executable_opts += ['--level', main]
        # the job learns its task count only when ReFrame emits the main
        # launch; an mpiexec launcher needs it for this one too
        self.job.num_tasks = self.num_tasks
        launch = self.job.launcher.run_command(self.job)
        args = [*self.common_args(f'{first}.csv'), *self.program_args(), *self.options, '--level', first]
        self.prerun_cmds = [' '.join([launch, self.executable, *args])]

    def _rows(self, level: str) -> dict[str, dict[str, str]]:
        return {r['bytes']: r for r in read_rows(self.csv_path(f'{level}.csv')) if measured(r)}

    @run_before('performance')
    def set_perf_variables(self):
        single, multiple = (self._rows(lev) for lev in self.levels)
        perf = {}
        for nbytes in sorted(set(single) & set(multiple), key=int):
            per = [float(params_of(r).get('window', 1)) for r in (single[nbytes], multiple[nbytes])]
            t = [csv_value(self.csv_path(f'{lev}.csv'), 'time_median_s', 1e6 / p, row_key(rows[nbytes]))
                 for lev, p, rows in zip(self.levels, per, (single, multiple))]
            name = size_name(int(nbytes))
            perf[f'single_{name}'] = sn.make_performance_function(t[0], 'us')
            perf[f'multiple_{name}'] = sn.make_performance_function(t[1], 'us')
            perf[f'overhead_{name}'] = sn.make_performance_function(t[1] - t[0], 'us')
        self.perf_variables = perf
