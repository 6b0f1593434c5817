import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { VerificationSandbox } from '../../src/testing/index.js';
import { call } from '../support/verification-app.js';

const root = resolve(process.cwd());

/**
 * Packs the package (`npm pack`, so `files` and `exports` are what users get), installs it into a
 * fresh app folder, and completes verifications through the four client routes alone.
 */
describe('the built package in a fresh NestJS app', () => {
  let dir: string;
  let sb: VerificationSandbox;
  let child: ChildProcess;
  let url: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist', 'index.js')))
      execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
    dir = mkdtempSync(join(tmpdir(), 'pv-host-'));
    const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {
      cwd: root,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop()!;
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, 'nestjs-phone-verification'), { recursive: true });
    execFileSync('tar', [
      '-xzf',
      join(dir, tarball),
      '-C',
      join(modules, 'nestjs-phone-verification'),
      '--strip-components=1',
    ]);
    // The app's other dependencies: the same installed packages the repository uses.
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry.startsWith('.') || entry === 'nestjs-phone-verification') continue;
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    }
    copyFileSync(join(root, 'test/package/host-app.fixture.mjs'), join(dir, 'main.mjs'));
    sb = await VerificationSandbox.start({ port: 0 });
    child = spawn(
      process.execPath,
      [join(dir, 'main.mjs'), sb.url, sb.demoAccount.apiKey, sb.demoAccount.apiSecret],
      {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, NODE_OPTIONS: '' },
      },
    );
    const ready = new Promise<number>((resolvePort, reject) => {
      child.once('exit', (code) => reject(new Error(`host app exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed.port === 'number') resolvePort(parsed.port);
        else lines.push(parsed);
      });
    });
    url = `http://127.0.0.1:${await ready}`;
  }, 120_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const start = async (phone: string, method: string) => {
    const res = await call(url, 'POST', '/verification/start', { phone_number: phone, method });
    expect(res.status).toBe(201);
    return {
      id: res.body.verification_id as string,
      body: res.body,
      requestId: sb.sessionsFor(phone)[0].request_id as string,
    };
  };
  const status = async (id: string) => (await call(url, 'GET', `/verification/status/${id}`)).body;

  it('ships only dist, README and docs', () => {
    const shipped = readdirSync(join(dir, 'node_modules', 'nestjs-phone-verification')).sort();
    expect(shipped).toEqual(expect.arrayContaining(['dist', 'package.json', 'README.md']));
    expect(shipped).not.toContain('src');
    expect(shipped).not.toContain('test');
  });

  it('SMS', async () => {
    const { id, requestId } = await start('+79123400001', 'sms');
    await sb.deliver(requestId);
    const check = await call(url, 'POST', '/verification/check', {
      verification_id: id,
      code: sb.getSession(requestId)!.code,
    });
    expect(check.body).toMatchObject({ verified: true });
  });

  it('reverse flash call', async () => {
    const { id, requestId } = await start('+79123400002', 'reverse_flash_call');
    await sb.call(requestId, '+79123400002');
    expect((await status(id)).status).toBe('verified');
  });

  it('msgr2_bot', async () => {
    const { id, requestId, body } = await start('+79123400003', 'msgr2_bot');
    expect(typeof body.deep_link).toBe('string');
    await sb.share(requestId, '+79123400003');
    expect((await status(id)).awaiting_code).toBe(true);
    const check = await call(url, 'POST', '/verification/check', {
      verification_id: id,
      code: sb.getSession(requestId)!.code,
    });
    expect(check.body).toMatchObject({ verified: true });
  });

  it('operator_id with the SMS fallback', async () => {
    const { id, requestId } = await start('+79123400004', 'operator_id');
    await sb.operator(requestId, 'fallback');
    expect((await status(id)).awaiting_code).toBe(true);
    const check = await call(url, 'POST', '/verification/check', {
      verification_id: id,
      code: sb.getSession(requestId)!.code,
    });
    expect(check.body).toMatchObject({ status: 'sent', verified: false });
    await sb.advance(3000);
    expect((await status(id)).status).toBe('verified');
    expect(lines).toEqual(
      expect.arrayContaining([
        { event: 'verification.code_required', method: 'operator_id' },
        { event: 'verification.verified', method: 'operator_id' },
      ]),
    );
  });
});
