# A ready ReFrame configuration for one machine with MPICH and Open MPI
# (Debian's mpiexec.mpich / mpiexec.openmpi): one partition per library, each
# launching through that library's mpiexec, each with its own environment
# whose extras name the mpimb programs built for it.  docs/reframe.md shows
# how to add the same to a site's configuration.
#
# The programs: $MPIMB_MPICH_BINDIR / $MPIMB_OPENMPI_BINDIR if set, else in a
# checkout build/mpich/bin and build/openmpi/bin (make test-builds), in an
# installed copy (PREFIX/share/mpimb/reframe/config) PREFIX/bin for both.

import os
from pathlib import Path

from reframe.core.backends import register_launcher
from reframe.core.exceptions import ConfigError
from reframe.core.launchers import JobLauncher

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[2]
INSTALLED_BIN = HERE.parents[4] / 'bin' if len(HERE.parents) > 4 else None


def bindir(lib: str) -> str:
    if os.environ.get(f'MPIMB_{lib.upper()}_BINDIR'):
        return os.environ[f'MPIMB_{lib.upper()}_BINDIR']
    if (CHECKOUT / 'src' / 'common').is_dir():
        return str(CHECKOUT / 'build' / lib / 'bin')
    return str(INSTALLED_BIN)


class MpichLauncher(JobLauncher):
    def command(self, job):
        return ['mpiexec.mpich', '-n', str(job.num_tasks)]


class OpenMPILauncher(JobLauncher):
    '''Open MPI oversubscribes only when told; as root it wants to be told that too.'''

    def command(self, job):
        cmd = ['mpiexec.openmpi', '--oversubscribe']
        if os.geteuid() == 0:
            cmd.append('--allow-run-as-root')
        return [*cmd, '-n', str(job.num_tasks)]


for _name, _cls in (('mpiexec-mpich', MpichLauncher), ('mpiexec-openmpi', OpenMPILauncher)):
    try:
        register_launcher(_name)(_cls)
    except ConfigError:  # the file was loaded before
        pass


def partition(lib: str) -> dict:
    return {
        'name': lib,
        'descr': f'this machine, {lib} (mpiexec.{lib})',
        'scheduler': 'local',
        'launcher': f'mpiexec-{lib}',
        'environs': [lib],
        'max_jobs': 1,
    }


site_configuration = {
    'systems': [
        {
            'name': 'mpimb-local',
            'descr': 'one machine, MPICH and Open MPI',
            'hostnames': ['.*'],
            'partitions': [partition('mpich'), partition('openmpi')],
        }
    ],
    'environments': [
        {
            'name': lib,
            'cc': f'mpicc.{lib}',
            'features': ['mpi'],
            'extras': {'mpimb_bindir': bindir(lib)},
        }
        for lib in ('mpich', 'openmpi')
    ],
    'logging': [
        {
            'handlers': [
                {'type': 'stream', 'name': 'stdout', 'level': 'info', 'format': '%(message)s'},
            ],
            'handlers_perflog': [
                {
                    'type': 'filelog',
                    'prefix': '%(check_system)s/%(check_partition)s',
                    'level': 'info',
                    'format': '%(check_job_completion_time)s|%(check_info)s|%(check_perfvalues)s',
                    'format_perfvars': '%(check_perf_var)s=%(check_perf_value)s %(check_perf_unit)s|',
                    'append': True,
                }
            ],
        }
    ],
}
