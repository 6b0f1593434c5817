import { describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';

/** `<phone-verification>` with the browser client on a page: minified and gzipped, as a host's bundler ships it. */
const MAX_GZIPPED_BYTES = 14 * 1024;
/** The QR encoder, a chunk of its own that only a desktop showing a call or bot screen loads. */
const MAX_QR_CHUNK_GZIPPED_BYTES = 2.5 * 1024;
/** The status stream read with fetch, a chunk only a page with `credentials="header"` loads. */
const MAX_STREAM_CHUNK_GZIPPED_BYTES = 1024;

describe('nestjs-phone-verification/element size', () => {
  it(`is at most ${MAX_GZIPPED_BYTES} bytes minified and gzipped with the client, and needs no Node built-in`, async () => {
    const result = await build({
      entryPoints: ['src/element/index.ts'],
      bundle: true,
      // The dynamic import of the QR encoder stays a chunk of its own, as a host's bundler makes it.
      splitting: true,
      outdir: 'dist-size',
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    const sizes = result.outputFiles.map((file) => ({
      name: file.path.slice(file.path.lastIndexOf('/') + 1),
      raw: file.contents.byteLength,
      gzipped: gzipSync(file.contents, { level: 9 }).byteLength,
    }));
    for (const size of sizes) console.log(`${size.name}: ${size.raw} B minified, ${size.gzipped} B gzipped`);
    const lazy = (s: { name: string }) =>
      s.name.startsWith('qr-') || s.name.startsWith('fetch-event-source-');
    const [entry, qr, stream, ...others] = [
      sizes.find((s) => s.name === 'index.js')!,
      sizes.find((s) => s.name.startsWith('qr-'))!,
      sizes.find((s) => s.name.startsWith('fetch-event-source-'))!,
      ...sizes.filter((s) => s.name !== 'index.js' && !lazy(s)),
    ];
    expect(others).toEqual([]);
    // The stream read with fetch loads only where the routes need headers (credentials="header").
    expect(stream.gzipped).toBeLessThanOrEqual(MAX_STREAM_CHUNK_GZIPPED_BYTES);
    expect(entry.gzipped).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
    expect(qr.gzipped).toBeLessThanOrEqual(MAX_QR_CHUNK_GZIPPED_BYTES);
    // The element really is built on the client: its code is in the entry.
    const text = new TextDecoder().decode(
      result.outputFiles.find((f) => f.path.endsWith('/index.js'))!.contents,
    );
    expect(text).toContain('phone-verification');
    expect(text).toContain('/status/');
  });
});
