import { extname } from 'node:path';

const extensionsByMime: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/ogg': 'ogg',
  'audio/webm': 'webm',
  'audio/flac': 'flac',
  'audio/aac': 'aac',
  'video/mp4': 'mp4',
  'application/pdf': 'pdf',
  'application/json': 'json',
  'application/zip': 'zip',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/markdown': 'md',
};

/** The file extension for a MIME type (`image/png` → `png`); `bin` when unknown. */
export function extensionFor(mimeType: string | undefined): string {
  if (!mimeType) return 'bin';
  const base = mimeType.split(';')[0].trim().toLowerCase();
  const known = extensionsByMime[base];
  if (known) return known;
  const subtype = base.split('/')[1] ?? '';
  return /^[a-z0-9]{1,8}$/.test(subtype) ? subtype : 'bin';
}

/**
 * A safe file name: no folders, no leading dots, only [A-Za-z0-9._-], at most
 * 100 characters, never empty. A saved file can never leave its step folder.
 */
export function sanitizeFileName(name: string, fallback: string): string {
  const last = name.split(/[\\/]/).pop() ?? '';
  let safe = last.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '');
  if (safe.length > 100) {
    const ext = extname(safe).slice(0, 12);
    safe = safe.slice(0, 100 - ext.length) + ext;
  }
  return safe || fallback;
}

/** A name from a resource URI's last path segment, with the extension its MIME type implies when missing. */
export function fileNameForUri(uri: string, mimeType: string | undefined, fallback: string): string {
  let last: string;
  try {
    last = decodeURIComponent(new URL(uri).pathname.split('/').pop() ?? '');
  } catch {
    last = uri.split('/').pop() ?? '';
  }
  const safe = sanitizeFileName(last, fallback);
  return extname(safe) ? safe : `${safe}.${extensionFor(mimeType)}`;
}
