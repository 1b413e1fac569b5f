"""Richard (2024), length generalization on Dyck languages: the figures of the Dyck chapter
and its appendix, beside what they share.

- `protocol`: the Dyck models, their training sets, scoring and the cache of trained models
  (what runs);
- `analysis`: the chapter's numbers, verdicts and "Paper vs this book" table for the studied
  models (Figs. 2, 4, 5, 7, Table 1); `analysis_sweeps`: those of the training sweeps (Figs. 1,
  3, 6).
"""
