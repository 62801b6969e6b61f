/**
 * Reading uploaded xlsx workbooks (decision 1113): the zip container through yauzl over ranged reads of
 * the stored file, the XML through saxes, and the cell rules. It imports nothing of the project but the
 * error codes (`npm run boundaries`).
 */
export { DEFAULT_SPREADSHEET_LIMITS, type RangeReader, type SpreadsheetLimits } from './limits.js';
export type { ZipContainer, ZipPart } from './zip-container.js';
export { openZipContainer } from './zip-container.js';
export { openWorkbook, locateWorkbookParts, type Workbook } from './workbook.js';
export { readSharedStrings, readSheetRows, type SheetCells } from './cells.js';
export { countWorksheetRows, countRowTags } from './row-count.js';
