"""Sliders that work without a kernel: every setting is drawn in advance, the browser switches.

A static site (the built book) has no Python behind it, so a slider there cannot re-run a
drawing function. `FrameSlider` draws the figure once for every combination of slider values,
stores each drawing (for the column and for a phone) as an inline image, and emits HTML whose
range inputs show the matching image. The switching is a few lines of JavaScript in the inputs'
`oninput` attributes (no <script> tag, no library), so it works offline, in the built site, in
Jupyter, Binder and Colab alike; the site's build moves the frames into image files next to the
page (book/_ext/lengthgen_figures.py), so a reader fetches only the frames shown. In a kernel,
the chapters can still offer the live ipywidgets version.

    slider = FrameSlider(draw, {"delta": [2, 3, 4, 6], "tau": [0, 2, 4]}, initial={"delta": 4})
    slider            # in a notebook cell: the figure and its sliders
    slider.html       # the same HTML as a string

`draw(**setting)` returns a matplotlib Figure (closed after rendering; drawn for the column
and for phones by `viz.book.picture`), a `viz.book.Picture`, or PNG bytes. Each frame's alt text
says what it shows: the figure's own (or `alt`), then the slider values it was drawn at.
"""
import functools
import html
import itertools
import json
import uuid
from collections.abc import Callable, Sequence

from lengthgen.errors import LengthgenError
from lengthgen.viz.parallel import in_parallel

MAX_FRAMES = 400  # each frame is an inline image in the page: keep pages small


def _draw_and_render(draw: Callable, setting: dict):
    return _render(draw(**setting))


def _render(obj):
    """One frame as a `viz.book.Picture`: a matplotlib Figure (drawn for the column and for
    phones, closed afterwards), a Picture, or PNG bytes (the column's only)."""
    from lengthgen.viz.book import Picture, picture
    if isinstance(obj, Picture):
        return obj
    if isinstance(obj, (bytes, bytearray)):
        return Picture(bytes(obj), alt="")
    import matplotlib.pyplot as plt
    shown = picture(obj)
    plt.close(obj)
    return shown


class _Redraw:
    """The frames of a `FrameSlider.redrawn` slider: `make(settings)` built and laid out once
    for the column and once for a phone, then each frame drawn by `.show(**setting)`.

    It pickles with its figures laid out (matplotlib's figures pickle), so that a worker
    (`viz.parallel`) draws a block of frames too without laying them out again: unpickling
    takes about 15 ms where a layout takes 0.3 to 0.7 s (benchmarks/bench_sliders.py), and
    gives the same pixels. The worker takes each figure's smallest text as measured here on the
    first frame. Figures that do not pickle (one holding a closure, say) are left out, and the
    worker builds and lays out its own from `make` (the same ones: `make` and the layout give
    the same figures from the same settings)."""

    def __init__(self, make: Callable, settings: list[dict], fixed: dict):
        self.make, self.settings, self.fixed = make, settings, fixed
        self.text_px = [None, None]   # each figure's smallest text, measured on its first frame
        self._built = None

    def __getstate__(self) -> dict:
        import pickle
        try:
            figures = pickle.dumps(self._built, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:   # (pickle says so in many ways)
            figures = None
        return {"make": self.make, "settings": self.settings, "fixed": self.fixed,
                "text_px": self.text_px, "figures": figures}

    def __setstate__(self, state: dict) -> None:
        import pickle
        self.make, self.settings, self.fixed = state["make"], state["settings"], state["fixed"]
        self.text_px = state["text_px"]
        self._built = None if state["figures"] is None else pickle.loads(state["figures"])

    def figures(self) -> list:
        """The figure objects for the column and for a phone, laid out."""
        if self._built is None:
            import matplotlib.pyplot as plt

            from lengthgen.viz.fit import fit_to_column
            from lengthgen.viz.layout import COLUMN_PX, NARROW_PX
            self._built = []
            for width in (COLUMN_PX, NARROW_PX):
                figure = self.make(self.settings)
                fit_to_column(figure.fig, width_px=width)
                plt.close(figure.fig)   # drawn only into PNGs
                self._built.append(figure)
        return self._built

    def __call__(self, **setting):
        from lengthgen.viz.book import Picture, describe
        from lengthgen.viz.layout import DPI, NARROW_DPI, save_png
        figures, pngs = self.figures(), []
        for k, (figure, dpi) in enumerate(zip(figures, (DPI, NARROW_DPI))):
            pngs.append(save_png(figure.show(**self.fixed, **setting), dpi, tight=False,
                                 text_px=self.text_px[k]))
            self.text_px[k] = pngs[-1][1]
        (wide, wide_px), (narrow, narrow_px) = pngs
        alt = figures[0].alt(**self.fixed, **setting) if hasattr(figures[0], "alt") else \
            describe(figures[0].fig)
        return Picture(wide, alt, narrow, wide_px, narrow_px)


class FrameSlider:
    """Precomputed frames of a figure, one per combination of slider values."""

    def __init__(self, draw: Callable, sliders: dict[str, Sequence], *,
                 initial: dict | None = None, labels: dict[str, str] | None = None,
                 caption: str | None = None, alt: str | None = None):
        if not sliders:
            raise LengthgenError("a frame slider needs at least one slider")
        self.names = list(sliders)
        self.values = {name: list(values) for name, values in sliders.items()}
        for name, values in self.values.items():
            if not values:
                raise LengthgenError(f"slider {name!r} has no values")
            if len(set(map(repr, values))) != len(values):
                raise LengthgenError(f"slider {name!r} repeats a value")
        count = 1
        for values in self.values.values():
            count *= len(values)
        if count > MAX_FRAMES:
            raise LengthgenError(f"{count} frames requested (at most {MAX_FRAMES}): use fewer "
                                 f"slider values")
        initial = dict(initial or {})
        for name, value in initial.items():
            if name not in self.values or value not in self.values[name]:
                raise LengthgenError(f"initial value {name}={value!r} is not one of the "
                                     f"slider's values")
        self.initial = {name: initial.get(name, values[0]) for name, values in self.values.items()}
        self.labels = {name: (labels or {}).get(name, name) for name in self.names}
        self.caption = caption
        # Row-major order over the sliders: index = sum(position_k * stride_k).
        self.settings = [dict(zip(self.names, combo))
                         for combo in itertools.product(*self.values.values())]
        # The first frame here, then the others in blocks, one per process (`viz.parallel`),
        # the first frame counted in this process's block: a slider that measures its figure
        # on its first frame (`redrawn`) measures it here, before the other frames go to a
        # worker, and one that builds a figure per program (the message slider) builds each
        # in one process only where the programs split evenly.
        renders = [functools.partial(_draw_and_render, draw, setting) for setting in self.settings]
        self.pictures = [renders[0]()] + in_parallel(renders[1:], done=1)
        self.frames = [p.wide_uri for p in self.pictures]
        narrow = [p.narrow_uri for p in self.pictures]
        self.narrow_frames = narrow if all(narrow) else None
        self.alts = [self._alt(p.alt or alt or caption or "", setting)
                     for p, setting in zip(self.pictures, self.settings)]

    @classmethod
    def redrawn(cls, make: Callable, sliders: dict[str, Sequence], fixed: dict | None = None,
                **options) -> "FrameSlider":
        """A slider whose frames redraw one figure instead of drawing a new one each (a new
        figure spends most of its time in the layout). `make(settings)` builds, for every
        setting of the sliders (with the `fixed` values added), an object with `.fig` and
        `.show(**setting)` returning the figure at that setting (and optionally
        `.alt(**setting)`, the frame's alt text; else what the figure writes); it is built and
        laid out once for the column and once for a phone, and each frame only redraws it."""
        fixed = dict(fixed or {})
        settings = [{**fixed, **dict(zip(sliders, combo))}
                    for combo in itertools.product(*sliders.values())]
        draw = _Redraw(make, settings, fixed)
        draw.figures()   # built and laid out here first (an error in `make` is raised now)
        return cls(draw, sliders, **options)

    def _alt(self, what: str, setting: dict) -> str:
        values = ", ".join(f"{self.labels[name]} = {setting[name]}" for name in self.names)
        what = what.strip().rstrip(".")
        return f"{what} (at {values})" if what else f"The figure at {values}"

    def index(self, **setting) -> int:
        """The frame shown for one combination of slider values."""
        return self.settings.index({name: setting[name] for name in self.names})

    @property
    def html(self) -> str:
        uid = "fs-" + uuid.uuid4().hex[:10]
        strides, stride = [], 1
        for name in reversed(self.names):
            strides.append(stride)
            stride *= len(self.values[name])
        strides.reverse()
        # The handler reads every slider in this block, finds the frame and shows it (the
        # phone's rendition too, and the frame's alt text).
        handler = html.escape(
            "var b=document.getElementById('%s');var f=JSON.parse(b.dataset.frames);"
            "var s=b.querySelectorAll('input[type=range]');var k=0;"
            "for(var i=0;i<s.length;i++){k+=parseInt(s[i].value)*parseInt(s[i].dataset.stride);"
            "s[i].nextElementSibling.textContent=JSON.parse(s[i].dataset.labels)[s[i].value];}"
            "var m=b.querySelector('img');var n=b.querySelector('source');"
            "if(n)n.srcset=JSON.parse(b.dataset.narrowFrames)[k];"
            "m.src=f[k];m.alt=JSON.parse(b.dataset.alts)[k];b.dataset.shown=k;" % uid, quote=True)
        rows = []
        for name, step in zip(self.names, strides):
            values = self.values[name]
            start = values.index(self.initial[name])
            shown = [str(v) for v in values]
            rows.append(
                f'<label style="display:flex;align-items:center;gap:0.6em;margin:0.2em 0">'
                f'<span style="min-width:7em">{html.escape(self.labels[name])}</span>'
                f'<input type="range" min="0" max="{len(values) - 1}" step="1" value="{start}" '
                f'data-name="{html.escape(name)}" data-stride="{step}" '
                f'data-labels="{html.escape(json.dumps(shown), quote=True)}" '
                f'aria-label="{html.escape(self.labels[name])}" oninput="{handler}" '
                f'style="flex:1;max-width:22em">'
                f'<output>{html.escape(shown[start])}</output></label>')
        from lengthgen.viz.book import picture_html
        first = self.index(**self.initial)
        caption = (f'<div style="font-size:0.9em;margin-top:0.3em">{html.escape(self.caption)}'
                   f'</div>' if self.caption else "")
        narrow = "" if self.narrow_frames is None else (
            f'data-narrow-frames="{html.escape(json.dumps(self.narrow_frames), quote=True)}" ')
        image = picture_html(self.frames[first],
                             None if self.narrow_frames is None else self.narrow_frames[first],
                             self.alts[first],
                             min(p.wide_text_px for p in self.pictures),
                             min(p.narrow_text_px for p in self.pictures),
                             css_class="lengthgen-frame")
        return (f'<div id="{uid}" class="lengthgen-frame-slider" data-shown="{first}" '
                f'data-frames="{html.escape(json.dumps(self.frames), quote=True)}" {narrow}'
                f'data-alts="{html.escape(json.dumps(self.alts, ensure_ascii=False), quote=True)}">'
                + "".join(rows) + image + caption + '</div>')

    def _repr_html_(self) -> str:
        return self.html
