/**
 * A streaming XML scanner for the parts of an xlsx workbook: start and end tags (with their raw
 * attribute text, read on demand by `attribute`), text with entity and character references
 * decoded, CDATA, comments and processing instructions. It checks what changes the meaning of a
 * document (tags balanced and matching, one root element, references known, nothing left open at the
 * end) and not the finer points of names; document type declarations are refused (no entity
 * expansion at all). Decision 406 (third addendum) says why the import does not use a general parser:
 * it spends most of its CPU here, and this scanner reads a worksheet in a third of the time.
 */

export interface XmlHandler {
  /** Whether text is wanted now: text outside a capture is skipped without being sliced or decoded. */
  capturing: boolean;
  /** A start tag: its name as written (prefix included) and the raw text of its attributes. */
  open(name: string, attrs: string): void;
  /** An end tag, or the end of a self-closing tag. */
  close(name: string): void;
  /** Text or CDATA while capturing, possibly in several pieces. */
  text(text: string): void;
}

/** A single markup construct (tag, comment, CDATA section) longer than this is refused. */
export const MAX_MARKUP_CHARS = 64 * 1024;

const tooLong = () => new Error(`markup longer than ${MAX_MARKUP_CHARS} characters`);

const LT = 60;
const GT = 62;
const SLASH = 47;
const BANG = 33;
const QUESTION = 63;
const DQUOTE = 34;
const SQUOTE = 39;
const AMP = 38;
const CR = 13;

/** The rest of a start tag up to its '>': anything but quotes and angle brackets, or quoted values without '<'. */
const TAG_REST = /(?:[^"'<>]+|"[^"<]*"|'[^'<]*')*/y;

const isSpace = (c: number) => c === 32 || c === 10 || c === 9 || c === 13;

export class XmlScanner {
  /** Markup (or a text tail) cut by the end of the previous chunk. */
  private carry = '';
  private readonly stack: string[] = [];
  private rootSeen = false;
  private started = false;

  constructor(private readonly h: XmlHandler) {}

  write(chunk: string): void {
    if (!this.started && chunk.length) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1); // a byte order mark
    }
    const s = this.carry.length ? this.carry + chunk : chunk;
    this.carry = '';
    const n = s.length;
    let pos = 0;
    while (pos < n) {
      const lt = s.indexOf('<', pos);
      if (lt < 0) {
        pos = this.tail(s, pos);
        break;
      }
      if (lt > pos) this.content(s, pos, lt);
      const next = this.markup(s, lt);
      if (next < 0) {
        pos = lt;
        break;
      }
      pos = next;
    }
    if (pos < n) {
      if (n - pos > MAX_MARKUP_CHARS) throw tooLong();
      this.carry = s.slice(pos);
    }
  }

  end(): void {
    if (this.carry.length) {
      if (this.carry.includes('<')) throw new Error('the document ends inside markup');
      this.content(this.carry, 0, this.carry.length);
      this.carry = '';
    }
    if (this.stack.length) throw new Error(`unclosed element <${this.stack[this.stack.length - 1]}>`);
    if (!this.rootSeen) throw new Error('the document has no root element');
  }

  /** Text up to the end of the chunk: what cannot end a reference or a line break is given now. */
  private tail(s: string, pos: number): number {
    let cut = s.length;
    const amp = s.lastIndexOf('&');
    if (amp >= pos && s.indexOf(';', amp) < 0) cut = amp;
    if (cut > pos && s.charCodeAt(cut - 1) === CR) cut--;
    if (cut > pos) this.content(s, pos, cut);
    return cut;
  }

  private content(s: string, from: number, to: number): void {
    if (!this.stack.length) {
      for (let i = from; i < to; i++) if (!isSpace(s.charCodeAt(i))) throw new Error('text outside the root element');
      return;
    }
    if (this.h.capturing) this.h.text(decodeText(s.slice(from, to)));
  }

  /** Handles the markup at `lt`; answers the index after it, or -1 when the chunk ends inside it. */
  private markup(s: string, lt: number): number {
    const n = s.length;
    if (lt + 1 >= n) return -1;
    const c = s.charCodeAt(lt + 1);
    if (c === SLASH) {
      const gt = s.indexOf('>', lt + 2);
      if (gt < 0) return -1;
      let e = gt;
      while (e > lt + 2 && isSpace(s.charCodeAt(e - 1))) e--;
      const open = this.stack.pop();
      // Compared in place: the open tag's name is handed on, no slice is made of the end tag's.
      if (open === undefined || e - lt - 2 !== open.length || !s.startsWith(open, lt + 2)) {
        const name = s.slice(lt + 2, e);
        throw new Error(`</${name}> does not close ${open === undefined ? 'anything' : `<${open}>`}`);
      }
      this.h.close(open);
      return gt + 1;
    }
    if (c === BANG) return this.declaration(s, lt);
    if (c === QUESTION) {
      const end = s.indexOf('?>', lt + 2);
      return end < 0 ? -1 : end + 2;
    }
    // A start tag: the name, then attributes up to a '>' outside quotes.
    let i = lt + 1;
    while (i < n) {
      const k = s.charCodeAt(i);
      if (isSpace(k) || k === GT || k === SLASH) break;
      i++;
    }
    const nameEnd = i;
    TAG_REST.lastIndex = i;
    TAG_REST.test(s);
    i = TAG_REST.lastIndex;
    if (i >= n) return -1;
    if (i - lt > MAX_MARKUP_CHARS) throw tooLong();
    const stop = s.charCodeAt(i);
    if (stop !== GT) {
      // A quote whose value does not end in this chunk, or a '<' where none may be.
      if (stop === LT || s.indexOf(stop === DQUOTE ? '"' : "'", i + 1) >= 0) throw new Error('"<" inside a tag');
      return -1;
    }
    const selfClosing = s.charCodeAt(i - 1) === SLASH && i - 1 >= nameEnd;
    const name = s.slice(lt + 1, nameEnd);
    if (name === '') throw new Error('a tag without a name');
    if (!this.stack.length && this.rootSeen) throw new Error('content after the root element');
    this.rootSeen = true;
    const attrs = s.slice(nameEnd, selfClosing ? i - 1 : i);
    if (!selfClosing) this.stack.push(name);
    this.h.open(name, attrs);
    if (selfClosing) this.h.close(name);
    return i + 1;
  }

  /** `<!--` comments and `<![CDATA[` sections; anything else (a DOCTYPE) is refused. */
  private declaration(s: string, lt: number): number {
    const n = s.length;
    if (s.startsWith('<!--', lt)) {
      const end = s.indexOf('-->', lt + 4);
      if (end - lt > MAX_MARKUP_CHARS) throw tooLong();
      return end < 0 ? -1 : end + 3;
    }
    if (s.startsWith('<![CDATA[', lt)) {
      const end = s.indexOf(']]>', lt + 9);
      if (end < 0) return -1;
      if (end - lt > MAX_MARKUP_CHARS) throw tooLong();
      if (!this.stack.length) throw new Error('CDATA outside the root element');
      if (this.h.capturing) this.h.text(normalizeBreaks(s.slice(lt + 9, end)));
      return end + 3;
    }
    const rest = s.slice(lt, lt + 9);
    if (n - lt < 9 && ('<![CDATA['.startsWith(rest) || '<!--'.startsWith(rest))) return -1;
    throw new Error('document type declarations are not accepted');
  }
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function reference(name: string): string {
  const named = NAMED[name];
  if (named !== undefined) return named;
  if (name.charCodeAt(0) === 35 /* # */) {
    const hex = name.charCodeAt(1) === 120; /* x */
    const digits = name.slice(hex ? 2 : 1);
    const code =
      digits !== '' && (hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(digits) ? parseInt(digits, hex ? 16 : 10) : NaN;
    const allowed =
      code === 9 ||
      code === 10 ||
      code === 13 ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (allowed) return String.fromCodePoint(code);
  }
  throw new Error(`unknown reference &${name.slice(0, 20)};`);
}

function decodeReferences(t: string): string {
  let out = '';
  let from = 0;
  for (let amp = t.indexOf('&'); amp >= 0; amp = t.indexOf('&', from)) {
    const semi = t.indexOf(';', amp + 1);
    if (semi < 0) throw new Error('"&" without a reference');
    out += t.slice(from, amp) + reference(t.slice(amp + 1, semi));
    from = semi + 1;
  }
  return out + t.slice(from);
}

/** XML's end-of-line handling: CR LF and a lone CR read as LF. */
const normalizeBreaks = (t: string) => (t.includes('\r') ? t.replace(/\r\n?/g, '\n') : t);

/** Character data as the document means it (line breaks normalized before references are expanded). */
export function decodeText(t: string): string {
  const text = normalizeBreaks(t);
  return text.includes('&') ? decodeReferences(text) : text;
}

/** Where the attribute `step` last read lies in the raw text: its name and its value (quotes excluded). */
const at = { nameStart: 0, nameEnd: 0, valueStart: 0, valueEnd: 0 };

/** Reads the attribute at or after `i` into `at`; answers the index after it, or -1 when none is left. */
function step(attrs: string, i: number): number {
  const n = attrs.length;
  while (i < n && isSpace(attrs.charCodeAt(i))) i++;
  if (i >= n) return -1;
  let e = i;
  while (e < n && !isSpace(attrs.charCodeAt(e)) && attrs.charCodeAt(e) !== 61 /* = */) e++;
  let j = e;
  while (j < n && isSpace(attrs.charCodeAt(j))) j++;
  if (e === i || attrs.charCodeAt(j) !== 61) throw new Error(`an attribute without a value in "${attrs.slice(0, 60)}"`);
  j++;
  while (j < n && isSpace(attrs.charCodeAt(j))) j++;
  const q = attrs.charCodeAt(j);
  if (q !== DQUOTE && q !== SQUOTE) throw new Error(`an unquoted attribute value in "${attrs.slice(0, 60)}"`);
  const close = attrs.indexOf(q === DQUOTE ? '"' : "'", j + 1);
  if (close < 0) throw new Error('an unterminated attribute value');
  at.nameStart = i;
  at.nameEnd = e;
  at.valueStart = j + 1;
  at.valueEnd = close;
  return close + 1;
}

/** The value of one attribute in a tag's raw attribute text, decoded; undefined when it is absent. */
export function attribute(attrs: string, want: string): string | undefined {
  for (let i = step(attrs, 0); i >= 0; i = step(attrs, i))
    if (at.nameEnd - at.nameStart === want.length && attrs.startsWith(want, at.nameStart))
      return decodeAttribute(attrs.slice(at.valueStart, at.valueEnd));
  return undefined;
}

/** Every attribute of a tag's raw attribute text, decoded, by name as written (the first of a repeated name). */
export function attributes(attrs: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = step(attrs, 0); i >= 0; i = step(attrs, i))
    out[attrs.slice(at.nameStart, at.nameEnd)] ??= decodeAttribute(attrs.slice(at.valueStart, at.valueEnd));
  return out;
}

const SPECIAL_IN_ATTRIBUTE = /[<&\t\n\r]/;

/** Attribute values: references expanded and white space characters read as spaces (XML's normalization). */
function decodeAttribute(v: string): string {
  if (!SPECIAL_IN_ATTRIBUTE.test(v)) return v;
  let t = v;
  if (t.includes('<')) throw new Error('"<" in an attribute value');
  if (/[\t\n\r]/.test(t)) t = t.replace(/\r\n|[\t\n\r]/g, ' ');
  return t.includes('&') ? decodeReferences(t) : t;
}
