"""Izzo et al. (2026), quantitative bounds on length generalization: the figures of the
quantitative bounds chapter, beside what they share.

- `protocol`: the models and training of App. B (what runs);
- `analysis`: required lengths, fits and the chapter's verdicts and "Paper vs this book" rows
  (numbers, from the records);
- `drawing`: the loss curves several figures draw.
"""
