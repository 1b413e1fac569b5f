"""`python -m lengthgen try PROGRAM`: your own language through the book's central experiment.

PROGRAM is a .crasp file, a library program's name, or `-` for standard input. The command
prints the program's fragment and C-RASP's prediction per encoding, refuses what it cannot
answer before any training (lengthgen.experiments.try_program.check_program, the memory limit
as `train` applies it, an --out it cannot write or that lies in results/), trains APE and NoPE
decoders with several seeds through the engine's one loop, prints a table per test bin and
writes one record and one PNG under --out.
"""
import sys
import time
from pathlib import Path

from lengthgen.cli.args import DefaultsFormatter
from lengthgen.errors import LengthgenError

SCALES = ("book", "test", "paper")
MAX_STDIN_BYTES = 1_000_000   # a program read from stdin (the library's largest is ~60 KB)


def add_parser(sub):
    p = sub.add_parser("try", help="train APE and NoPE on the language of your own C-RASP "
                                   "program and compare with C-RASP's prediction",
                       formatter_class=DefaultsFormatter,
                       description="Train APE and NoPE decoders (3 seeds each) on the task a "
                                   "C-RASP program defines: its verdict (accepted or not) on "
                                   "every prefix, on strings balanced toward half accepted. "
                                   "Train on Len 1-50, score Len 1-50, 51-100 and 101-150 as "
                                   "Fig. 1 does (a string counts only if every position is "
                                   "right), beside the best constant predictor. At the book "
                                   "scale a small program takes about 3 minutes on 2 CPU cores.")
    p.add_argument("program", help="a .crasp file, a library program name (`crasp list`), or - "
                                   "for standard input")
    p.add_argument("--scale", choices=SCALES, default=None,
                   help="book (minutes on a CPU), test (seconds) or paper (the paper's "
                        "30,000-step budget, on a GPU: its estimated minutes are printed "
                        "first); default: $LENGTHGEN_SCALE when it is one of these, else book")
    p.add_argument("--out", default="runs", help="folder for the record and the PNG (never "
                                                 "results/)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_try)


def read_program(source: str):
    """(program, its text): from stdin (`-`), a file, or the library."""
    from lengthgen.crasp import parse_program
    from lengthgen.crasp.library import program_text, resolve
    if source != "-":
        program = resolve(source)   # a file's errors (syntax: file:line:col) are said here
        path = Path(source)
        text = path.read_text(encoding="utf-8") if path.is_file() else program_text(source)
        return program, text
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1) if hasattr(sys.stdin, "buffer") \
        else sys.stdin.read(MAX_STDIN_BYTES + 1).encode("utf-8")
    if len(data) > MAX_STDIN_BYTES:
        raise LengthgenError(f"<stdin>: a program of more than {MAX_STDIN_BYTES:,} bytes; "
                             f"write it to a file")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise LengthgenError(f"<stdin>: not UTF-8 text (byte 0x{data[e.start]:02x})") from None
    return parse_program(text, filename="<stdin>", name="stdin"), text


def _scale(args) -> str:
    if args.scale is not None:
        return args.scale
    from lengthgen.config import get_scale
    scale = get_scale()
    return scale if scale in SCALES else "book"


def _check_memory(task, scale: str) -> None:
    """The run's memory, estimated as `train` estimates one run and times the seeds of one
    stacked group, refused above LENGTHGEN_MEMORY_LIMIT as `train` refuses it."""
    from lengthgen.cli.args import check_memory
    from lengthgen.cli.train import estimate
    from lengthgen.experiments.try_program import SCALES as CONFIGS
    from lengthgen.experiments.try_program import jobs
    config = CONFIGS[scale]
    first = jobs(task, scale)[0]   # every job of the scale has this size
    need = estimate(first, config["samples_per_bin"])
    seeds = config["seeds"]
    check_memory(seeds * need["memory"],
                 f"this run ({seeds} x {need['parameters']:,.0f} parameters, batch "
                 f"{first.train.batch_size:,})", "use a smaller program alphabet or --scale test")


def _try(args):
    from lengthgen.cli.crasp import accepting
    from lengthgen.cli.train import out_dir
    from lengthgen.crasp.task import program_task
    from lengthgen.experiments import try_program as experiment

    from lengthgen.config import get_device
    scale = _scale(args)
    device = get_device(args.device)   # one that is not here: refused now, not mid-training
    program, text = read_program(args.program)   # a syntax error: file:line:col
    accepting(program)
    out = out_dir(args.out, scale, experiment.RECORD_ID)   # refused before any training
    for line in experiment.prediction_lines(program):
        print(line)
    task = program_task(program)
    if scale == "paper":   # the engine's estimate before anything starts
        cost = experiment.gpu_estimate(task, scale)
        said = (f"the paper scale trains {cost.runs} decoders ({', '.join(cost.shapes)}) for "
                f"{cost.trainings[0].steps:,} steps each: about {cost.minutes():.0f} minutes "
                f"on an H200, {cost.minutes('t4') / 60:.1f} hours on a Colab T4 (the book's "
                f"estimate, lengthgen.runs.cost; early stops make it shorter)")
        if device.type == "cpu":
            raise LengthgenError(f"{said}; on a CPU that is days: use --device cuda, or "
                                 f"--scale book for minutes on a CPU")
        print(said)
    measured = experiment.check_program(program, task, scale)
    _check_memory(task, scale)
    png = out / experiment.RECORD_ID / scale / f"{_safe(program.name or 'program')}.png"
    _check_png(png)

    import torch
    from tqdm.auto import tqdm

    from lengthgen.results import run_finished, run_started, write_record
    started = run_started(str(device))
    start, cpu_start = time.perf_counter(), time.process_time()
    bar = tqdm(total=experiment.total_steps(scale), disable=args.quiet, unit="step",
               leave=False, file=sys.stderr)
    try:
        metrics = experiment.run_try(program, task, scale, device, bar=bar)
    finally:
        bar.close()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"trained and scored in {wall:.0f} s on {device} ({cpu:.0f} s of CPU time in "
          f"{torch.get_num_threads()} thread(s); on a busy machine the two differ)")
    for line in experiment.table_lines(metrics):
        print(line)
    name = _safe(program.name or "program")
    record = {"figure_id": experiment.RECORD_ID, "run_name": name, "task": task.id,
              "config": experiment.SCALES[scale],
              "params": {"program": program.name, "alphabet": list(program.alphabet),
                         "operations": len(program.ops), "source": args.program,
                         "text": text},
              "scale": scale, "seed": None,
              "metrics": {"fragment": program.fragment(),
                          "prediction": experiment.predictions(program),
                          "sampler": task.sampler, "test_seed": experiment.TEST_SEED,
                          "cpu_seconds": round(cpu, 1),
                          **measured, **metrics},
              **run_finished(started, wall)}
    try:
        path = write_record(record, out)
        figure = experiment.draw(metrics, f"{program.name or 'program'} "
                                          f"({program.fragment()}), {scale} scale")
        figure.savefig(png, dpi=120)
    except OSError as e:
        raise LengthgenError(f"the record or the PNG could not be written into {out} "
                             f"({e.strerror or e.__class__.__name__}); the table above is all "
                             f"there is") from None
    print(f"record: {path}")
    print(f"figure: {png}")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _check_png(path: Path) -> None:
    from lengthgen.results import check_writable
    check_writable(path.parent, f"the figure {path.name}")
