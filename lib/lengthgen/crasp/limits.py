"""The stated limits of C-RASP compilation, apart from the compiler so that the command line
can quote them in its help without importing torch."""
MAX_VERIFY_LENGTH = 5_000    # verify_up_to: the longest string (attention is [n, n] per head)
MAX_VERIFY_SAMPLES = 1_000   # verify_up_to: strings (one forward pass each, lengths spread)
MLP_MODES = ("heaviside", "relu")
