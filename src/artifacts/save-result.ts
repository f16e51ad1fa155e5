import { join } from 'node:path';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { claimSpooled, type SpooledFile } from '../apps/spool.js';
import { maskToolResult } from '../secrets.js';
import { makeRunFolder, writeFileAtomic, writeJsonAtomic } from './run-record.js';
import { extensionFor, fileNameForUri, sanitizeFileName } from './file-names.js';
import { moveFileAtomic } from './move-file.js';
import type { WriteBehind } from './write-behind.js';
import { messageOf } from '../errors.js';
import { CallError } from '../apps/call-error.js';

export interface SavedResult {
  /** Absolute paths of the files saved, in content order. */
  files: string[];
  /** The result as stored in result.json (binary payloads replaced by file references, secrets masked). */
  stored: unknown;
}

/** Reads a linked resource; absent when the app has no resources capability. */
export type ResourceReader = (uri: string) => Promise<ReadResourceResult>;

/**
 * Saves a tool result into its step folder: image, audio and blob content as
 * files, resource links read through `resources/read` and saved, and
 * result.json with every binary payload replaced by `{ file }`. Files a later
 * step may read are on disk when this resolves; result.json, which only the
 * record needs, goes through `writeBehind` when one is given. Secrets are
 * masked in result.json only: saved payload files stay exactly as delivered.
 * A payload the transport spooled (see apps/spool.ts) is moved into place.
 */
export async function saveResult(
  stepDir: string,
  result: CallToolResult,
  readResource?: ResourceReader,
  writeBehind?: WriteBehind,
  secretValues: readonly string[] = [],
): Promise<SavedResult> {
  const used = new Set<string>(['result.json']);
  const files: string[] = [];
  let folderMade = false;
  const makeFolder = () => {
    if (!folderMade) makeRunFolder(stepDir);
    folderMade = true;
  };

  const saveBytes = (wanted: string, data: Buffer): string => {
    makeFolder();
    const name = uniqueName(wanted, used);
    const path = join(stepDir, name);
    writeFileAtomic(path, data);
    files.push(path);
    return name;
  };
  // A large payload of a stdio app arrives as a token for a file already decoded in the spool: moved, never read back.
  const saveSpooled = (wanted: string, spooled: SpooledFile): string => {
    makeFolder();
    const name = uniqueName(wanted, used);
    const path = join(stepDir, name);
    moveFileAtomic(spooled.path, path);
    files.push(path);
    return name;
  };
  const saveBase64 = (wanted: string, data: string): { name: string; bytes: number } => {
    const spooled = claimSpooled(data);
    if (spooled) return { name: saveSpooled(wanted, spooled), bytes: spooled.bytes };
    return { name: saveBytes(wanted, Buffer.from(data, 'base64')), bytes: Buffer.byteLength(data, 'base64') };
  };

  const content = Array.isArray(result.content) ? result.content : [];
  // Counted before anything is written: each file is a synchronous write and an inode, and a 64 MiB
  // message has room for a million tiny images. Each linked resource is at least one file.
  let budget = MAX_FILES_PER_RESULT - countFilesToSave(content, readResource !== undefined);
  if (budget < 0) throw tooManyFiles(`${MAX_FILES_PER_RESULT - budget}`);
  const storedContent: unknown[] = [];
  for (const [index, block] of content.entries()) {
    switch (block.type) {
      case 'image':
      case 'audio': {
        const { data, ...rest } = block;
        const { name: file, bytes } = saveBase64(`${block.type}-${index}.${extensionFor(block.mimeType)}`, data);
        storedContent.push({ ...rest, file, bytes });
        break;
      }
      case 'resource': {
        const resource = block.resource as { uri: string; mimeType?: string; blob?: string; text?: string };
        if (typeof resource.blob === 'string') {
          const { blob, ...rest } = resource;
          const file = saveBase64(fileNameForUri(resource.uri, resource.mimeType, `resource-${index}`), blob).name;
          storedContent.push({ ...block, resource: { ...rest, file } });
        } else {
          storedContent.push(block);
        }
        break;
      }
      case 'resource_link': {
        if (!readResource) {
          storedContent.push(block);
          break;
        }
        try {
          const read = await readResource(block.uri);
          // The link was counted as one file; its other parts come out of what is left.
          budget -= Math.max(0, read.contents.length - 1);
          if (budget < 0) throw tooManyFiles(`more than ${MAX_FILES_PER_RESULT}`, true);
          const saved = read.contents.map((part, partIndex) => {
            const entry = part as { uri: string; mimeType?: string; blob?: string; text?: string };
            const fallback = `link-${index}${read.contents.length > 1 ? `-${partIndex}` : ''}`;
            const mime = entry.mimeType ?? block.mimeType;
            const wanted = fileNameForUri(entry.uri ?? block.uri, mime ?? (entry.text !== undefined ? 'text/plain' : undefined), fallback);
            if (typeof entry.blob === 'string') return saveBase64(wanted, entry.blob).name;
            return saveBytes(wanted, Buffer.from(entry.text ?? '', 'utf8'));
          });
          storedContent.push({ ...block, files: saved });
        } catch (error) {
          if (error instanceof CallError) throw error;
          storedContent.push({ ...block, readError: messageOf(error) });
        }
        break;
      }
      default:
        storedContent.push(block);
    }
  }
  // Masked after the payloads are saved: a file a later step reads must be the app's bytes, not `***`.
  const stored = maskToolResult({ ...result, content: storedContent }, secretValues);
  const writeRecord = () => writeJsonAtomic(join(stepDir, 'result.json'), stored); // makes the folder too
  if (writeBehind) writeBehind.add(writeRecord);
  else writeRecord();
  return { files, stored };
}

/** The most files one result may have saved: its image, audio and blob payloads, and the parts of the resources it links to. */
export const MAX_FILES_PER_RESULT = 1_000;

/** Payloads to save as files, and links to read (one file each at least) when they are read. */
function countFilesToSave(content: readonly { type: string; resource?: unknown }[], readsLinks: boolean): number {
  let count = 0;
  for (const block of content) {
    if (block.type === 'image' || block.type === 'audio') count++;
    else if (block.type === 'resource' && typeof (block.resource as { blob?: unknown } | undefined)?.blob === 'string') count++;
    else if (block.type === 'resource_link' && readsLinks) count++;
  }
  return count;
}

function tooManyFiles(count: string, linked = false): CallError {
  return new CallError(
    'protocol',
    `the result was refused: it has ${count} files to save (images, audio, blobs${linked ? ' and the parts of the resources it links to' : ', linked resources'}), and one result may have at most ${MAX_FILES_PER_RESULT}`,
    { refusedByLimit: true },
  );
}

function uniqueName(wanted: string, used: Set<string>): string {
  const safe = sanitizeFileName(wanted, 'file');
  let name = safe;
  for (let n = 1; used.has(name); n++) {
    const dot = safe.lastIndexOf('.');
    name = dot > 0 ? `${safe.slice(0, dot)}-${n}${safe.slice(dot)}` : `${safe}-${n}`;
  }
  used.add(name);
  return name;
}

/** The `text` of a result: all text blocks joined with newlines. */
export function textOf(result: CallToolResult): string {
  const content = Array.isArray(result.content) ? result.content : [];
  return content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** The `outputs` of a result: structuredContent, else the JSON of a single text block, else null. */
export function outputsOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  const content = Array.isArray(result.content) ? result.content : [];
  const texts = content.filter((block) => block.type === 'text') as { text: string }[];
  if (texts.length === 1) {
    try {
      return JSON.parse(texts[0].text);
    } catch {
      return null;
    }
  }
  return null;
}
