"""A stacked group's step through torch.compile: fewer, fused kernels, the same training.

Eager, a step is one kernel per operator: on an H200 a 12-layer width-768 decoder launched
1,182 kernels a step (376 of them copies) and a one-layer group spent its device time in layer
norms and the embeddings' index_put backward (benchmarks/profile_engine.py). torch.compile
(TorchInductor) traces the two halves of a step and generates fused kernels for them:

* the loss: the stacked forward and the objective's per-member losses, and (through
  AOTAutograd) their backward: layer norm with its per-member scale and shift, GELU, the
  residual adds, the class mask and the cross entropy become a few generated kernels, and the
  embedding gathers' backward a scatter-add instead of a sort and index_put;
* the update: the per-member clipping and AdamW on the flat leaf (about ten elementwise passes
  over every weight, eager) as one or two generated kernels.

The matrix products and the attention stay library calls (cuBLAS, the fused attention
kernels). The numbers are those of the eager step up to float rounding (generated reductions
add in another order): tests/test_engine_compile.py trains a group both ways and compares
losses and weights. On a CUDA card each step can also be replayed as a CUDA graph
(`groups.GraphStep` captures the compiled step as it captures the eager one).

Fallback: if compiling fails (no C compiler on a CPU, no Triton on a card, a torch that cannot
trace an operator), the step says so in one line on stderr and runs eagerly from then on; the
step that failed is run eagerly, so no step is lost or taken twice.
"""
import sys

import torch

from lengthgen.errors import LengthgenError

BACKENDS = ("inductor", "aot_eager")   # aot_eager: traced, not generated (tests: fast)


def check_backend(name) -> str:
    """A torch.compile backend's name, or one clear line if torch knows no such backend."""
    import torch._dynamo
    if name not in torch._dynamo.list_backends(exclude_tags=()) + ["inductor"]:
        raise LengthgenError(f"unknown torch.compile backend {name!r}; e.g. "
                             f"{', '.join(BACKENDS)}")
    return name


class CompiledOrEager:
    """`fn` through torch.compile; eager from the first failure on (said once on stderr).

    `fn` must change nothing before it fails: both halves of a step are traced whole (no graph
    breaks) and a traced function's mutations happen after it has been compiled."""

    def __init__(self, fn, name: str, backend: str = "inductor"):
        self.fn, self.name, self.backend = fn, name, backend
        self.compiled = torch.compile(fn, backend=backend, fullgraph=True)
        self.failure: str | None = None

    def __call__(self, *args):
        if self.failure is None:
            try:
                return self.compiled(*args)
            except torch.OutOfMemoryError:   # not a compile failure: the caller decides
                raise
            except Exception as e:   # any compile failure: the eager step is the same step
                self.failure = _cause(e)
                print(f"lengthgen engine: torch.compile ({self.backend}) of the {self.name} "
                      f"failed ({self.failure}); the step runs eagerly", file=sys.stderr,
                      flush=True)
        return self.fn(*args)


def _cause(error: Exception) -> str:
    """The innermost cause of a compile failure, in one line (torch wraps what failed)."""
    while error.__cause__ is not None or getattr(error, "inner_exception", None) is not None:
        error = error.__cause__ or error.inner_exception
    first = (str(error).strip().splitlines() or [""])[0][:200]
    return f"{type(error).__name__}: {first}"
