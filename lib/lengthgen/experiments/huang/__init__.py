"""Huang et al. (2025), "A formal framework for understanding length generalization in
transformers": the paper the book reads in four chapters, one subpackage each.

- `limit`: the Limit Transformers chapter (positional fits, Proposition 54, the inference
  procedure);
- `crasp`: the C-RASP chapter (Tables 2 and 3, the compiler's check, long unary inputs);
- `sweep`: the APE vs NoPE chapter (the sweep behind Figs. 1, 2, 4 and Tables 6-7);
- `comm`: the communication chapter (the message length of Theorem 12's protocol).

The chapters share no module: each has its own records, numbers and verdicts, so each
subpackage holds its own analysis module beside its figure modules.
"""
