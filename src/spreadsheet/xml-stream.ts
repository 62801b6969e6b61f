import { StringDecoder } from 'node:string_decoder';
import { SaxesParser } from 'saxes';
import { isAppError } from '../kernel/errors.js';
import { rejected } from './limits.js';

/**
 * The parts of a workbook read as XML by saxes, a conforming streaming parser: well-formedness is its
 * (tags balanced and matching, one root, references known, characters allowed, nothing left open at
 * the end). What this file adds for untrusted parts:
 * - bytes decoded as one UTF-8 stream, so a character split between two inflated chunks stays whole;
 * - a document type declaration refused (saxes does not expand entities a DTD declares, and a part of
 *   a workbook never has one);
 * - a single construct (tag, text, comment, CDATA section) longer than MAX_CONSTRUCT_CHARS refused,
 *   and elements nested deeper than MAX_DEPTH, so what saxes holds while it reads stays bounded;
 * - any failure, the parser's or the handler's, refuses the file (`spreadsheet_rejected`).
 */

export interface XmlHandler {
  /** A start tag: its name as written (prefix included) and its attributes (references decoded). */
  open(name: string, attributes: Readonly<Record<string, string>>): void;
  /** An end tag, or the end of a self-closing tag. */
  close(name: string): void;
  /** Text or CDATA inside the root element, possibly in several pieces. */
  text(text: string): void;
}

/** A construct longer than this (characters of the document, before references are decoded) is refused. */
export const MAX_CONSTRUCT_CHARS = 1024 * 1024;
/** Elements nested deeper than this are refused (a worksheet nests seven). */
export const MAX_DEPTH = 64;
/** Text is handed to saxes in slices of at most this many characters: the construct bound is checked per slice. */
const SLICE = 64 * 1024;

/** The local name of an element or attribute (`x:row` → `row`). */
export const local = (name: string) => {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
};

/** What one document's parse keeps while saxes reads it. */
interface Reading {
  handler: XmlHandler;
  /** Events seen (the construct bound counts characters written since the last slice that saw one). */
  events: number;
  depth: number;
}

/**
 * A saxes parser kept between documents, with handlers made once. saxes starts afresh after a clean
 * end, and reusing one keeps V8's optimised code for saxes: each new parser with new handler closures
 * let that code die with the closures it had inlined at the end of every document, and from about the
 * third 100,000-row sheet in a process saxes ran at a quarter of its speed (decision 1138).
 */
class PooledParser {
  readonly saxes = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false });
  reading: Reading | undefined;
  constructor() {
    const r = () => this.reading!;
    this.saxes.on('opentag', (tag) => {
      const s = r();
      s.events++;
      if (++s.depth > MAX_DEPTH) throw new Error(`elements nested deeper than ${MAX_DEPTH}`);
      s.handler.open(tag.name, tag.attributes);
    });
    this.saxes.on('closetag', (tag) => {
      const s = r();
      s.events++;
      s.depth--;
      s.handler.close(tag.name);
    });
    this.saxes.on('text', (text) => {
      const s = r();
      s.events++;
      // Text outside the root element is white space (saxes refuses anything else there).
      if (s.depth > 0) s.handler.text(text);
    });
    this.saxes.on('cdata', (text) => {
      const s = r();
      s.events++;
      s.handler.text(text);
    });
    this.saxes.on('doctype', () => {
      throw new Error('document type declarations are not accepted');
    });
  }
}

/** Parsers whose last document ended cleanly (a failed one is dropped: saxes stopped mid-document). */
const idle: PooledParser[] = [];
const MAX_IDLE = 4;

/**
 * Feeds XML chunks to saxes and yields after each chunk, so the caller can hand on what the handler
 * collected. Malformed XML, or a handler refusing what it saw, rejects the file.
 */
export async function* parseXml(chunks: AsyncIterable<Buffer>, handler: XmlHandler): AsyncGenerator<void> {
  const decoder = new StringDecoder('utf8');
  const parser = idle.pop() ?? new PooledParser();
  const reading: Reading = { handler, events: 0, depth: 0 };
  parser.reading = reading;
  /** Characters written since the last slice that saw an event. */
  let quiet = 0;
  const write = (text: string) => {
    for (let from = 0; from < text.length; from += SLICE) {
      const slice = from === 0 && text.length <= SLICE ? text : text.slice(from, from + SLICE);
      const before = reading.events;
      parser.saxes.write(slice);
      quiet = reading.events === before ? quiet + slice.length : 0;
      if (quiet > MAX_CONSTRUCT_CHARS) throw new Error(`a construct longer than ${MAX_CONSTRUCT_CHARS} characters`);
    }
  };
  const feed = (text: string, last: boolean) => {
    try {
      write(text);
      if (last) parser.saxes.close();
    } catch (e) {
      throw isAppError(e) ? e : rejected(`The workbook could not be read: ${(e as Error).message}`, e);
    }
  };
  let clean = false;
  try {
    for await (const chunk of chunks) {
      feed(decoder.write(chunk), false);
      yield;
    }
    feed(decoder.end(), true);
    clean = true;
  } finally {
    parser.reading = undefined;
    // Only a parser that reached the end of its document is clean for the next one.
    if (clean && idle.length < MAX_IDLE) idle.push(parser);
  }
}

/** Reads a whole part through the handler. */
export async function readXml(chunks: AsyncIterable<Buffer>, handler: XmlHandler): Promise<void> {
  for await (const _ of parseXml(chunks, handler));
}
