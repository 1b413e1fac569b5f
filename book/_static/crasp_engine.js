/* C-RASP in the browser: the parser and interpreter of the book's C-RASP playground.
 *
 * This is a second implementation of the language of lib/lengthgen/crasp (syntax/: the
 * grammar, its error messages with line and column, and the names of the operations;
 * interpret.py: the values at positions 0..n; trace.py: `crasp run --trace`). It follows those
 * modules function by function, with the same names where it can.
 *
 * THE CONTRACT: tests/test_crasp_playground.py runs this file, as the built site ships it, in
 * headless Chromium on every library program (200 strings each), on random programs of
 * lengthgen.crasp.random_programs (20 strings each) and on malformed programs, and requires
 * the same verdicts, the same traces and the same error messages (line and column included)
 * as the Python interpreter. A change to the language changes both sides, or that test fails.
 *
 * No dependencies and no network. Strings are handled as arrays of code points, so columns
 * count characters as Python does.
 */
(function (root) {
  "use strict";

  // ----- the language's constants (syntax/) ----------------------------------------------------
  const END_TOKEN = "<eos>";  // the one next(...) token that is not an input symbol
  const KEYWORDS = new Set(["alphabet", "accept", "next", "not", "and", "or", "true", "false",
    "exists", "mod", "in", "i", "j", "Q"]);
  const PUNCT = [":=", "<=", ">=", "!=", "<", ">", "=", "+", "-", "#", "(", ")", "[", "]", "{",
    "}", ",", "?", ":"];
  const COMPARISONS = ["<", "<=", "=", "!=", ">=", ">"];
  const MAX_INT = 2 ** 53;
  const MAX_PERIOD = 1000000;
  const MAX_LOCAL_DISTANCE = 1000000;
  const MAX_NESTING = 300;
  const MAX_NAME = 100;
  const INT = " integer";            // an integer in the shape of a relation
  const INT64_SAFE = 2 ** 62;        // interpret.py: counts stay below this in absolute value
  const START = "^";                 // trace.py: the start position's column
  const SORT_WORD = { B: "Boolean", C: "Count" };
  const BOOL_KINDS = new Set(["Initial", "Not", "And", "Or", "BoolConst", "Periodic", "Compare"]);

  class CraspError extends Error {
    constructor(message, line, col, detail) {
      super(message);
      this.name = "CraspError";
      this.line = line;      // 0 when the error has no place (an input error)
      this.col = col;
      this.detail = detail;  // the message without `file:line:col: `
    }
  }

  // ----- Python's view of characters -------------------------------------------------------
  const SPACE = /^[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;
  const LINE_BREAK = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;
  const isSpace = (c) => c !== undefined && SPACE.test(c);
  const isAlpha = (c) => /^\p{L}$/u.test(c);
  const isDigit = (c) => c !== undefined && /^\p{Nd}$/u.test(c);
  const isAlnum = (c) => c !== undefined && /^[\p{L}\p{N}]$/u.test(c);
  const chars = (s) => Array.from(s);
  const len = (s) => chars(s).length;

  function splitLines(text) {           // str.splitlines()
    const lines = [];
    let rest = text;
    while (rest.length) {
      const m = LINE_BREAK.exec(rest);
      if (!m) { lines.push(rest); break; }
      lines.push(rest.slice(0, m.index));
      rest = rest.slice(m.index + m[0].length);
    }
    return lines;
  }

  function pySplit(text) {              // str.split() with no argument
    const out = [];
    let word = "";
    for (const c of text) {
      if (isSpace(c)) { if (word) out.push(word); word = ""; } else word += c;
    }
    if (word) out.push(word);
    return out;
  }

  function digitValue(c) {              // int() of one decimal digit of any script
    let cp = c.codePointAt(0), start = cp;
    while (start > 0 && isDigit(String.fromCodePoint(start - 1))) start--;
    return (cp - start) % 10;
  }

  function pyInt(text) {                // int() of a run of decimal digits, as a BigInt
    let v = 0n;
    for (const c of text) v = v * 10n + BigInt(c >= "0" && c <= "9" ? c.charCodeAt(0) - 48 : digitValue(c));
    return v;
  }

  const NONPRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  function repr(s) {                    // Python's repr() of a str
    s = String(s);
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
    let out = quote;
    for (const c of s) {
      const cp = c.codePointAt(0);
      if (c === quote || c === "\\") out += "\\" + c;
      else if (c === "\t") out += "\\t";
      else if (c === "\n") out += "\\n";
      else if (c === "\r") out += "\\r";
      else if (c !== " " && NONPRINTABLE.test(c)) {
        const hex = cp.toString(16);
        out += cp < 0x100 ? "\\x" + hex.padStart(2, "0")
          : cp < 0x10000 ? "\\u" + hex.padStart(4, "0") : "\\U" + hex.padStart(8, "0");
      } else out += c;
    }
    return out + quote;
  }

  function formatG3(x) {                // Python's f"{x:.3g}" for a finite float >= 0
    if (x === 0) return "0";
    if (!isFinite(x)) return x > 0 ? "inf" : "nan";
    const exp = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(3)))));
    if (exp < -4 || exp >= 3) {
      let [m, e] = x.toExponential(2).split("e");
      if (m.includes(".")) m = m.replace(/0+$/, "").replace(/\.$/, "");
      const n = Number(e);
      return m + "e" + (n < 0 ? "-" : "+") + String(Math.abs(n)).padStart(2, "0");
    }
    let s = x.toFixed(Math.max(0, 2 - exp));
    if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
    return s;
  }

  // ----- BLAKE2b (RFC 7693), for abbreviated operation names as syntax.lowering._abbreviate
  const M64 = (1n << 64n) - 1n;
  const IV = [0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
    0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n];
  const SIGMA = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0]];
  const rotr = (x, n) => ((x >> n) | (x << (64n - n))) & M64;

  function blake2bHex(bytes, outLen) {
    const h = IV.slice();
    h[0] ^= 0x01010000n ^ BigInt(outLen);
    const blocks = Math.max(1, Math.ceil(bytes.length / 128));
    for (let b = 0; b < blocks; b++) {
      const last = b === blocks - 1;
      const m = [];
      for (let w = 0; w < 16; w++) {
        let x = 0n;
        for (let k = 7; k >= 0; k--) x = (x << 8n) | BigInt(bytes[b * 128 + w * 8 + k] || 0);
        m.push(x);
      }
      const t = BigInt(last ? bytes.length : (b + 1) * 128);
      const v = h.concat(IV);
      v[12] ^= t;
      if (last) v[14] ^= M64;
      const G = (a, bb, c, d, x, y) => {
        v[a] = (v[a] + v[bb] + x) & M64; v[d] = rotr(v[d] ^ v[a], 32n);
        v[c] = (v[c] + v[d]) & M64; v[bb] = rotr(v[bb] ^ v[c], 24n);
        v[a] = (v[a] + v[bb] + y) & M64; v[d] = rotr(v[d] ^ v[a], 16n);
        v[c] = (v[c] + v[d]) & M64; v[bb] = rotr(v[bb] ^ v[c], 63n);
      };
      for (let r = 0; r < 12; r++) {
        const s = SIGMA[r % 10];
        G(0, 4, 8, 12, m[s[0]], m[s[1]]); G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        G(2, 6, 10, 14, m[s[4]], m[s[5]]); G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        G(0, 5, 10, 15, m[s[8]], m[s[9]]); G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        G(2, 7, 8, 13, m[s[12]], m[s[13]]); G(3, 4, 9, 14, m[s[14]], m[s[15]]);
      }
      for (let k = 0; k < 8; k++) h[k] ^= v[k] ^ v[k + 8];
    }
    let hex = "";
    for (let k = 0; k < outLen; k++) {
      hex += Number((h[k >> 3] >> BigInt(8 * (k & 7))) & 0xffn).toString(16).padStart(2, "0");
    }
    return hex;
  }

  // ----- tokenizer -------------------------------------------------------------------------
  function tokenize(text, err) {
    const tokens = [], open = [];
    const tok = (kind, t, line, col) => ({ kind, text: t, line, col });
    const lines = splitLines(text);
    lines.forEach((lineText, index) => {
      const lineno = index + 1;
      const cut = lineText.indexOf("//");
      const code = chars(cut >= 0 ? lineText.slice(0, cut) : lineText);
      let col = 0, first = 0;
      while (first < code.length && isSpace(code[first])) first++;
      const stripped = code.slice(first);
      if (stripped.slice(0, 8).join("") === "alphabet" && (stripped.length === 8 || isSpace(stripped[8]))) {
        tokens.push(tok("NAME", "alphabet", lineno, first + 1));
        col = first + 8;
        while (col < code.length) {
          if (isSpace(code[col])) { col++; continue; }
          let end = col;
          while (end < code.length && !isSpace(code[end])) end++;
          const sym = code.slice(col, end).join("");
          if (sym.includes(",")) {
            throw err(lineno, col + 1, `symbol ${repr(sym)} holds a comma; separate symbols with spaces: 'alphabet a b'`);
          }
          tokens.push(tok("SYM", sym, lineno, col + 1));
          col = end;
        }
        tokens.push(tok("NEWLINE", "", lineno, code.length + 1));
        return;
      }
      const startsWith = (p, at) => code.slice(at, at + p.length).join("") === p;
      while (col < code.length) {
        const ch = code[col];
        if (isSpace(ch)) {
          col++;
        } else if (isAlpha(ch) || ch === "_") {
          let end = col;
          while (end < code.length && (isAlnum(code[end]) || code[end] === "_")) end++;
          const word = code.slice(col, end).join("");
          tokens.push(tok("NAME", word, lineno, col + 1));
          col = end;
          const raw = word === "Q" || word === "next";
          while (raw && end < code.length && code[end] === " ") end++;
          if (raw && end < code.length && code[end] === "(") {
            tokens.push(...rawSymbol(word, code, end, lineno, err));
            col = tokens[tokens.length - 1].col;
          }
        } else if (isDigit(ch)) {
          let end = col;
          while (end < code.length && isDigit(code[end])) end++;
          const digits = code.slice(col, end).join("");
          if (end - col > String(MAX_INT).length || pyInt(digits) > BigInt(MAX_INT)) {
            throw err(lineno, col + 1, `integer ${code.slice(col, Math.min(end, col + 30)).join("")}` +
              `${end - col > 30 ? "..." : ""} is larger than ${MAX_INT} (2^53)`);
          }
          tokens.push(tok("INT", digits, lineno, col + 1));
          col = end;
        } else {
          const p = PUNCT.find((q) => startsWith(q, col));
          if (p === undefined) throw err(lineno, col + 1, `unexpected character ${repr(ch)}`);
          const t = tok(p, p, lineno, col + 1);
          tokens.push(t);
          if ("([{".includes(p)) open.push(t);
          else if (")]}".includes(p) && open.length) open.pop();
          col += p.length;
        }
      }
      if (!open.length) tokens.push(tok("NEWLINE", "", lineno, code.length + 1));
    });
    if (open.length) {
      const t = open[open.length - 1];
      throw err(t.line, t.col, `'${t.text}' is not closed`);
    }
    tokens.push(tok("NEWLINE", "", lines.length + 1, 1));
    tokens.push(tok("EOF", "", lines.length + 1, 1));
    return tokens;
  }

  function rawSymbol(word, code, paren, lineno, err) {
    let start = paren + 1;
    while (start < code.length && code[start] === " ") start++;
    const close = code.indexOf(")", start + 1);
    let symbol = "";
    if (close >= 0) {
      const part = code.slice(start, close);
      while (part.length && isSpace(part[part.length - 1])) part.pop();
      symbol = part.join("");
    }
    if (close < 0 && (start >= code.length || code[start] !== ")")) {
      throw err(lineno, paren + 1, `'${word}(' is not closed by ')'`);
    }
    const twoClose = code[start] === ")" && code[start + 1] === ")";
    if (!twoClose && (start >= code.length || code[start] === ")")) {
      throw err(lineno, paren + 2, `missing symbol in '${word}()'`);
    }
    if (chars(symbol).some(isSpace)) {
      throw err(lineno, start + 1, `${word}(${symbol}): a symbol holds no spaces`);
    }
    return [{ kind: "(", text: "(", line: lineno, col: paren + 1 },
      { kind: "SYM", text: symbol, line: lineno, col: start + 1 },
      { kind: ")", text: ")", line: lineno, col: close + 1 }];
  }

  // ----- parser ----------------------------------------------------------------------------
  class Node {
    constructor(kind, args, line, col) { this.kind = kind; this.args = args; this.line = line; this.col = col; }
  }
  const def = (name, expr, line, col) => ({ name, expr, line, col });
  const sortedNums = (set) => Array.from(set).sort((a, b) => a - b);

  class Parser {
    constructor(tokens, err) { this.tokens = tokens; this.pos = 0; this.err = err; this.depth = 0; }
    get tok() { return this.tokens[this.pos]; }
    advance() { return this.tokens[this.pos++]; }
    isWord(w) { return this.tok.kind === "NAME" && this.tok.text === w; }
    describe(t) { return { NEWLINE: "end of line", EOF: "end of file" }[t.kind] || repr(t.text); }
    expect(kind, what) {
      if (this.tok.kind !== kind) {
        throw this.err(this.tok.line, this.tok.col, `expected ${what}, found ${this.describe(this.tok)}`);
      }
      return this.advance();
    }
    expectInt(what) { return Number(pyInt(this.expect("INT", what).text)); }
    nested(t, parse) {
      if (this.depth >= MAX_NESTING) {
        throw this.err(t.line, t.col, `expressions nest more than ${MAX_NESTING} deep; name some parts with ':='`);
      }
      this.depth++;
      try { return parse(); } finally { this.depth--; }
    }

    program() {
      let alphabet = null, accept = null;
      const defs = [], nexts = new Map();
      while (this.tok.kind !== "EOF") {
        if (this.tok.kind === "NEWLINE") { this.advance(); continue; }
        const start = this.tok;
        if (this.isWord("alphabet")) {
          this.advance();
          if (alphabet !== null) throw this.err(start.line, start.col, "a second 'alphabet' line");
          const symbols = [];
          while (this.tok.kind === "SYM") symbols.push(this.advance().text);
          if (!symbols.length) throw this.err(start.line, start.col, "'alphabet' lists no symbols");
          if (new Set(symbols).size !== symbols.length) throw this.err(start.line, start.col, "'alphabet' repeats a symbol");
          alphabet = symbols;
        } else if (this.isWord("accept")) {
          this.advance();
          if (accept !== null) throw this.err(start.line, start.col, "a second 'accept' line");
          accept = def("accept", this.expr(), start.line, start.col);
        } else if (this.isWord("next")) {
          this.advance();
          this.expect("(", "'(' after 'next'");
          const symbol = this.expect("SYM", "a symbol").text;
          this.expect(")", "')'");
          this.expect(":=", "':='");
          if (nexts.has(symbol)) throw this.err(start.line, start.col, `next(${symbol}) is defined twice`);
          nexts.set(symbol, def(`next(${symbol})`, this.expr(), start.line, start.col));
        } else if (this.tok.kind === "NAME") {
          if (KEYWORDS.has(start.text)) {
            throw this.err(start.line, start.col, `'${start.text}' is a keyword and cannot name an operation`);
          }
          this.advance();
          this.expect(":=", `':=' after the name '${start.text}'`);
          defs.push(def(start.text, this.expr(), start.line, start.col));
        } else {
          throw this.err(start.line, start.col, `expected a definition 'NAME := ...', found ${this.describe(start)}`);
        }
        if (this.tok.kind !== "NEWLINE" && this.tok.kind !== "EOF") {
          throw this.err(this.tok.line, this.tok.col, `unexpected ${this.describe(this.tok)} after the statement`);
        }
      }
      return { alphabet, defs, accept, nexts };
    }

    expr() {
      const cond = this.disjunction();
      if (this.tok.kind !== "?") return cond;
      const q = this.advance();
      const then = this.disjunction();
      this.expect(":", "':' of the conditional");
      const otherwise = this.disjunction();
      return new Node("cond", [cond, then, otherwise], q.line, q.col);
    }
    disjunction() {
      let node = this.conjunction();
      while (this.isWord("or")) {
        const op = this.advance();
        node = new Node("or", [node, this.conjunction()], op.line, op.col);
      }
      return node;
    }
    conjunction() {
      let node = this.negation();
      while (this.isWord("and")) {
        const op = this.advance();
        node = new Node("and", [node, this.negation()], op.line, op.col);
      }
      return node;
    }
    negation() {
      if (this.isWord("not")) {
        const op = this.advance();
        return new Node("not", [this.nested(op, () => this.negation())], op.line, op.col);
      }
      return this.comparison();
    }
    comparison() {
      let node = this.sum();
      if (COMPARISONS.includes(this.tok.kind)) {
        const op = this.advance();
        node = new Node("cmp", [node, op.text, this.sum()], op.line, op.col);
        if (COMPARISONS.includes(this.tok.kind)) {
          throw this.err(this.tok.line, this.tok.col, "comparisons do not chain; combine them with 'and'");
        }
      }
      return node;
    }
    sum() {
      let node = this.unary();
      while (this.tok.kind === "+" || this.tok.kind === "-") {
        const op = this.advance();
        node = new Node(op.text === "+" ? "add" : "sub", [node, this.unary()], op.line, op.col);
      }
      return node;
    }
    unary() {
      const t = this.tok;
      if (t.kind === "#" || this.isWord("exists")) {
        this.advance();
        const [offsets, strict] = this.tok.kind === "[" ? this.relations() : [null, false];
        let arg;
        if (this.isWord("not")) {
          const neg = this.advance();
          arg = new Node("not", [this.nested(neg, () => this.unary())], neg.line, neg.col);
        } else {
          arg = this.nested(t, () => this.unary());
        }
        const node = new Node("count", [arg, offsets, strict], t.line, t.col);
        if (t.kind === "#") return node;
        return new Node("cmp", [node, ">=", new Node("int", [1], t.line, t.col)], t.line, t.col);
      }
      if (t.kind === "-" && this.tokens[this.pos + 1].kind === "INT") {
        this.advance();
        return new Node("int", [0 - this.expectInt("an integer")], t.line, t.col);
      }
      return this.atom();
    }
    relations() {
      this.expect("[", "'['");
      let offsets = null, strict = false;
      for (;;) {
        const start = this.tok;
        const found = this.relation();
        if (found === "strict") strict = true;
        else if (found !== null) offsets = offsets === null ? found : new Set([...offsets].filter((k) => found.has(k)));
        if (this.tok.kind === "]") { this.advance(); break; }
        if (this.tok.kind !== ",") throw this.err(start.line, start.col, this.unknownRelation());
        this.advance();
      }
      if (offsets !== null && strict) { offsets = new Set([...offsets].filter((k) => k !== 0)); strict = false; }
      return [offsets, strict];
    }
    unknownRelation() {
      return "unknown relation; a count allows j <= i, j < i, j = i, j = i - K, i - j = K, " +
        "i - j <= K or i - j in {K, ...} (K a non-negative integer)";
    }
    relation() {
      const start = this.tok;
      const words = [];
      let braces = 0;
      while (!["]", "NEWLINE", "EOF"].includes(this.tok.kind) && (braces || this.tok.kind !== ",")) {
        braces += { "{": 1, "}": -1 }[this.tok.kind] || 0;
        words.push(this.advance());
      }
      const text = words.map((w) => w.text).join(" ");
      const kinds = words.map((w) => (w.kind === "INT" ? INT : w.text));
      const ints = words.filter((w) => w.kind === "INT").map((w) => Number(pyInt(w.text)));
      if (ints.some((k) => k > MAX_LOCAL_DISTANCE)) {
        throw this.err(start.line, start.col, `a local relation reaches distances up to ${MAX_LOCAL_DISTANCE}, not ${Math.max(...ints)}`);
      }
      const range = (n) => new Set(Array.from({ length: n }, (_, k) => k));
      const same = (x, y) => x.length === y.length && x.every((k, at) => k === y[at]);
      const shapes = [
        [["j", "<=", "i"], () => null],
        [["j", "<", "i"], () => "strict"],
        [["j", "=", "i"], () => new Set([0])],
        [["j", "=", "i", "-", INT], () => new Set([ints[0]])],
        [["i", "-", "j", "=", INT], () => new Set([ints[0]])],
        [["i", "-", "j", "<=", INT], () => range(ints[0] + 1)],
      ];
      const shape = shapes.find(([s]) => same(s, kinds));
      if (shape) return shape[1]();
      if (same(kinds.slice(0, 5), ["i", "-", "j", "in", "{"]) && kinds[kinds.length - 1] === "}" && ints.length) {
        if (kinds.slice(5, -1).every((k) => k === INT || k === ",")) return new Set(ints);
      }
      const where = words.length ? start : this.tok;
      throw this.err(where.line, where.col, `${this.unknownRelation()}; found ${repr(text || "nothing")}`);
    }
    atom() {
      const t = this.tok;
      if (t.kind === "INT") { this.advance(); return new Node("int", [Number(pyInt(t.text))], t.line, t.col); }
      if (t.kind === "(") {
        this.advance();
        const node = this.nested(t, () => this.expr());
        this.expect(")", "')'");
        return node;
      }
      if (t.kind === "NAME") {
        if (t.text === "true" || t.text === "false") { this.advance(); return new Node("bool", [t.text === "true"], t.line, t.col); }
        if (t.text === "Q") {
          this.advance();
          this.expect("(", "'(' after Q");
          const symbol = this.expect("SYM", "a symbol").text;
          this.expect(")", "')'");
          return new Node("sym", [symbol], t.line, t.col);
        }
        if (t.text === "i") return this.periodic();
        if (!KEYWORDS.has(t.text)) { this.advance(); return new Node("name", [t.text], t.line, t.col); }
      }
      throw this.err(t.line, t.col, `expected an operand, found ${this.describe(t)}`);
    }
    periodic() {
      const t = this.advance();
      if (!this.isWord("mod")) {
        throw this.err(this.tok.line, this.tok.col, "the position i appears only in 'i mod K = R' (periodic relations) and inside #[...]");
      }
      this.advance();
      const period = this.expectInt("a period after 'mod'");
      if (!(period >= 1 && period <= MAX_PERIOD)) throw this.err(t.line, t.col, `the period must be in 1..${MAX_PERIOD}`);
      const op = this.tok;
      let residues;
      if (op.kind === "=" || op.kind === "!=") {
        this.advance();
        residues = new Set([this.expectInt("a residue")]);
      } else if (this.isWord("in")) {
        this.advance();
        this.expect("{", "'{'");
        residues = new Set([this.expectInt("a residue")]);
        while (this.tok.kind === ",") { this.advance(); residues.add(this.expectInt("a residue")); }
        this.expect("}", "'}'");
      } else {
        throw this.err(op.line, op.col, "expected '=', '!=' or 'in' after 'i mod K'");
      }
      if ([...residues].some((r) => r >= period)) throw this.err(t.line, t.col, `residues must lie in 0..${period - 1}`);
      if (op.kind === "!=") {
        const all = new Set();
        for (let r = 0; r < period; r++) if (!residues.has(r)) all.add(r);
        residues = all;
      }
      return new Node("periodic", [period, residues], t.line, t.col);
    }
  }

  // ----- from syntax tree to operations (syntax/lowering.py's _Lowering) ---------------------
  const BINARY = { and: ["B", "and", "And"], or: ["B", "or", "Or"], add: ["C", "+", "Add"], sub: ["C", "-", "Sub"] };
  const sortOf = (op) => (BOOL_KINDS.has(op.kind) ? "B" : "C");

  function abbreviate(text) {
    const cs = chars(text);
    if (cs.length <= MAX_NAME) return text;
    const digest = blake2bHex(new TextEncoder().encode(text), 6);
    return `${cs.slice(0, MAX_NAME - 16).join("")}...#${digest}`;
  }

  function wrap(name) {
    const stripped = name.replace(/^-+/, "");
    const simple = /^[\p{XID_Start}_]\p{XID_Continue}*$/u.test(name) ||
      (stripped.length > 0 && chars(stripped).every(isDigit)) || name.startsWith("Q(");
    return simple ? name : `(${name})`;
  }

  class Lowering {
    constructor(defs, alphabet, err) {
      this.defs = defs; this.alphabet = alphabet; this.err = err;
      this.ops = new Map(); this.done = new Set();
    }
    references(name) {
      const refs = [], stack = [this.defs.get(name).expr];
      while (stack.length) {
        const node = stack.pop();
        if (node.kind === "name" && this.defs.has(node.args[0])) refs.push(node.args[0]);
        const kids = node.args.filter((a) => a instanceof Node);
        for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
      }
      return refs;
    }
    order() {
      const done = new Set(), order = [];
      for (const root of this.defs.keys()) {
        if (done.has(root)) continue;
        const path = [[root, this.references(root), 0]], onPath = new Set([root]);
        while (path.length) {
          const top = path[path.length - 1];
          const ref = top[2] < top[1].length ? top[1][top[2]++] : null;
          if (ref === null) {
            path.pop(); onPath.delete(top[0]); done.add(top[0]); order.push(top[0]);
          } else if (onPath.has(ref)) {
            const names = path.map((p) => p[0]);
            const cycle = names.slice(names.indexOf(ref)).concat([ref]);
            const d = this.defs.get(cycle[0]);
            throw this.err(d.line, d.col, `cyclic definition: ${cycle.join(" -> ")}`);
          } else if (!done.has(ref)) {
            path.push([ref, this.references(ref), 0]); onPath.add(ref);
          }
        }
      }
      return order;
    }
    define(name) {
      if (!this.done.has(name)) {
        this.lower(this.defs.get(name).expr, name);
        this.done.add(name);
      }
      return sortOf(this.ops.get(name));
    }
    operand(node, sort, role, name) {
      name = name || this.lower(node);
      const got = sortOf(this.ops.get(name));
      if (got !== sort) {
        throw this.err(node.line, node.col, `${role} must be ${SORT_WORD[sort]}, but ${repr(name)} is ${SORT_WORD[got]}`);
      }
      return name;
    }
    emit(name, text, op) {
      name = name || abbreviate(text);
      if (this.ops.has(name) && !this.defs.has(name)) return name;
      this.ops.set(name, op);
      return name;
    }
    binary(node, name, left) {
      const [sort, word, kind] = BINARY[node.kind];
      const x = this.operand(node.args[0], sort, `the left operand of '${word}'`, left);
      const y = this.operand(node.args[1], sort, `the right operand of '${word}'`);
      return this.emit(name, `${wrap(x)} ${word} ${wrap(y)}`, { kind, left: x, right: y });
    }
    lower(node, name) {
      const k = node.kind, a = node.args;
      if (k === "name") {
        const ref = a[0];
        if (!this.defs.has(ref)) throw this.err(node.line, node.col, `undefined name ${repr(ref)}`);
        const sort = this.define(ref);
        if (!name) return ref;
        if (sort === "B") return this.emit(name, "", { kind: "And", left: ref, right: ref });
        const zero = this.emit(null, "0", { kind: "CountConst", value: 0 });
        return this.emit(name, "", { kind: "Add", left: ref, right: zero });
      }
      if (k === "sym") {
        if (this.alphabet !== null && !this.alphabet.includes(a[0])) {
          throw this.err(node.line, node.col, `symbol ${repr(a[0])} is not in the alphabet ${shownAlphabet(this.alphabet)}`);
        }
        return this.emit(name, `Q(${a[0]})`, { kind: "Initial", symbol: a[0] });
      }
      if (k === "bool") return this.emit(name, a[0] ? "true" : "false", { kind: "BoolConst", value: a[0] });
      if (k === "int") return this.emit(name, String(a[0]), { kind: "CountConst", value: a[0] });
      if (k === "periodic") {
        const [period, residues] = a;
        return this.emit(name, `i mod ${period} in {${sortedNums(residues).join(", ")}}`,
          { kind: "Periodic", period, residues });
      }
      if (k === "not") {
        const x = this.operand(a[0], "B", "the operand of 'not'");
        return this.emit(name, `not ${wrap(x)}`, { kind: "Not", arg: x });
      }
      if (k in BINARY && a[0].kind in BINARY) {   // a long sum: its left spine in a loop
        const spine = [node];
        while (spine[spine.length - 1].args[0].kind in BINARY) spine.push(spine[spine.length - 1].args[0]);
        let left = null;
        for (let s = spine.length - 1; s >= 0; s--) left = this.binary(spine[s], spine[s] === node ? name : null, left);
        return left;
      }
      if (k in BINARY) return this.binary(node, name, null);
      if (k === "cmp") {
        const x = this.operand(a[0], "C", `the left side of '${a[1]}'`);
        const y = this.operand(a[2], "C", `the right side of '${a[1]}'`);
        return this.emit(name, `${wrap(x)} ${a[1]} ${wrap(y)}`, { kind: "Compare", left: x, op: a[1], right: y });
      }
      if (k === "cond") {
        const c = this.operand(a[0], "B", "the condition of '?'");
        const t = this.operand(a[1], "C", "the first branch of '?'");
        const o = this.operand(a[2], "C", "the second branch of '?'");
        return this.emit(name, `${wrap(c)} ? ${wrap(t)} : ${wrap(o)}`, { kind: "Cond", cond: c, then: t, otherwise: o });
      }
      if (k === "count") {
        const [arg, offsets, strict] = a;
        const p = this.operand(arg, "B", "what '#' counts");
        if (offsets !== null) {
          return this.emit(name, `#[i-j in {${sortedNums(offsets).join(", ")}}] ${wrap(p)}`,
            { kind: "Count", arg: p, offsets });
        }
        if (!strict) return this.emit(name, `#${wrap(p)}`, { kind: "Count", arg: p, offsets: null });
        const total = this.emit(null, `#${wrap(p)}`, { kind: "Count", arg: p, offsets: null });
        const one = this.emit(null, "1", { kind: "CountConst", value: 1 });
        const zero = this.emit(null, "0", { kind: "CountConst", value: 0 });
        const here = this.emit(null, `${wrap(p)} ? 1 : 0`, { kind: "Cond", cond: p, then: one, otherwise: zero });
        return this.emit(name, `#[j<i] ${wrap(p)}`, { kind: "Sub", left: total, right: here });
      }
      throw new Error(`unknown node kind ${k}`);
    }
  }

  function shownAlphabet(alphabet, most = 12) {
    const more = alphabet.length > most ? ` ... (${alphabet.length} symbols)` : "";
    return alphabet.slice(0, most).join(" ") + more;
  }

  /** Parse program text; errors are CraspErrors reading `filename:line:col: message`. */
  function parseProgram(text, filename = "<string>", name = "") {
    const err = (line, col, message) => new CraspError(`${filename}:${line}:${col}: ${message}`, line, col, message);
    const { alphabet, defs, accept, nexts } = new Parser(tokenize(text, err), err).program();
    if (alphabet === null) throw err(1, 1, "the program has no 'alphabet' line");
    for (const [symbol, d] of nexts) {  // a next token is read as input later, or ends the answer
      if (!alphabet.includes(symbol) && symbol !== END_TOKEN) {
        throw err(d.line, d.col, `next(${symbol}): ${repr(symbol)} is neither in the alphabet ${shownAlphabet(alphabet)} nor ${END_TOKEN}`);
      }
    }
    const namedAccept = accept !== null && accept.expr.kind === "name";
    const table = new Map();
    for (const d of [...defs, ...(accept && !namedAccept ? [accept] : []), ...nexts.values()]) {
      if (table.has(d.name)) {
        const first = table.get(d.name);
        throw err(d.line, d.col, `redefinition of ${repr(d.name)} (first defined at ${first.line}:${first.col})`);
      }
      table.set(d.name, d);
    }
    const low = new Lowering(table, alphabet, err);
    for (const d of low.order()) low.define(d);
    for (const [symbol, d] of nexts) {
      if (sortOf(low.ops.get(d.name)) !== "B") throw err(d.line, d.col, `next(${symbol}) must be Boolean, not a Count`);
    }
    let output;
    if (accept !== null) {
      output = namedAccept ? accept.expr.args[0] : accept.name;
      if (!low.ops.has(output)) throw err(accept.expr.line, accept.expr.col, `undefined name ${repr(output)}`);
      if (sortOf(low.ops.get(output)) !== "B") throw err(accept.line, accept.col, "'accept' needs a Boolean expression");
    } else {
      const inOrder = [...table.values()].sort((x, y) => x.line - y.line || x.col - y.col);
      const bools = inOrder.filter((d) => sortOf(low.ops.get(d.name)) === "B").map((d) => d.name);
      if (!bools.length) throw err(1, 1, "the program defines no Boolean operation to accept with");
      output = bools[bools.length - 1];
    }
    const tokenOutputs = new Map([...nexts].map(([s, d]) => [s, d.name]));
    return { alphabet, ops: low.ops, output, tokenOutputs, name };
  }

  // ----- interpreter (interpret.py) --------------------------------------------------------
  function tokensOf(program, text) {
    if (program.alphabet.every((s) => len(s) === 1)) return chars(text.split(" ").join(""));
    return pySplit(text);
  }

  const COMPARE = { "<": (p, q) => p < q, "<=": (p, q) => p <= q, "=": (p, q) => p === q,
    "!=": (p, q) => p !== q, ">=": (p, q) => p >= q, ">": (p, q) => p > q };

  function countBounds(program) {
    const bounds = new Map();
    for (const [name, op] of program.ops) {
      if (sortOf(op) !== "C") continue;
      let b;
      if (op.kind === "Count") b = 1.0;
      else if (op.kind === "CountConst") b = Math.abs(op.value);
      else if (op.kind === "Add" || op.kind === "Sub") b = bounds.get(op.left) + bounds.get(op.right);
      else b = Math.max(bounds.get(op.then), bounds.get(op.otherwise));
      bounds.set(name, b);
    }
    return bounds;
  }

  /** Values of every operation at positions 0..n of one input: Map name -> array (Booleans
   *  as true/false; counts as numbers, or BigInts where a count may pass 2^53). */
  function runProgram(program, text) {
    const symbols = tokensOf(program, text);
    const index = new Map(program.alphabet.map((s, k) => [s, k]));
    for (const s of symbols) {
      if (!index.has(s)) {
        throw new CraspError(`symbol ${repr(s)} is not in the program's alphabet ${shownAlphabet(program.alphabet)}`, 0, 0);
      }
    }
    const n = symbols.length, width = n + 1;
    const bounds = countBounds(program);
    let most = null;
    for (const [name, b] of bounds) if (most === null || b > bounds.get(most)) most = name;
    let big = false;
    if (most !== null) {
      const reach = bounds.get(most) * width;
      if (reach >= INT64_SAFE) {
        throw new CraspError(`count ${repr(most)} may exceed the 64-bit integers of the interpreter on inputs of length ${n} ` +
          `(it is bounded only by ${formatG3(bounds.get(most))} x (length + 1))`, 0, 0);
      }
      big = reach >= 2 ** 53 || !(reach === reach);
    }
    const zero = big ? 0n : 0, one = big ? 1n : 1;
    const sym = [-1, ...symbols.map((s) => index.get(s))];
    const v = new Map();
    for (const [name, op] of program.ops) {
      const val = new Array(width);
      const x = v.get(op.left || op.arg || op.cond), y = v.get(op.right || op.then), z = v.get(op.otherwise);
      switch (op.kind) {
        case "Initial": { const want = index.has(op.symbol) ? index.get(op.symbol) : -2; for (let i = 0; i < width; i++) val[i] = sym[i] === want; break; }
        case "Not": for (let i = 0; i < width; i++) val[i] = !x[i]; break;
        case "And": for (let i = 0; i < width; i++) val[i] = x[i] && y[i]; break;
        case "Or": for (let i = 0; i < width; i++) val[i] = x[i] || y[i]; break;
        case "BoolConst": val.fill(op.value); break;
        case "Periodic": for (let i = 0; i < width; i++) val[i] = op.residues.has(i % op.period); break;
        case "Compare": {
          const cmp = COMPARE[op.op];
          for (let i = 0; i < width; i++) val[i] = cmp(x[i], y[i]);
          break;
        }
        case "Count": {
          val.fill(zero);
          if (op.offsets === null) {
            for (let i = 1; i < width; i++) val[i] = x[i] ? val[i - 1] + one : val[i - 1];
          } else {
            for (const k of op.offsets) if (k < width) for (let i = Math.max(k, 1); i < width; i++) if (x[i - k] && i - k > 0) val[i] += one;
          }
          break;
        }
        case "Cond": for (let i = 0; i < width; i++) val[i] = x[i] ? y[i] : z[i]; break;
        case "Add": for (let i = 0; i < width; i++) val[i] = x[i] + y[i]; break;
        case "Sub": for (let i = 0; i < width; i++) val[i] = x[i] - y[i]; break;
        case "CountConst": val.fill(big ? BigInt(op.value) : op.value); break;
        default: throw new Error(`unknown operation ${op.kind} in ${name}`);
      }
      v.set(name, val);
    }
    return v;
  }

  /** The verdict: the output operation at the last position. */
  function accepts(program, text) {
    const out = runProgram(program, text).get(program.output);
    return out[out.length - 1];
  }

  // ----- traces (trace.py) -----------------------------------------------------------------
  /** [header symbols, operation names, rows of values (Booleans as 1/0)] for one input. */
  function traceRows(program, text) {
    const values = runProgram(program, text);
    const names = [...program.ops.keys()];
    const header = [START, ...tokensOf(program, text)];
    const rows = names.map((name) => values.get(name).map((x) => (typeof x === "boolean" ? (x ? 1 : 0) : x)));
    return { header, names, rows, values };
  }

  /** The text of `crasp run --trace`: one line per operation. */
  function traceText(program, text, width = 24) {
    const { header, names, rows } = traceRows(program, text);
    const cells = [header, ...rows].map((r) => r.map(String));
    let col = 0;
    for (const r of cells) for (const c of r) col = Math.max(col, len(c));
    const label = [""].concat(names.map((n) => (len(n) <= width ? n : chars(n).slice(0, width - 1).join("") + "~")));
    const pad = Math.max(...label.map(len));
    const right = (s, w) => " ".repeat(Math.max(0, w - len(s))) + s;
    return cells.map((r, k) => `${right(label[k], pad)}  ` + r.map((c) => right(c, col)).join(" ")).join("\n");
  }

  root.CRASP = {
    parseProgram, runProgram, accepts, traceRows, traceText, tokensOf, CraspError, repr,
    blake2bHex, formatG3, constants: { KEYWORDS: [...KEYWORDS], PUNCT, COMPARISONS, MAX_INT,
      MAX_PERIOD, MAX_LOCAL_DISTANCE, MAX_NESTING, MAX_NAME, INT64_SAFE },
  };
})(typeof window !== "undefined" ? window : globalThis);
