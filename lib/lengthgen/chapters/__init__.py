"""One facade per chapter of the book: `from lengthgen.chapters.dyck import ...` is the only
import of lengthgen a chapter's notebook makes (its appendix shares it).

The top layer of the library: a facade imports the experiments (numbers, verdicts, tables),
the book's side (viz: glued numbers, numbered figures, widgets) and whatever lower layer the
chapter demonstrates (tasks, models, C-RASP, theory); nothing imports a facade.

    limit_transformers    Huang et al., Limit Transformers
    crasp                 Huang et al., C-RASP
    ape_vs_nope           Huang et al., APE vs NoPE (and its appendix)
    communication         Huang et al., Theorem 12's protocol
    quantitative_bounds   Izzo et al.
    dyck                  Richard (and its appendix)
"""
