/* Search results without raw TeX (loaded on the search page only, by book/_ext/lengthgen_site.py).
 *
 * Sphinx's search page shows under each hit a summary cut from the text of the page it found,
 * which it fetches as HTML (Search.htmlToText in searchtools.js). In that HTML the math is still
 * its TeX source, `\(N\)` or `\[ ... \]`, typeset only by MathJax in a browser, so summaries read
 * "for every \(N\)". Here math is turned into plain text before the summary is cut: delimiters
 * dropped, common commands written as their symbols (\le as ≤, \alpha as α), font commands and
 * braces removed ("\mathrm{Dyck}_{1}" reads "Dyck_1").
 */
(function () {
  "use strict";
  const SYMBOLS = {
    le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", in: "∈", notin: "∉", to: "→",
    rightarrow: "→", leftarrow: "←", mapsto: "↦", infty: "∞", cdot: "·", cdots: "⋯", ldots: "…",
    dots: "…", times: "×", pm: "±", approx: "≈", sim: "∼", subset: "⊂", subseteq: "⊆", cup: "∪",
    cap: "∩", forall: "∀", exists: "∃", neg: "¬", land: "∧", lor: "∨", wedge: "∧", vee: "∨",
    sum: "∑", prod: "∏", log: "log", exp: "exp", max: "max", min: "min", mid: "|", lvert: "|",
    rvert: "|", lVert: "‖", rVert: "‖", langle: "⟨", rangle: "⟩", lfloor: "⌊", rfloor: "⌋",
    lceil: "⌈", rceil: "⌉", emptyset: "∅", varnothing: "∅", star: "⋆", circ: "∘", ell: "ℓ",
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", zeta: "ζ",
    eta: "η", theta: "θ", iota: "ι", kappa: "κ", lambda: "λ", mu: "μ", nu: "ν", xi: "ξ", pi: "π",
    rho: "ρ", sigma: "σ", tau: "τ", phi: "φ", varphi: "φ", chi: "χ", psi: "ψ", omega: "ω",
    Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ", Xi: "Ξ", Pi: "Π", Sigma: "Σ", Phi: "Φ",
    Psi: "Ψ", Omega: "Ω",
  };

  /** Plain text for the TeX of one math element. */
  function texToText(tex) {
    return tex
      .replace(/\\\{/g, "\u0001").replace(/\\\}/g, "\u0002")         // set braces stay
      .replace(/^\s*(\\\(|\\\[|\$\$?)|(\\\)|\\\]|\$\$?)\s*$/g, "")      // the delimiters
      .replace(/\\(begin|end)\{[^}]*\}(\{[^}]*\})?/g, " ")              // environments
      .replace(/\\label\{[^}]*\}|\\tag\{[^}]*\}|\\nonumber|\\notag/g, "")
      .replace(/\\(left|right)\.|\\(left|right|[bB]igg?[lr]?)(?![A-Za-z])/g, "")   // sizes, not brackets
      .replace(/\\\\|&|~|\\[,;:! ]|\\q?quad\b/g, " ")                     // line breaks, spaces
      .replace(/\\(?:mathrm|mathit|mathbf|mathsf|mathtt|mathcal|mathbb|mathfrak|operatorname|text|textrm|textit|textbf|texttt|boldsymbol|bm)\s*/g, "")
      .replace(/\\([A-Za-z]+)/g, (m, name) => (Object.hasOwn(SYMBOLS, name) ? SYMBOLS[name] : name))
      .replace(/\\([{}#$%_|])/g, "$1")
      .replace(/[{}]/g, "")
      .replace(/\u0001/g, "{").replace(/\u0002/g, "}")
      .replace(/\s+/g, " ")
      .trim();
  }

  function patch() {
    if (typeof Search === "undefined" || !Search.htmlToText || Search.htmlToText.lengthgen) return false;
    const original = Search.htmlToText;
    const plain = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math").forEach((e) => { e.textContent = texToText(e.textContent); });
      return original(doc.documentElement.outerHTML, anchor);
    };
    plain.lengthgen = true;
    Search.htmlToText = plain;
    return true;
  }

  window.lengthgenTexToText = texToText;   // for the browser test
  if (!patch()) document.addEventListener("DOMContentLoaded", patch);
})();
