import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';

/**
 * What a saved file is served as. Nothing an app wrote is ever rendered as
 * a page of this origin: HTML goes out as text, SVG under a sandbox.
 */
const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.pdf': 'application/pdf',
};
const TEXT = new Set(['.txt', '.log', '.csv', '.md', '.yaml', '.yml', '.html', '.htm', '.xml', '.js', '.ts']);

/**
 * A file under `root` for the UI: `path` is URL-decoded, relative, and must
 * resolve (symlinks followed) to a regular file inside `root`. Anything else
 * is `undefined` (a 404), whatever the path tries.
 */
export async function serveFileUnder(root: string, path: string): Promise<Response | undefined> {
  if (path === '' || path.includes('\0') || isAbsolute(path)) return undefined;
  let realRoot: string;
  let file: string;
  try {
    realRoot = await realpath(root);
    file = await realpath(join(realRoot, path));
  } catch {
    return undefined;
  }
  const inside = relative(realRoot, file);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside) || inside.split(sep).includes('..')) return undefined;
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const extension = extname(file).toLowerCase();
  const type = TYPES[extension] ?? (TEXT.has(extension) ? 'text/plain; charset=utf-8' : 'application/octet-stream');
  const headers: Record<string, string> = {
    'content-type': type,
    'content-length': String(info.size),
    'x-content-type-options': 'nosniff',
    // A file is data, never a page that may run script on this origin.
    'content-security-policy': "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'",
    'cache-control': 'no-cache',
  };
  if (type === 'application/octet-stream') headers['content-disposition'] = 'attachment';
  return new Response(Readable.toWeb(createReadStream(file)) as ReadableStream, { headers });
}
