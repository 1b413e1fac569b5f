"""Bibliography labels in author-year form, matching the author-year citations in the text.

sphinxcontrib-bibtex cites as "Huang et al. (2025)" (bibtex_reference_style: author_year) but
labels the list with its formatting style's labels, alpha by default ("[HYB+25]"). This Sphinx
extension registers a pybtex style, `lengthgen_authoryear`: the unsrt formatting (it prints DOI
and URL fields), entries sorted by author and year, and labels "Huang et al., 2025".
"""
import re
from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _last_name(person) -> str:
    return re.sub(r"[{}\\]", "", " ".join(person.prelast_names + person.last_names))


def _authors(entry) -> str:
    names = [_last_name(p) for p in entry.persons.get("author", [])]
    if not names:
        return entry.key
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        bases = [f"{_authors(e)}, {e.fields.get('year', 'n.d.')}" for e in entries]
        clashes, seen = Counter(bases), Counter()
        for base in bases:
            if clashes[base] > 1:  # two works with the same label: 2024a, 2024b
                seen[base] += 1
                yield base + "abcdefghijklmnopqrstuvwxyz"[seen[base] - 1]
            else:
                yield base


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "lengthgen_authoryear"
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.labels", "lengthgen_authoryear", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "lengthgen_authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
