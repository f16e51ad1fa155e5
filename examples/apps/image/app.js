// Demo MCP app "image": renders, resizes, crops, converts and inspects images with sharp.
// Works only inside the artifacts root; see ../README.md for flags and annotations.
// The server's tools; server.js starts it. createImageServer({ root }) returns a fresh McpServer each call.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { writeFileAtomic } from '../lib/atomic-write.js';
import { lazy } from '../lib/lazy.js';
import { requireFile, resolveInsideRoot, siblingPath } from '../lib/paths.js';
import { ToolError, jsonResult, registerJsonTool } from '../lib/tool-result.js';

// sharp loads lazily: a `server/discover` probe process then starts without it.
const loadSharp = lazy(async () => {
  const sharp = (await import('sharp')).default;
  // libvips caches by file name; a file replaced on disk could be served stale.
  sharp.cache(false);
  return sharp;
});

const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'];
const EXTENSION_FORMATS = { '.png': 'png', '.jpg': 'jpeg', '.jpeg': 'jpeg', '.webp': 'webp' };
const COLOR = { type: 'string', pattern: '^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,30}|rgba?\\([0-9.,%\\s]+\\))$' };
const SIDE = { type: 'integer', minimum: 1, maximum: 8192 };
const PATH = { type: 'string', minLength: 1, description: 'File path, absolute or relative to the artifacts root' };
const OUT = { ...PATH, description: 'Where to write the result (absolute or relative to the artifacts root)' };

const imageFile = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'Absolute path of the written file' },
    width: { type: 'integer' },
    height: { type: 'integer' },
    format: { type: 'string' },
    bytes: { type: 'integer' },
  },
  required: ['path', 'width', 'height', 'format', 'bytes'],
  additionalProperties: false,
};

// Writes only new derived files (never the input), so repeated calls give the same file.
const WRITES_DERIVED_FILE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const READS_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function createImageServer({ root }) {
  const server = new McpServer({ name: 'image', version: '1.0.0' }, { capabilities: { tools: {} } });
  const inRoot = (pathArg, field) => resolveInsideRoot(root, pathArg, field);

  registerJsonTool(server, 'render_text', {
    title: 'Render text to PNG',
    description: 'Render text (newlines start new lines) centered on a solid background and write it as a PNG.',
    annotations: WRITES_DERIVED_FILE,
    input: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 2000 },
        out: OUT,
        width: { ...SIDE, default: 512 },
        height: { ...SIDE, default: 256 },
        background: { ...COLOR, default: '#1f6feb' },
        color: { ...COLOR, default: '#ffffff' },
        fontSize: { type: 'number', exclusiveMinimum: 0, maximum: 2000, description: 'Default: the largest size that fits' },
      },
      required: ['text', 'out'],
      additionalProperties: false,
    },
    output: imageFile,
  }, async ({ text, out, width = 512, height = 256, background = '#1f6feb', color = '#ffffff', fontSize }) => {
    const target = inRoot(out, 'out');
    const extensionFormat = EXTENSION_FORMATS[extname(target).toLowerCase()];
    if (extensionFormat && extensionFormat !== 'png') throw new ToolError(`\`out\` ${out} must be a .png file: render_text writes PNG`);
    const svg = textSvg({ text, width, height, background, color, fontSize });
    const sharp = await loadSharp();
    return writeImage(sharp(Buffer.from(svg)), target, 'png');
  });

  registerJsonTool(server, 'resize', {
    title: 'Resize image',
    description: 'Resize an image and write it to `out` (default `<name>-<w>x<h>.<ext>` beside the input). '
      + 'With only `width`, the aspect ratio is kept. The format follows the extension of `out`, else the input.',
    annotations: WRITES_DERIVED_FILE,
    input: {
      type: 'object',
      properties: {
        path: PATH,
        out: OUT,
        width: SIDE,
        height: SIDE,
        fit: { type: 'string', enum: ['cover', 'contain', 'fill', 'inside', 'outside'], default: 'cover' },
      },
      required: ['path', 'width'],
      additionalProperties: false,
    },
    output: imageFile,
  }, async ({ path, out, width, height, fit = 'cover' }) => {
    const source = await loadImage(inRoot(path), path);
    const pipeline = source.sharp().resize({ width, height, fit });
    return writeDerived(source, pipeline, out, inRoot, (w, h) => `-${w}x${h}`);
  });

  registerJsonTool(server, 'crop', {
    title: 'Crop image',
    description: 'Cut a rectangle out of an image and write it to `out` (default `<name>-crop-<left>_<top>-<w>x<h>.<ext>`).',
    annotations: WRITES_DERIVED_FILE,
    input: {
      type: 'object',
      properties: {
        path: PATH,
        out: OUT,
        left: { type: 'integer', minimum: 0 },
        top: { type: 'integer', minimum: 0 },
        width: SIDE,
        height: SIDE,
      },
      required: ['path', 'left', 'top', 'width', 'height'],
      additionalProperties: false,
    },
    output: imageFile,
  }, async ({ path, out, left, top, width, height }) => {
    const source = await loadImage(inRoot(path), path);
    const { width: imageWidth, height: imageHeight } = source.metadata;
    if (left + width > imageWidth || top + height > imageHeight) {
      throw new ToolError(`crop area ${width}x${height} at (${left}, ${top}) does not fit the ${imageWidth}x${imageHeight} image ${path}`);
    }
    const pipeline = source.sharp().extract({ left, top, width, height });
    return writeDerived(source, pipeline, out, inRoot, (w, h) => `-crop-${left}_${top}-${w}x${h}`);
  });

  registerJsonTool(server, 'convert', {
    title: 'Convert image format',
    description: 'Re-encode an image as png, jpeg or webp and write it to `out` (default: same name, new extension).',
    annotations: WRITES_DERIVED_FILE,
    input: {
      type: 'object',
      properties: { path: PATH, out: OUT, format: { type: 'string', enum: OUTPUT_FORMATS } },
      required: ['path', 'format'],
      additionalProperties: false,
    },
    output: imageFile,
  }, async ({ path, out, format }) => {
    const source = await loadImage(inRoot(path), path);
    const target = out === undefined ? siblingPath(source.path, '', format === 'jpeg' ? '.jpg' : `.${format}`) : inRoot(out, 'out');
    const extensionFormat = EXTENSION_FORMATS[extname(target).toLowerCase()];
    if (extensionFormat && extensionFormat !== format) {
      throw new ToolError(`\`out\` ${out} has a ${extensionFormat} extension but \`format\` is ${format}`);
    }
    assertNotInput(target, source.path);
    return writeImage(source.sharp(), target, format);
  });

  registerJsonTool(server, 'info', {
    title: 'Image info',
    description: 'Read the dimensions, format, channel count and size in bytes of an image.',
    annotations: READS_ONLY,
    input: { type: 'object', properties: { path: PATH }, required: ['path'], additionalProperties: false },
    output: {
      type: 'object',
      properties: { ...imageFile.properties, channels: { type: 'integer' } },
      required: [...imageFile.required, 'channels'],
      additionalProperties: false,
    },
  }, async ({ path }) => {
    const { path: file, buffer, metadata } = await loadImage(inRoot(path), path);
    const { width, height, format, channels } = metadata;
    return { path: file, width, height, format, bytes: buffer.length, channels };
  });

  registerJsonTool(server, 'thumbnail', {
    title: 'Thumbnail',
    description: 'Return a PNG thumbnail (at most `size` pixels on its longer side) as image content; writes nothing.',
    annotations: READS_ONLY,
    input: {
      type: 'object',
      properties: { path: PATH, size: { type: 'integer', minimum: 1, maximum: 1024, default: 128 } },
      required: ['path'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: { width: { type: 'integer' }, height: { type: 'integer' }, mimeType: { const: 'image/png' } },
      required: ['width', 'height', 'mimeType'],
      additionalProperties: false,
    },
  }, async ({ path, size = 128 }) => {
    const source = await loadImage(inRoot(path), path);
    const { data, info } = await source.sharp()
      .resize({ width: size, height: size, fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer({ resolveWithObject: true });
    const summary = { width: info.width, height: info.height, mimeType: 'image/png' };
    return jsonResult(summary, [{ type: 'image', data: data.toString('base64'), mimeType: 'image/png' }]);
  });

  return server;
}

// Read the whole file first: sharp then never sees a half-replaced file, and we know its size.
async function loadImage(file, pathArg) {
  await requireFile(file, pathArg);
  const buffer = await readFile(file);
  const sharp = await loadSharp();
  const metadata = await sharp(buffer).metadata().catch(() => {
    throw new ToolError(`not an image sharp can read: ${pathArg}`);
  });
  return { path: file, buffer, metadata, sharp: () => sharp(buffer) };
}

async function writeDerived(source, pipeline, out, inRoot, suffixFor) {
  const explicit = out === undefined ? undefined : inRoot(out, 'out');
  const format = (explicit && EXTENSION_FORMATS[extname(explicit).toLowerCase()])
    ?? (OUTPUT_FORMATS.includes(source.metadata.format) ? source.metadata.format : 'png');
  const { data, info } = await encode(pipeline, format);
  const sameFormat = format === source.metadata.format;
  const target = explicit ?? siblingPath(source.path, suffixFor(info.width, info.height), sameFormat ? extname(source.path) : `.${format}`);
  assertNotInput(target, source.path);
  await writeFileAtomic(target, data);
  return { path: target, width: info.width, height: info.height, format, bytes: data.length };
}

async function writeImage(pipeline, target, format) {
  const { data, info } = await encode(pipeline, format);
  await writeFileAtomic(target, data);
  return { path: target, width: info.width, height: info.height, format, bytes: data.length };
}

function encode(pipeline, format) {
  return pipeline.toFormat(format).toBuffer({ resolveWithObject: true });
}

// Replacing the input would make these tools destructive and not idempotent.
function assertNotInput(target, input) {
  if (target === input) throw new ToolError(`\`out\` must differ from \`path\` (${input}): image tools never replace their input`);
}

// An SVG laid out by hand (no dominant-baseline), rendered by sharp's librsvg with fontconfig fonts.
function textSvg({ text, width, height, background, color, fontSize }) {
  const lines = text.split(/\r?\n/);
  const longest = Math.max(...lines.map((line) => [...line].length), 1);
  // ~0.62 em per glyph (DejaVu Sans, the usual fallback) and 1.2 em per line.
  const size = fontSize ?? Math.max(1, Math.floor(Math.min((width * 0.9) / (longest * 0.62), (height * 0.8) / (lines.length * 1.2))));
  const lineHeight = size * 1.2;
  const firstCenter = height / 2 - ((lines.length - 1) * lineHeight) / 2;
  const spans = lines
    .map((line, i) => `<tspan x="${width / 2}" y="${(firstCenter + i * lineHeight + size * 0.35).toFixed(1)}">${escapeXml(line)}</tspan>`)
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`
    + `<rect width="100%" height="100%" fill="${escapeXml(background)}"/>`
    + `<text font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="${size}" fill="${escapeXml(color)}" text-anchor="middle" xml:space="preserve">${spans}</text>`
    + '</svg>';
}

function escapeXml(text) {
  return text.replace(/[<>&"']/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[ch]);
}

