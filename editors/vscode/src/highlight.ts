// Highlighting of the code blocks in an answer: comments, strings,
// numbers and the keywords of the languages an answer shows most (Go,
// TypeScript and JavaScript, Python, Rust, C and C++, Java, shell, JSON).
// It is a tokenizer, not a parser: it colours what a reader scans for,
// and every piece of text goes out escaped.

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

const words = (s: string) => new Set(s.split(" "));

const keywords: Record<string, Set<string>> = {
  go: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota"),
  ts: words("abstract as async await break case catch class const continue default delete do else enum export extends false finally for from function if implements import in instanceof interface let new null of private protected public readonly return static super switch this throw true try type typeof undefined var void while yield"),
  py: words("and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self"),
  rust: words("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while"),
  c: words("auto break case char class const continue default delete do double else enum extern false float for goto if include inline int long namespace new nullptr private public return short signed sizeof static struct switch template this true typedef union unsigned using virtual void volatile while"),
  java: words("abstract boolean break byte case catch char class const continue default do double else enum extends false final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch this throw throws true try void while"),
  sh: words("if then else elif fi for while until do done case esac in function return local export set unset echo cd exit"),
  json: words("true false null"),
};

const aliases: Record<string, string> = {
  golang: "go", typescript: "ts", javascript: "ts", js: "ts", jsx: "ts", tsx: "ts", python: "py", rs: "rust",
  cpp: "c", "c++": "c", h: "c", hpp: "c", cc: "c", kotlin: "java", bash: "sh", shell: "sh", zsh: "sh", console: "sh",
};

/** The comment syntax of a language: line comment starts, and whether block comments are C's. */
function comments(lang: string): { line: string[]; block: boolean } {
  switch (lang) {
    case "py":
    case "sh":
      return { line: ["#"], block: false };
    case "json":
      return { line: [], block: false };
    default:
      return { line: ["//"], block: true };
  }
}

/**
 * Highlights code in lang (a fence's info string) as HTML: spans of class
 * tok-c (comment), tok-s (string), tok-n (number), tok-k (keyword). An
 * unknown language gets strings, numbers and comments of C's kind.
 */
export function highlight(code: string, lang: string): string {
  const l = aliases[lang] ?? lang;
  const kw = keywords[l] ?? new Set<string>();
  const cm = comments(keywords[l] ? l : "");
  const span = (cls: string, text: string) => `<span class="tok-${cls}">${escapeHtml(text)}</span>`;
  let out = "";
  let i = 0;
  while (i < code.length) {
    const rest = code.slice(i);
    let m: RegExpExecArray | null;
    let piece: string;
    if (cm.line.some((c) => rest.startsWith(c))) {
      piece = /^[^\n]*/.exec(rest)![0];
      out += span("c", piece);
    } else if (cm.block && rest.startsWith("/*")) {
      const end = rest.indexOf("*/", 2);
      piece = end < 0 ? rest : rest.slice(0, end + 2);
      out += span("c", piece);
    } else if ((m = /^("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`[^`]*`?)/.exec(rest))) {
      piece = m[0];
      out += span("s", piece);
    } else if ((m = /^\d[\d_]*(\.\d+)?([eE][+-]?\d+)?|^0[xX][\da-fA-F_]+/.exec(rest)) && !/\w$/.test(code.slice(0, i))) {
      piece = m[0];
      out += span("n", piece);
    } else if ((m = /^[A-Za-z_$][\w$]*/.exec(rest))) {
      piece = m[0];
      out += kw.has(piece) ? span("k", piece) : escapeHtml(piece);
    } else {
      piece = /^[\s\S][^A-Za-z_$\d"'`/#]*/.exec(rest)![0];
      out += escapeHtml(piece);
    }
    i += piece.length;
  }
  return out;
}
