"""The Limit Transformers chapter (Huang et al. 2025): the figures of the positional fits
(Figs. 5-6), Proposition 54's regularizer and the inference procedure; `analysis` computes the
numbers, verdicts and "Paper vs this book" table the chapter quotes from their records.
"""
