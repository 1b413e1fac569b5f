"""How the book plays the protocol of Theorem 12 (Huang et al. 2025) on a compiled C-RASP
program: `load` compiles a library program, `measure` plays Alice and Bob on strings of one
length and counts the bits of Alice's message by layer and part (`PARTS`).
"""
from lengthgen.crasp import library
from lengthgen.crasp.library import SMALL_VOCAB

# the parts of Alice's message, as lengthgen.viz.message_slider stacks them per layer
PARTS = ("header", "class keys", "counts", "value sums", "local positions")


def load(name: str, vocab: dict = SMALL_VOCAB, max_length: int = 1000):
    """A library program compiled with Heaviside MLPs (exact at every length, so max_length is
    only the declared range); generated programs over their first vocab[name] symbols. An
    unknown name is a LengthgenError naming the closest ones."""
    from lengthgen.crasp.compile import compile_program   # here: data() and runs() need no torch
    if name not in library.program_names():
        library.get_program(name)   # raises: unknown C-RASP program, with the closest names
    return compile_program(library.program_over(name, vocab), max_length=max_length)


def measure(compiled, n: int, strings: list, check: bool) -> dict:
    """Play the protocol on strings of length n (cut after floor(n/2) symbols): bits per
    input, the worst input's bits by layer and part, its classes, and Bob's largest error."""
    from lengthgen.theory.protocol import alice, bob, compare
    cut = 1 + n // 2
    bits, worst, error = [], None, 0.0 if check else None
    for string in strings:
        tokens = compiled.tokens(string)
        message = alice(compiled.model, tokens[:cut], n + 1)
        bits.append(len(message))
        if check:
            activations = bob(compiled.model, tokens[cut:], n + 1, message.bits)
            error = max(error, max(compare(compiled.model, tokens, cut, activations)))
        if worst is None or len(message) > len(worst):
            worst = message
    parts = {}
    for p in worst.parts:
        key = f"{p['layer']}/{p['part']}"
        parts[key] = parts.get(key, 0) + p["bits"]
    classes = [p["classes"] for p in worst.parts if p["part"] == "header"]
    return {"n": n, "bits": bits, "max_bits": max(bits), "parts": parts,
            "classes": max(classes, default=0), "max_error": error}
