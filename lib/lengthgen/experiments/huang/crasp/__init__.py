"""The C-RASP chapter (Huang et al. 2025): the expressiveness tables (Tables 2 and 3, built by
`expressiveness`), the compiler's check and long unary inputs; `analysis` computes the
chapter's "Paper vs this book" table from their records.
"""
