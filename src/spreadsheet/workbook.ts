import { rejected, type RangeReader, type SpreadsheetLimits } from './limits.js';
import { openZipContainer, type ZipContainer, type ZipPart } from './zip-container.js';
import { local, readXml } from './xml-stream.js';

/** An xlsx whose container passed the limits: its first worksheet, its shared strings, and their bytes. */
export interface Workbook {
  sheet: ZipPart;
  sharedStrings?: ZipPart;
  /** A part's bytes, inflated, as they stream (one ranged read of the stored file). */
  open(part: ZipPart): Promise<AsyncIterable<Buffer>>;
}

/** Workbook and relationship parts past this size are not read (they are a few KiB in practice). */
const PART_LIMIT = 4 * 1024 * 1024;

/** All attributes of the elements named `name` (local name), in document order. */
async function elements(chunks: AsyncIterable<Buffer>, name: string): Promise<Readonly<Record<string, string>>[]> {
  const found: Readonly<Record<string, string>>[] = [];
  await readXml(chunks, {
    open: (tag, attrs) => {
      if (local(tag) === name) found.push(attrs);
    },
    close: () => undefined,
    text: () => undefined,
  });
  return found;
}

/** Resolves a relationship's target against the workbook's folder (`xl/`), as OPC part names. */
function partName(target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : `xl/${target}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p !== '.' && p !== '') out.push(p);
  }
  return out.join('/');
}

/**
 * The first worksheet in the workbook's tab order (xl/workbook.xml and its relationships) and the
 * shared strings part. A container without those parts falls back to the first `xl/worksheets/sheetN.xml`
 * in directory order and `xl/sharedStrings.xml`.
 */
export async function locateWorkbookParts(container: ZipContainer): Promise<Workbook> {
  const entries = container.parts;
  const workbook = entries.get('xl/workbook.xml');
  const rels = entries.get('xl/_rels/workbook.xml.rels');
  let sheet: ZipPart | undefined;
  let sharedStrings = entries.get('xl/sharedStrings.xml');
  if (workbook && rels && workbook.uncompressed <= PART_LIMIT && rels.uncompressed <= PART_LIMIT) {
    const targets = new Map<string, { type: string; target: string }>();
    for (const r of await elements(await container.open(rels), 'Relationship'))
      if (r.Id && r.Target && r.TargetMode !== 'External')
        targets.set(r.Id, { type: r.Type ?? '', target: partName(r.Target) });
    for (const t of targets.values())
      if (t.type.endsWith('/sharedStrings') && entries.has(t.target)) sharedStrings = entries.get(t.target);
    const sheets = await elements(await container.open(workbook), 'sheet');
    const first = sheets[0] && Object.entries(sheets[0]).find(([k]) => local(k) === 'id' && k !== 'id')?.[1];
    const target = first !== undefined ? targets.get(first) : undefined;
    if (target) sheet = entries.get(target.target);
  }
  if (!sheet)
    for (const [name, entry] of entries)
      if (/^xl\/worksheets\/sheet\d+\.xml$/.test(name)) {
        sheet = entry;
        break;
      }
  if (!sheet) throw rejected('The workbook has no worksheet');
  return { sheet, ...(sharedStrings ? { sharedStrings } : {}), open: (part) => container.open(part) };
}

/** Checks the container against the limits (nothing inflated yet), then locates its parts. */
export async function openWorkbook(read: RangeReader, size: number, limits: SpreadsheetLimits): Promise<Workbook> {
  return locateWorkbookParts(await openZipContainer(read, size, limits));
}
