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
 * (writeTextChunks), never as one string, so it is rendered while it is
 * written: a renderer that fails is thrown as it is, not as a `storage`
 * error of the file (and leaves no file behind).
 */
export async function writeRunReport(record: RunRecord, options: GatherOptions = {}): Promise<string> {
  const data = await gatherReportData(record, options);
  const file = join(record.dir, REPORT_FILE);
  let renderFailure: { error: unknown } | undefined;
  const chunks = noting(renderReportChunks(data), (error) => (renderFailure = { error }));
  try {
    writeFileAtomic(file, (fd) => writeTextChunks(fd, chunks));
  } catch (error) {
    throw renderFailure ? renderFailure.error : error;
  }
  return file;
}

/** `chunks` as they are, calling `onError` with what their making throws before it goes on. */
function* noting(chunks: Iterable<string>, onError: (error: unknown) => void): Generator<string, void> {
  try {
    yield* chunks;
  } catch (error) {
    onError(error);
    throw error;
  }
}
