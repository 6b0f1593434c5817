import { describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';

/** The browser client's weight on a page: bundled, minified and gzipped, as a host's bundler would ship it. */
const MAX_GZIPPED_BYTES = 6 * 1024;

async function gzippedSize(
  entry: string,
  external: string[] = [],
): Promise<{ raw: number; gzipped: number }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    external,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.contents;
  return { raw: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength };
}

describe('nestjs-phone-verification/client size', () => {
  it(`is at most ${MAX_GZIPPED_BYTES} bytes minified and gzipped, and needs no Node built-in`, async () => {
    const client = await gzippedSize('src/client/index.ts');
    console.log(`client: ${client.raw} B minified, ${client.gzipped} B gzipped`);
    expect(client.gzipped).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
    // With the React hook (React itself is the host's).
    const withHook = await gzippedSize('src/client/react/index.ts', ['react']);
    console.log(`client + react hook: ${withHook.raw} B minified, ${withHook.gzipped} B gzipped`);
    expect(withHook.gzipped).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
  });
});
