import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { SaxesParser } from 'saxes';
import { MAX_CONSTRUCT_CHARS, MAX_DEPTH, parseXml, readXml, type XmlHandler } from './xml-stream.js';

type Event = ['open', string, Record<string, string>] | ['close', string] | ['text', string];

/** Events as saxes reports them for the whole document in one piece: the reference. */
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

/** The document's UTF-8 bytes cut at `cuts`. */
async function* bytesCut(xml: string, cuts: number[]): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(xml);
  let from = 0;
  for (const cut of [...cuts.map((c) => Math.min(c, bytes.length)).sort((a, b) => a - b), bytes.length]) {
    yield bytes.subarray(from, Math.max(from, cut));
    from = Math.max(from, cut);
  }
}

/** Events as the module reports them, fed the document's bytes cut at `cuts`. */
async function byModule(xml: string, cuts: number[]): Promise<Event[]> {
  const events: Event[] = [];
  await readXml(bytesCut(xml, cuts), {
    open: (name, attrs) => events.push(['open', name, { ...attrs }]),
    close: (name) => events.push(['close', name]),
    text: (t) => events.push(['text', t]),
  });
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

const rejected = { code: 'spreadsheet_rejected' };

describe('reading XML with saxes, fed the bytes of an inflated part', () => {
  it('reports what saxes reports for the whole document, however its bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(documents, fc.array(fc.nat({ max: 400 }), { maxLength: 6 }), async ({ xml }, cuts) => {
        expect(await byModule(xml, cuts)).toEqual(bySaxes(xml));
      }),
      { numRuns: 1500 },
    );
  });

  it('refuses every document cut short before its root element closes', async () => {
    await fc.assert(
      fc.asyncProperty(documents, fc.nat(), async ({ xml, rootEnd }, at) => {
        const cut = xml.slice(0, at % rootEnd);
        expect(() => bySaxes(cut)).toThrow();
        await expect(byModule(cut, [])).rejects.toMatchObject(rejected);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses mismatched and stray end tags, a second root, text outside the root, unknown references and any DOCTYPE', async () => {
    for (const xml of [
      '<a><b></a></b>',
      '<a></a></a>',
      '<a/><b/>',
      '<a/>text',
      'text<a/>',
      '<a>&nbsp;</a>',
      '<a>&#0;</a>',
      '<a>& b</a>',
      '<a b="<"/>',
      '<a>\u0001</a>',
      // saxes reads a DOCTYPE without expanding what it declares; a workbook part never has one.
      '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',
      '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
      '<!DOCTYPE a [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><a>&b;</a>',
      '<!DOCTYPE a><a/>',
      '<?xml version="1.0"?>\n<!DOCTYPE a SYSTEM "http://example.org/a.dtd"><a/>',
    ]) {
      await expect(byModule(xml, [])).rejects.toMatchObject(rejected);
      await expect(byModule(xml, [1, 7, 20])).rejects.toMatchObject(rejected);
    }
    // saxes alone accepts a DOCTYPE that declares nothing used: refusing it is this module's.
    expect(bySaxes('<!DOCTYPE a><a/>')).toEqual([
      ['open', 'a', {}],
      ['close', 'a'],
    ]);
    await expect(byModule('<!DOCTYPE a><a/>', [])).rejects.toMatchObject({
      message: expect.stringMatching(/document type/),
    });
  });

  it('refuses a single tag, text, comment, CDATA section or DOCTYPE longer than the construct limit, and deep nesting', async () => {
    const long = 'x'.repeat(MAX_CONSTRUCT_CHARS + 128 * 1024);
    const cuts = Array.from({ length: 40 }, (_, i) => (i + 1) * 40_000);
    for (const xml of [
      `<a b="${long}"/>`,
      `<a><!--${long}--></a>`,
      `<a><![CDATA[${long}]]></a>`,
      `<a>${long}</a>`,
      `<!DOCTYPE a [<!-- ${long} -->]><a/>`,
    ]) {
      // Whole in one chunk or cut into many: refused the same way.
      await expect(byModule(xml, [])).rejects.toMatchObject({
        ...rejected,
        message: expect.stringMatching(/longer than/),
      });
      await expect(byModule(xml, cuts)).rejects.toMatchObject({
        ...rejected,
        message: expect.stringMatching(/longer than/),
      });
    }
    const fits = 'x'.repeat(MAX_CONSTRUCT_CHARS - 128 * 1024);
    expect(await byModule(`<a><![CDATA[${fits}]]><b c="${fits}"/>${fits}</a>`, cuts)).toEqual([
      ['open', 'a', {}],
      ['text', fits],
      ['open', 'b', { c: fits }],
      ['close', 'b'],
      ['text', fits],
      ['close', 'a'],
    ]);
    const nested = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
    expect(await byModule(nested(MAX_DEPTH), [])).toHaveLength(2 * MAX_DEPTH);
    await expect(byModule(nested(MAX_DEPTH + 1), [])).rejects.toMatchObject({
      ...rejected,
      message: expect.stringMatching(/nested/),
    });
  });

  it('reads each document afresh after a refused one, an abandoned one, and beside another document', async () => {
    const good = '<a x="1"><b>text</b><c/></a>';
    const expected = bySaxes(good);
    // A document refused halfway, one whose reader stops after its first chunk, then the good one:
    // a parser left mid-document must never read the next one.
    for (const broken of ['<a><b>open', '<a><b></a>', '<a><!DOCTYPE a><b>']) {
      await expect(byModule(broken, [3, 5])).rejects.toMatchObject(rejected);
      expect(await byModule(good, [2])).toEqual(expected);
    }
    for await (const _ of parseXml(bytesCut('<z><y>', [2, 4]), { open: () => {}, close: () => {}, text: () => {} }))
      break;
    expect(await byModule(good, [])).toEqual(expected);
    // Two documents read in turns, chunk by chunk, as two imports on one node would be.
    const other = '<p q="2">more <r>text</r></p>';
    const events: [Event[], Event[]] = [[], []];
    const reader = (i: 0 | 1): XmlHandler => ({
      open: (name, attrs) => events[i].push(['open', name, { ...attrs }]),
      close: (name) => events[i].push(['close', name]),
      text: (t) => events[i].push(['text', t]),
    });
    const one = parseXml(bytesCut(good, [3, 9, 15]), reader(0));
    const two = parseXml(bytesCut(other, [2, 7, 12]), reader(1));
    let done = [false, false];
    while (!done[0] || !done[1]) {
      if (!done[0]) done[0] = (await one.next()).done === true;
      if (!done[1]) done[1] = (await two.next()).done === true;
    }
    expect(merged(events[0])).toEqual(expected);
    expect(merged(events[1])).toEqual(bySaxes(other));
  });
});
