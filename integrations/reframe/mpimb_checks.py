# The mpimb tests for ReFrame (docs/reframe.md): one parameterised run-only
# test per program, from the library beside this file.
#
#   reframe -C config/local.py -c mpimb_checks.py -r             # this machine, both MPI libraries
#   reframe -C config/local.py -c mpimb_checks.py -r -S quick=y  # seconds: a smoke test of the set-up
#
# References: subclass these (or the *_base classes of mpimb_reframe) in a
# site check file and set `reference` per system:partition, as for any
# ReFrame test; docs/reframe.md has an example.

import os
import sys

import reframe as rfm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpimb_reframe as lib  # beside this file


@rfm.simple_test
class mpimb_halocompare(lib.halocompare_base):
    descr = 'mpimb halocompare: 2-D halo exchange, MB/s per process per communicator'


@rfm.simple_test
class mpimb_pingpong(lib.pingpong_base):
    descr = 'mpimb pingpong: latency, ping-ping, bandwidths (OSU definitions)'


@rfm.simple_test
class mpimb_collectives(lib.collectives_base):
    descr = 'mpimb collectives: time per call (OSU timing)'


@rfm.simple_test
class mpimb_rma(lib.rma_base):
    descr = 'mpimb rma: put latency and bandwidth per synchronisation, beside send/receive'


@rfm.simple_test
class mpimb_threads(lib.threads_base):
    descr = 'mpimb threads: the cost of MPI_THREAD_MULTIPLE (MULTIPLE - SINGLE)'
