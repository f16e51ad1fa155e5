import { statSync } from 'node:fs';
import { extname } from 'node:path';

/** A preview small enough to live inside report.html as a data: URI. */
export interface Thumbnail {
  src: string;
  width: number;
  height: number;
}

const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.avif', '.tif', '.tiff']);
// No .svg: rendering one could make librsvg read what it links to.
/** The longest side of a preview, in pixels. */
const THUMBNAIL_PX = 160;
/** Past these, the report only links: a run of 10,000 images must not make a 50 MB report. */
const MAX_THUMBNAILS = 200;
const MAX_SOURCE_BYTES = 50 * 1024 * 1024;

/**
 * Makes a PNG preview (at most 160 px a side) of each image among `files`, by
 * path. A file that is missing, too big or not really an image gets none.
 */
export async function makeThumbnails(files: readonly string[]): Promise<Map<string, Thumbnail>> {
  const images = [...new Set(files)].filter((file) => IMAGE_EXTENSIONS.has(extname(file).toLowerCase())).slice(0, MAX_THUMBNAILS);
  const thumbnails = new Map<string, Thumbnail>();
  if (images.length === 0) return thumbnails;
  const sharp = (await import('sharp')).default;
  // A few at a time: sharp has its own thread pool, and a thousand open files help nobody.
  for (let i = 0; i < images.length; i += 4) {
    await Promise.all(
      images.slice(i, i + 4).map(async (file) => {
        try {
          if (statSync(file).size > MAX_SOURCE_BYTES) return;
          const { data, info } = await sharp(file, { animated: false, limitInputPixels: 100_000_000 })
            .resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: 'inside', withoutEnlargement: true })
            .png({ compressionLevel: 9 })
            .toBuffer({ resolveWithObject: true });
          thumbnails.set(file, { src: `data:image/png;base64,${data.toString('base64')}`, width: info.width, height: info.height });
        } catch {
          // Not an image after all, or gone: the file is still linked.
        }
      }),
    );
  }
  return thumbnails;
}
