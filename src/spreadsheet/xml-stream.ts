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

/**
 * Feeds XML chunks to saxes and yields after each chunk, so the caller can hand on what the handler
 * collected. Malformed XML, or a handler refusing what it saw, rejects the file.
 */
export async function* parseXml(chunks: AsyncIterable<Buffer>, handler: XmlHandler): AsyncGenerator<void> {
  const decoder = new StringDecoder('utf8');
  const parser = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false });
  /** Events seen; characters written since the last slice that saw one. */
  let events = 0;
  let quiet = 0;
  let depth = 0;
  parser.on('opentag', (tag) => {
    events++;
    if (++depth > MAX_DEPTH) throw new Error(`elements nested deeper than ${MAX_DEPTH}`);
    handler.open(tag.name, tag.attributes);
  });
  parser.on('closetag', (tag) => {
    events++;
    depth--;
    handler.close(tag.name);
  });
  parser.on('text', (text) => {
    events++;
    // Text outside the root element is white space (saxes refuses anything else there).
    if (depth > 0) handler.text(text);
  });
  parser.on('cdata', (text) => {
    events++;
    handler.text(text);
  });
  parser.on('doctype', () => {
    throw new Error('document type declarations are not accepted');
  });
  const write = (text: string) => {
    for (let from = 0; from < text.length; from += SLICE) {
      const slice = from === 0 && text.length <= SLICE ? text : text.slice(from, from + SLICE);
      const before = events;
      parser.write(slice);
      quiet = events === before ? quiet + slice.length : 0;
      if (quiet > MAX_CONSTRUCT_CHARS) throw new Error(`a construct longer than ${MAX_CONSTRUCT_CHARS} characters`);
    }
  };
  const feed = (text: string, last: boolean) => {
    try {
      write(text);
      if (last) parser.close();
    } catch (e) {
      throw isAppError(e) ? e : rejected(`The workbook could not be read: ${(e as Error).message}`, e);
    }
  };
  for await (const chunk of chunks) {
    feed(decoder.write(chunk), false);
    yield;
  }
  feed(decoder.end(), true);
}

/** Reads a whole part through the handler. */
export async function readXml(chunks: AsyncIterable<Buffer>, handler: XmlHandler): Promise<void> {
  for await (const _ of parseXml(chunks, handler));
}
