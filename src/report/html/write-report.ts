import { join } from 'node:path';
import { writeFileAtomic } from '../../artifacts/atomic-file.js';
import { writeTextChunks } from '../../artifacts/text-chunks.js';
import type { RunRecord } from '../../artifacts/run-record.js';
import { gatherReportData, type GatherOptions } from './report-data.js';
import { renderReportChunks } from './render-report.js';

/** The report's name in the run folder. */
export const REPORT_FILE = 'report.html';

/**
 * Writes `<run folder>/report.html` for `record` (which must already show
 * secrets masked) and resolves with its path. Written to a temp file and
 * renamed: a reader never sees half a report. The page goes out in pieces
 * (writeTextChunks), never as one string.
 */
export async function writeRunReport(record: RunRecord, options: GatherOptions = {}): Promise<string> {
  const data = await gatherReportData(record, options);
  const file = join(record.dir, REPORT_FILE);
  const chunks = renderReportChunks(data);
  writeFileAtomic(file, (fd) => writeTextChunks(fd, chunks));
  return file;
}
