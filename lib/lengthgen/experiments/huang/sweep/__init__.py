"""Shared by Huang et al. (2025) Fig. 1, 2, 4 and Tables 6-7: the APE vs NoPE sweep. Not a
figure itself; split by job, each name defined (and imported from) one module:

- `protocol`: the configs, the ladder of settings, training, selection and seeds (what runs);
- `analysis`: records to per-cell rows, agreement with C-RASP's prediction (numbers);
- `drawing`: the Fig. 1 panels;
- `tables`: the chapter's tables and sentences (protocol side by side, cells, headline).
"""
