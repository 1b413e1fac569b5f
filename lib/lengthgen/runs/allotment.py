"""One GPU allotment: the unit of device time every GPU plan of the library is sized in.

A task lent a GPU gets 15 minutes of device time in all, at most 10 minutes a command; two
commands chained on the warm machine give one job about 13 minutes of card time, the rest going
to starting the machine and moving files. The slices plan with these numbers
(`lengthgen.runs.slices`, `budget plan --estimate`), and the cost table says whether a figure
"fits" with them (`lengthgen.runs.cost`): this is their one home.
"""
ALLOTMENT_S = 15 * 60     # device time lent to a task, every command together
COMMAND_S = 10 * 60       # the most one command may run
USABLE_S = 13 * 60        # one job's card time in two chained commands
USABLE_MIN = USABLE_S / 60
# the most one slice of the prepared GPU script (benchmarks/gpu_engine_session.sh) gives a job:
# its first call's queue (the call's 9 minutes, less the card's tests and the last minute kept
# for the records and packs) and the chained call's (about 2 minutes, in a new process); and
# the workers it runs. A job that needs more never finishes in a slice: the planner starts it
# only open-ended (runs.planner), or a figure defers it.
SLICE_S = 9 * 60
WORKERS = 3
# what comes back from a GPU machine to hand on to the next allotment: 8 files of at most
# 16 MiB each, 64 MiB in all (runs.slices packs unfinished states into them)
HANDOFF_FILES = 8
HANDOFF_FILE_BYTES = 16 * 2 ** 20
HANDOFF_BYTES = 64 * 2 ** 20
