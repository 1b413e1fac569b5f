"""The "Try your own language" page's live cell: a text area for a C-RASP program, a button that
trains APE and NoPE on its per-prefix verdicts (lengthgen.experiments.try_program, the same calls
as `python -m lengthgen try`), a progress bar, and the table per bin.

The text area takes a program as text, or a whole share link of the site's C-RASP playground
(its "Train this program" link copies the program; a reader who copies the page's address
instead pastes a link): the program is read out of the link (lengthgen.crasp.web) and shown.

`train_program` is the whole callback without widgets (tested at the test scale); `try_widget`
wires it to ipywidgets and needs a running kernel (the book's build never runs that cell).
"""
from lengthgen.errors import LengthgenError
from lengthgen.experiments import try_program as trying

PLACEHOLDER = "alphabet a b\nCa := #Q(a)\nCb := #Q(b)\naccept Cb <= Ca + 3\n"


class WidgetBar:
    """The part of a tqdm bar that `run_try` uses (total, n, update, set_description), shown
    on an ipywidgets IntProgress and its description (or on nothing: progress=None)."""

    def __init__(self, total: int, progress=None):
        self.total, self.n, self.progress = total, 0, progress
        if progress is not None:
            progress.max, progress.value = total, 0

    def update(self, k: int = 1) -> None:
        self.n = min(self.total, self.n + k)
        if self.progress is not None:
            self.progress.value = self.n

    def set_description(self, text: str) -> None:
        if self.progress is not None:
            self.progress.description = text[:24]


def train_program(text: str, scale: str = "book", device="cpu", bar=None) -> dict:
    """Parse, check and train a program given as C-RASP text, as `try` does; returns {"lines":
    the prediction and the table per bin, "result": run_try's metrics, "program": the text
    trained (read out of a share link if one was given)}. Bad input (a syntax
    error, a constant verdict, an alphabet over the limit) is a LengthgenError with its reason."""
    from lengthgen.crasp import parse_program
    from lengthgen.crasp.task import program_task
    from lengthgen.crasp.web import program_from_link
    text = program_from_link(text)
    if not text.strip():
        raise LengthgenError("write a C-RASP program first (an alphabet line, operations, and "
                             "an accept line)")
    program = parse_program(text, filename="<text area>", name="your_program")
    task = program_task(program)
    trying.check_program(program, task, scale)
    result = trying.run_try(program, task, scale, device, bar=bar)
    return {"lines": trying.prediction_lines(program) + [""] + trying.table_lines(result),
            "result": result, "program": text}


def try_widget(scale: str = "book", device="cpu", program: str = PLACEHOLDER):
    """The text area, the button, the progress bar and the answer (an HTML <pre>): returns the
    ipywidgets box to display. The answer says a refusal in one line, as the command does."""
    import html

    import ipywidgets as widgets

    from lengthgen.crasp.web import program_from_link

    area = widgets.Textarea(value=program, layout=widgets.Layout(width="100%", height="9em"))
    button = widgets.Button(description="Train APE and NoPE", button_style="primary")
    progress = widgets.IntProgress(min=0, max=1, description="")
    answer = widgets.HTML(value="")

    def on_click(_):
        button.disabled = True
        answer.value = "<pre>training...</pre>"
        try:
            area.value = program_from_link(area.value)   # a pasted link: show its program
            out = train_program(area.value, scale, device,
                                WidgetBar(trying.total_steps(scale), progress))
            answer.value = "<pre>" + html.escape("\n".join(out["lines"])) + "</pre>"
        except LengthgenError as e:
            answer.value = "<pre>refused: " + html.escape(str(e)) + "</pre>"
        finally:
            button.disabled = False

    button.on_click(on_click)
    return widgets.VBox([area, widgets.HBox([button, progress]), answer])
