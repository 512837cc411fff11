// A small Markdown renderer for the answers in the Reika panel: headings,
// paragraphs, lists, quotes, rules, fenced code blocks (highlighted by
// highlight.ts), inline code, bold, italics and links. It writes HTML
// with every piece of the model's text escaped: the model's own HTML
// stays text, and a link is never an href the page follows but data the
// extension checks when the user clicks it (a file of the workspace, or
// an http(s) page opened outside). A file named with a line, as
// `greet.go:5`, becomes a link to that line. No library: the answers
// need this much, and a dependency that renders arbitrary HTML would
// need a sanitizer on top.

import { escapeHtml, highlight } from "./highlight";

export { escapeHtml };

/** A path with a line, as an answer names a place: greet.go:5, pkg/x.go:12:3. */
const fileRef = /^([\w./-]*[\w-]\.[A-Za-z0-9]+):(\d+)(?::\d+)?$/;

/** Renders one line's inline Markdown. */
export function inline(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^`([^`]+)`/.exec(rest))) {
      const ref = fileRef.exec(m[1]);
      out += ref ? fileLink(m[1], ref[1], Number(ref[2]), true) : `<code>${escapeHtml(m[1])}</code>`;
    } else if ((m = /^\[([^\]]+)\]\(([^)\s]+)\)/.exec(rest))) {
      out += link(m[1], m[2]);
    } else if ((m = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest))) {
      out += `<strong>${inline(m[2])}</strong>`;
    } else if ((m = /^(\*|_)(?=\S)([\s\S]*?\S)\1(?![\w*])/.exec(rest)) && (m[1] === "*" || !/\w$/.test(text.slice(0, i)))) {
      out += `<em>${inline(m[2])}</em>`;
    } else if ((m = /^[\w./-]*[\w-]\.[A-Za-z0-9]+:\d+(?::\d+)?(?![\w:])/.exec(rest)) && !/[\w./-]$/.test(text.slice(0, i))) {
      const ref = fileRef.exec(m[0]);
      out += ref ? fileLink(m[0], ref[1], Number(ref[2]), false) : escapeHtml(m[0]);
    } else {
      // A word goes whole (no emphasis inside snake_case); anything
      // else up to the next character that may start some markup.
      const piece = (/^\w[\w./:-]*/.exec(rest) ?? /^[\s\S][^`[*_\w]*/.exec(rest) as RegExpExecArray)[0];
      out += escapeHtml(piece);
      i += piece.length;
      continue;
    }
    i += m[0].length;
  }
  return out;
}

function fileLink(text: string, path: string, line: number, code: boolean): string {
  const label = code ? `<code>${escapeHtml(text)}</code>` : escapeHtml(text);
  return `<a class="file" href="#" data-path="${escapeHtml(path)}" data-line="${line}" title="Open ${escapeHtml(path)} at line ${line}">${label}</a>`;
}

function link(text: string, target: string): string {
  if (/^https?:\/\//i.test(target)) {
    return `<a class="ext" href="#" data-href="${escapeHtml(target)}" title="${escapeHtml(target)}">${inline(text)}</a>`;
  }
  const ref = /^([^#:]+?)(?::(\d+))?(?:#L(\d+))?$/.exec(target);
  if (ref && !/^[a-z][\w+.-]*:/i.test(target)) {
    const line = Number(ref[2] ?? ref[3] ?? 1);
    return `<a class="file" href="#" data-path="${escapeHtml(ref[1])}" data-line="${line}" title="Open ${escapeHtml(ref[1])}">${inline(text)}</a>`;
  }
  // Any other scheme (javascript:, command:, file:) stays text.
  return `${inline(text)} (${escapeHtml(target)})`;
}

/** Renders a Markdown document to HTML, every piece of text escaped. */
export function render(md: string): string {
  const lines = md.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length > 0) {
      out.push(`<p>${para.map(inline).join("<br>")}</p>`);
      para = [];
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m: RegExpExecArray | null;
    if ((m = /^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)/.exec(line))) {
      flush();
      const fence = m[1];
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence); i++) {
        code.push(lines[i]);
      }
      const lang = m[2].toLowerCase();
      out.push(`<pre class="code"${lang ? ` data-lang="${escapeHtml(lang)}"` : ""}><code>${highlight(code.join("\n"), lang)}</code></pre>`);
    } else if ((m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      flush();
      const level = Math.min(m[1].length + 1, 6);
      out.push(`<h${level}>${inline(m[2])}</h${level}>`);
    } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.push("<hr>");
    } else if (/^\s{0,3}>/.test(line)) {
      flush();
      const quoted: string[] = [];
      for (; i < lines.length && /^\s{0,3}>/.test(lines[i]); i++) {
        quoted.push(lines[i].replace(/^\s{0,3}>\s?/, ""));
      }
      i--;
      out.push(`<blockquote>${render(quoted.join("\n"))}</blockquote>`);
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      flush();
      i = list(lines, i, out) - 1;
    } else if (line.trim() === "") {
      flush();
    } else {
      para.push(line.trim());
    }
  }
  flush();
  return out.join("\n");
}

/** Renders the list that starts at lines[i]; returns the index after it. */
function list(lines: string[], i: number, out: string[]): number {
  const ordered = /^\s*\d+[.)]\s/.test(lines[i]);
  const indent = /^\s*/.exec(lines[i])![0].length;
  const items: string[][] = [];
  for (; i < lines.length; i++) {
    const line = lines[i];
    const m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (m && m[1].length === indent) {
      items.push([m[3]]);
    } else if (items.length > 0 && line.trim() !== "" && /^\s*/.exec(line)![0].length > indent) {
      items[items.length - 1].push(line.slice(Math.min(indent + 2, /^\s*/.exec(line)![0].length)));
    } else if (line.trim() === "" && i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]) && /^\s*/.exec(lines[i + 1])![0].length > indent) {
      items[items.length - 1].push("");
    } else {
      break;
    }
  }
  const tag = ordered ? "ol" : "ul";
  out.push(`<${tag}>${items.map((it) => {
    const body = it.length === 1 ? inline(it[0]) : render(it.join("\n")).replace(/^<p>([\s\S]*?)<\/p>/, "$1");
    return `<li>${body}</li>`;
  }).join("")}</${tag}>`);
  return i;
}
