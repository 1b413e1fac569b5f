"""The target functions phi(i, j) of the positional fit (Huang et al. 2025, App. G.2): their
names, kinds and conditions, with no torch, so that reading the fit's records needs none.

A condition takes torch tensors of query positions i and key positions j and returns the
Boolean (or, for a combined target, float64) tensor that is nonzero where the target is;
`lengthgen.theory.positional_fit` turns it into a matrix and fits it.
"""

# name -> (kind, condition on query position i and key position j)
TARGETS = {
    "i-j=2": ("local", lambda i, j: i - j == 2),
    "i-j<=3": ("local", lambda i, j: i - j <= 3),
    "(i-j)%4=0": ("periodic", lambda i, j: (i - j) % 4 == 0),
    "j%3=0": ("periodic", lambda i, j: j % 3 == 0),
    "i-j>5": ("neither", lambda i, j: i - j > 5),
    "i-j>=20": ("neither", lambda i, j: i - j >= 20),
    "i-j=2 + (i-j)%4=0": ("combined",
                          lambda i, j: (i - j == 2).double() + ((i - j) % 4 == 0).double()),
}
KINDS = ("local", "periodic", "neither", "combined")
