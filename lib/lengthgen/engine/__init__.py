"""The training engine: one loop that trains a group of runs at once.

    jobs.py        Job (task, decoder settings, TrainConfig) and train_jobs: group, train, resume
    loop.py        the one loop: rates, batch, step, evaluation, stop and give-up, leaving members
    groups.py      ModuleGroup (one model, as `train` trains it) and StackedGroup (S models)
    stacked.py     S decoders as stacked tensors, one batched forward
    optim.py       AdamW and clipping per member of a stacked group
    feeds.py       training batches from the host's samplers or made on the device
    device_data.py the device samplers of the Huang et al. tasks (exactly the host's law)
    rng.py         a counter-based generator: the same numbers on any device

`lengthgen.train.train` (one model) and `lengthgen.train_many.train_seeds` (one model per
seed) are front doors to it.
"""
