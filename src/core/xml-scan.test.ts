import { describe, expect, it } from '@jest/globals';
import { StringDecoder } from 'node:string_decoder';
import fc from 'fast-check';
import { SaxesParser } from 'saxes';
import { attributes, MAX_MARKUP_CHARS, XmlScanner } from './xml-scan.js';

type Event = ['open', string, Record<string, string>] | ['close', string] | ['text', string];

/** Events as saxes, a conforming XML parser, reports them: the reference the scanner is held to. */
function bySaxes(xml: string): Event[] {
  const p = new SaxesParser({ xmlns: false, position: false });
  const events: Event[] = [];
  let failed: Error | undefined;
  p.on('error', (e) => (failed ??= e));
  p.on('opentag', (t) => events.push(['open', t.name, { ...t.attributes }]));
  p.on('closetag', (t) => events.push(['close', t.name]));
  p.on('text', (t) => events.push(['text', t]));
  p.on('cdata', (t) => events.push(['text', t]));
  p.write(xml).close();
  if (failed) throw failed;
  return merged(events);
}

/** Events as the scanner reports them, fed the document's UTF-8 bytes cut at `cuts`. */
function byScanner(xml: string, cuts: number[]): Event[] {
  const events: Event[] = [];
  const scanner = new XmlScanner({
    capturing: true,
    open: (name, attrs) => events.push(['open', name, attributes(attrs)]),
    close: (name) => events.push(['close', name]),
    text: (t) => events.push(['text', t]),
  });
  const bytes = Buffer.from(xml);
  const decoder = new StringDecoder('utf8');
  let from = 0;
  for (const cut of [...cuts.map((c) => Math.min(c, bytes.length)).sort((a, b) => a - b), bytes.length]) {
    scanner.write(decoder.write(bytes.subarray(from, cut)));
    from = Math.max(from, cut);
  }
  scanner.write(decoder.end());
  scanner.end();
  return merged(events);
}

/** Adjacent pieces of text as one, and text outside the root element (white space) left out. */
function merged(events: Event[]): Event[] {
  const out: Event[] = [];
  let depth = 0;
  for (const e of events) {
    if (e[0] === 'text') {
      if (depth === 0) continue;
      const last = out[out.length - 1];
      if (last?.[0] === 'text') last[1] += e[1];
      else out.push(['text', e[1]]);
      continue;
    }
    depth += e[0] === 'open' ? 1 : -1;
    out.push(e);
  }
  return out.filter((e) => e[0] !== 'text' || e[1] !== '');
}

// Characters that need care: markup characters, line breaks, characters outside the BMP.
const char = fc.constantFrom(
  'a',
  'Z',
  '0',
  ' ',
  '<',
  '>',
  '&',
  '"',
  "'",
  '\t',
  '\n',
  '\r',
  '\r\n',
  'é',
  '李',
  '😀',
  ']',
  '-',
  '?',
);
const raw = fc.array(char, { maxLength: 12 }).map((cs) => cs.join(''));
/** Markup characters escaped (named or numeric references by `style`); a CR escaped in some documents, raw in others. */
const escapeText = (t: string, style: number) =>
  t.replace(style % 3 ? /[<>&]/g : /[<>&\r]/g, (c) =>
    c === '\r'
      ? '&#13;'
      : style % 2
        ? `&#x${c.codePointAt(0)!.toString(16)};`
        : { '<': '&lt;', '>': '&gt;', '&': '&amp;' }[c]!,
  );
const escapeAttr = (v: string, q: string) =>
  v.replace(/[<&"'\t\n\r]/g, (c) =>
    c === q || c === '<' || c === '&'
      ? { '<': '&lt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' }[c]!
      : c === "'" || c === '"'
        ? c
        : `&#${c.charCodeAt(0)};`,
  );

const names = fc.constantFrom('a', 'b', 'row', 'c', 'x:row', 'x:c', 'v', 'is', 't');
const attrNames = fc.uniqueArray(fc.constantFrom('r', 't', 's', 'x:y', 'xml:space', 'spans'), { maxLength: 3 });
const space = fc.constantFrom('', ' ', '\n  ', '\t');

const node: fc.Memo<string> = fc.memo((depth) =>
  depth <= 1
    ? fc.oneof(
        fc.tuple(raw, fc.nat()).map(([t, s]) => escapeText(t, s)),
        raw.map((t) => `<![CDATA[${t.replace(/]]>/g, '')}]]>`),
        raw.map((t) => `<!--${t.replace(/-/g, '')}-->`),
        fc.constant('<?pi some data?>'),
        element(0),
      )
    : fc.oneof(
        fc.tuple(raw, fc.nat()).map(([t, s]) => escapeText(t, s)),
        raw.map((t) => `<![CDATA[${t.replace(/]]>/g, '')}]]>`),
        element(depth - 1),
      ),
);

function element(depth: number): fc.Arbitrary<string> {
  return fc
    .tuple(
      names,
      attrNames.chain((ns) =>
        fc.tuple(...ns.map((n) => fc.tuple(fc.constant(n), raw, fc.constantFrom('"', "'"), space, space))),
      ),
      space,
      depth > 0 ? fc.array(node(depth), { maxLength: 4 }) : fc.constant([] as string[]),
      fc.boolean(),
    )
    .map(([name, attrs, end, children, selfClose]) => {
      const a = attrs.map(([n, v, q, s1, s2]) => ` ${n}${s1}=${s2}${q}${escapeAttr(v, q)}${q}`).join('');
      return selfClose && !children.length
        ? `<${name}${a}${end}/>`
        : `<${name}${a}${end}>${children.join('')}</${name}${end}>`;
    });
}

/** A document, and where its root element's end tag ends. */
const documents = fc
  .tuple(fc.boolean(), fc.boolean(), element(4), fc.constantFrom('', '\n', '<!-- after -->\n'))
  .map(([bom, decl, root, after]) => {
    const prolog = `${bom ? '\ufeff' : ''}${decl ? '<?xml version="1.0" encoding="UTF-8"?>\n' : ''}`;
    return { xml: `${prolog}${root}${after}`, rootEnd: prolog.length + root.length };
  });

describe('the XML scanner against a conforming parser', () => {
  it('reports the same tags, attributes and text as saxes for any well-formed document, however its bytes are cut', () => {
    fc.assert(
      fc.property(documents, fc.array(fc.nat({ max: 400 }), { maxLength: 6 }), ({ xml }, cuts) => {
        expect(byScanner(xml, cuts)).toEqual(bySaxes(xml));
      }),
      { numRuns: 1500 },
    );
  });

  it('refuses every document cut short before its root element closes', () => {
    fc.assert(
      fc.property(documents, fc.nat(), ({ xml, rootEnd }, at) => {
        const cut = xml.slice(0, at % rootEnd);
        expect(() => bySaxes(cut)).toThrow();
        expect(() => byScanner(cut, [])).toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('refuses mismatched and stray end tags, a second root, text outside the root, unknown references and a DOCTYPE', () => {
    for (const xml of [
      '<a><b></a></b>',
      '<a></a></a>',
      '<a/><b/>',
      '<a/>text',
      'text<a/>',
      '<a>&nbsp;</a>',
      '<a>&#0;</a>',
      '<a>& b</a>',
      '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',
      '<a b="<"/>',
    ]) {
      expect(() => bySaxes(xml)).toThrow();
      expect(() => byScanner(xml, [])).toThrow(expect.objectContaining({ message: expect.any(String) }));
    }
  });

  it('refuses a single tag, comment or CDATA section longer than the markup limit', () => {
    const long = 'x'.repeat(MAX_MARKUP_CHARS + 10);
    for (const xml of [`<a b="${long}"/>`, `<a><!--${long}--></a>`, `<a><![CDATA[${long}]]></a>`]) {
      // Whole in one chunk or cut into many: refused the same way.
      expect(() => byScanner(xml, [])).toThrow(/markup longer/);
      expect(() =>
        byScanner(
          xml,
          Array.from({ length: 20 }, (_, i) => (i + 1) * 4096),
        ),
      ).toThrow(/markup longer/);
    }
    const fits = 'x'.repeat(MAX_MARKUP_CHARS - 100);
    expect(byScanner(`<a><![CDATA[${fits}]]></a>`, [5000, 30000])).toEqual([
      ['open', 'a', {}],
      ['text', fits],
      ['close', 'a'],
    ]);
  });
});
