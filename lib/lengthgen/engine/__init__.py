"""The training engine: one loop that trains a group of runs at once.

    settings.py    TrainConfig, TrainResult, the schedule and the stop rule (every trainer's)
    single.py      one model's optimizer, offsets and step, as `train` has always run them
    checkpoints.py the one resume format (a member's state: weights and AdamW moments by
                   name, step, history), train()'s atomic checkpoints of it, what a resume
                   must match
    loop.py        the one loop: rates, batch, step, evaluation, stop and give-up, leaving members
    groups.py      ModuleGroup (one model, as `train` trains it), StackedGroup (S models) and
                   GraphStep (a stacked step replayed as a CUDA graph)
    stacked.py     S decoders as one flat leaf of stacked parameters, one batched forward
    optim.py       AdamW and clipping per member of a stacked group
    compiled.py    a stacked step through torch.compile (fused kernels), eager where that fails
    feeds.py       training batches from the host's samplers or made on the device
    device_data.py the device samplers of the Huang et al. tasks (exactly the host's law)
    device_regression.py  those of Izzo et al.'s regression tasks (real-valued targets)
    rng.py         a counter-based generator: the same numbers on any device
    kinds.py       the model kinds a Job trains (decoder, limit-style, dyck, token-mlp), each
                   with its typed config, built by one function
    jobs.py        Job (task, model kind and options, TrainConfig) and train_jobs: group,
                   train, slices

`lengthgen.train.train` (one model, any TrainableModel) is the front door for one run, and
`train_jobs` for many; `lengthgen.experiments.huang.sweep.budget` runs the APE vs NoPE
sweep at the paper's budget through `train_jobs`.
"""
