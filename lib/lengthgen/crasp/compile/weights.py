"""Weights: write the scheduled heads and MLP units down as float64 tensors of a LimitTransformer.

The blocks name dimensions; here the names become indices (schedule.dims()) and every layer's
heads and units become LimitHead and LimitMLP tensors. The size of the model is counted before
anything is allocated, so a program whose model would not fit (a period or a local window in the
hundreds of thousands) is refused with its size instead of exhausting memory.
"""
import numpy as np
import torch

from lengthgen.crasp import ir
from lengthgen.crasp.compile.blocks import (START_TOKEN, Head, Unit, bool_const_embedding,
                                            initial_embedding)
from lengthgen.crasp.compile.schedule import Schedule
from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitHead, LimitLayer, LimitMLP, LimitTransformer

# The largest compiled model, in float64 numbers (8 bytes each): 2 GB (copy_unique over 150
# numbers, the largest library program, takes 187 million).
MAX_PARAMETERS = 250_000_000


def built_layers(plan: Schedule) -> list[tuple[str, list[Head], list[Unit]]]:
    """Per layer: its MLP activation, its heads and its units (still keyed by dimension name)."""
    layers = []
    for layer in plan.layers:
        activation = layer.activation or "relu"
        heads = [h for stage in layer.heads for h in stage.build(activation)]
        units = [u for stage in layer.stages for u in stage.build(activation)]
        layers.append((activation, heads, units))
    return layers


def parameter_count(width: int, vocab: int, delta: int | None, layers) -> int:
    """Numbers in the model that materialize() would build (see the tensor shapes below)."""
    total = vocab * width + (delta or 0) * width
    for _, heads, units in layers:
        total += sum(4 * width + (max(h.local) + 1 if h.local else 0) for h in heads)
        total += len(units) * (2 * width + 1) + width if units else 0
    return total


def check_size(program: ir.Program, count: int, width: int, delta: int | None,
               layers: int | None = None) -> None:
    """Refuse a model of more than MAX_PARAMETERS numbers, saying how big it would be."""
    if count > MAX_PARAMETERS:
        shape = f"width {width:,}" + (f", {layers} layers" if layers is not None else "") + (
            f", period {delta:,}" if delta else "")
        raise LengthgenError(
            f"program {program.name or '(unnamed)'}: its compiled model would have "
            f"{'at least ' if layers is None else ''}{count:,} parameters ({shape}), over the "
            f"limit of {MAX_PARAMETERS:,}; use a smaller period, local window or program")


def materialize(program: ir.Program, plan: Schedule, delta: int | None) -> LimitTransformer:
    """Turn the placed heads and units into weight tensors (float64), after checking the size."""
    dims = plan.dims()
    d, f64 = len(dims), torch.float64
    layers = built_layers(plan)
    check_size(program, parameter_count(d, 1 + len(program.alphabet), delta, layers),
               d, delta, len(layers))
    embedding = torch.zeros(1 + len(program.alphabet), d, dtype=f64)
    embedding[:, dims["@one"]] = 1.0
    embedding[START_TOKEN, dims["@start"]] = 1.0
    for name, op in program.ops.items():
        if isinstance(op, ir.Initial):
            rows = initial_embedding(op, program.alphabet)
        elif isinstance(op, ir.BoolConst):
            rows = bool_const_embedding(op, program.alphabet)
        else:
            continue
        for token, value in rows.items():
            embedding[token, dims[name]] = value
    positional = None
    if delta:
        positional = torch.zeros(delta, d, dtype=f64)
        for r in range(delta):
            positional[r, dims[f"@pos{r}"]] = 1.0
    return LimitTransformer(
        embedding, positional,
        [LimitLayer([_head_tensors(h, dims, d) for h in heads],
                    _mlp_tensors(units, activation, dims, d) if units else None)
         for activation, heads, units in layers],
        period=delta, check=True)


# numpy first: writing single entries of a numpy array is ~50x faster than of a torch tensor
def _head_tensors(head: Head, dims: dict, d: int) -> LimitHead:
    query, key = np.zeros((d, 1)), np.zeros((d, 1))
    value, output = np.zeros((d, 1)), np.zeros((1, d))
    for name, w in head.value.items():
        value[dims[name], 0] = w
    output[0, dims[head.out]] = 1.0
    if head.start_boost:
        query[dims["@one"], 0] = head.start_boost
        key[dims["@start"], 0] = 1.0
    local = None
    if head.local:
        local = np.zeros(max(head.local) + 1)
        for distance, phi in head.local.items():
            local[distance] = phi
        local = torch.from_numpy(local)
    return LimitHead(*map(torch.from_numpy, (query, key, value, output)), local)


def _mlp_tensors(units: list[Unit], activation: str, dims: dict, d: int) -> LimitMLP:
    m = len(units)
    w_in, b_in, w_out = np.zeros((d, m)), np.zeros(m), np.zeros((m, d))
    for j, unit in enumerate(units):
        for name, w in unit.w_in.items():
            w_in[dims[name], j] += w
        b_in[j] = unit.bias
        for name, w in unit.w_out.items():
            w_out[j, dims[name]] += w
    return LimitMLP(*map(torch.from_numpy, (w_in, b_in, w_out, np.zeros(d))), activation)
