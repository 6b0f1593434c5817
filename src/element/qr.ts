/**
 * A QR code encoder small enough for the element's budget: byte mode, error correction level M,
 * versions 1 to 10 (up to 213 bytes: a `tel:` link or a bot's deep link). After Project Nayuki's
 * QR Code generator (MIT), cut down to what the element needs. Pure: no DOM.
 */

/** Error correction codewords per block and blocks, level M, versions 1–10. */
const ECC_PER_BLOCK = [10, 16, 26, 18, 24, 16, 18, 22, 22, 26];
const BLOCKS = [1, 1, 1, 2, 2, 4, 4, 4, 5, 5];

export interface QrCode {
  size: number;
  /** Row by row: `modules[y * size + x]` is dark. */
  modules: boolean[];
}

const bit = (value: number, i: number): boolean => ((value >>> i) & 1) !== 0;

function rawModules(ver: number): number {
  let result = (16 * ver + 128) * ver + 64;
  if (ver >= 2) {
    const align = Math.floor(ver / 7) + 2;
    result -= (25 * align - 10) * align - 55;
    if (ver >= 7) result -= 36;
  }
  return result;
}

function gfMultiply(x: number, y: number): number {
  let z = 0;
  for (let i = 7; i >= 0; i--) {
    z = (z << 1) ^ ((z >>> 7) * 0x11d);
    z ^= ((y >>> i) & 1) * x;
  }
  return z;
}

function eccOf(data: number[], degree: number): number[] {
  const divisor: number[] = new Array<number>(degree - 1).fill(0).concat(1);
  let root = 1;
  for (let i = 0; i < degree; i++) {
    for (let j = 0; j < degree; j++) {
      divisor[j] = gfMultiply(divisor[j]!, root) ^ (j + 1 < degree ? divisor[j + 1]! : 0);
    }
    root = gfMultiply(root, 2);
  }
  const result: number[] = new Array<number>(degree).fill(0);
  for (const b of data) {
    const factor = b ^ result.shift()!;
    result.push(0);
    divisor.forEach((coef, i) => (result[i]! ^= gfMultiply(coef, factor)));
  }
  return result;
}

/**
 * The QR code of `text` (UTF-8), or null past what version 10 holds (213 bytes); `mask` forces a mask
 * pattern (tests), else the least penalised is used.
 */
export function encodeQr(text: string, mask?: number): QrCode | null {
  const bytes = new TextEncoder().encode(text);
  let ver = 1;
  const dataCodewords = (v: number): number =>
    Math.floor(rawModules(v) / 8) - ECC_PER_BLOCK[v - 1]! * BLOCKS[v - 1]!;
  while (4 + (ver < 10 ? 8 : 16) + 8 * bytes.length > dataCodewords(ver) * 8) if (++ver > 10) return null;

  // Data: mode, length, bytes, terminator, padding.
  const bits: number[] = [];
  const push = (value: number, length: number): void => {
    for (let i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
  };
  push(4, 4);
  push(bytes.length, ver < 10 ? 8 : 16);
  bytes.forEach((b) => push(b, 8));
  const capacity = dataCodewords(ver) * 8;
  push(0, Math.min(4, capacity - bits.length));
  push(0, (8 - (bits.length % 8)) % 8);
  for (let pad = 0xec; bits.length < capacity; pad ^= 0xec ^ 0x11) push(pad, 8);
  const data: number[] = [];
  for (let i = 0; i < bits.length; i += 8) data.push(parseInt(bits.slice(i, i + 8).join(''), 2));

  // Blocks with their error correction, interleaved.
  const blockCount = BLOCKS[ver - 1]!;
  const eccLength = ECC_PER_BLOCK[ver - 1]!;
  const raw = Math.floor(rawModules(ver) / 8);
  const shortBlocks = blockCount - (raw % blockCount);
  const shortLength = Math.floor(raw / blockCount);
  const blocks: number[][] = [];
  for (let i = 0, k = 0; i < blockCount; i++) {
    const block = data.slice(k, k + shortLength - eccLength + (i < shortBlocks ? 0 : 1));
    k += block.length;
    const ecc = eccOf(block, eccLength);
    if (i < shortBlocks) block.push(0);
    blocks.push(block.concat(ecc));
  }
  const codewords: number[] = [];
  for (let i = 0; i < blocks[0]!.length; i++)
    blocks.forEach((block, j) => {
      if (i !== shortLength - eccLength || j >= shortBlocks) codewords.push(block[i]!);
    });

  // Function patterns.
  const size = ver * 4 + 17;
  const modules: boolean[] = new Array<boolean>(size * size).fill(false);
  const reserved: boolean[] = new Array<boolean>(size * size).fill(false);
  const set = (x: number, y: number, dark: boolean): void => {
    modules[y * size + x] = dark;
    reserved[y * size + x] = true;
  };
  for (let i = 0; i < size; i++) {
    set(6, i, i % 2 === 0);
    set(i, 6, i % 2 === 0);
  }
  for (const [cx, cy] of [
    [3, 3],
    [size - 4, 3],
    [3, size - 4],
  ] as const)
    for (let dy = -4; dy <= 4; dy++)
      for (let dx = -4; dx <= 4; dx++) {
        const d = Math.max(Math.abs(dx), Math.abs(dy));
        const x = cx + dx;
        const y = cy + dy;
        if (x >= 0 && x < size && y >= 0 && y < size) set(x, y, d !== 2 && d !== 4);
      }
  if (ver > 1) {
    const count = Math.floor(ver / 7) + 2;
    const step = Math.ceil((ver * 4 + 4) / (count * 2 - 2)) * 2;
    const positions = [6];
    for (let pos = size - 7; positions.length < count; pos -= step) positions.splice(1, 0, pos);
    for (const ax of positions)
      for (const ay of positions) {
        // Not over the finders.
        if ((ax === 6 && ay === 6) || (ax === 6 && ay === size - 7) || (ax === size - 7 && ay === 6))
          continue;
        for (let dy = -2; dy <= 2; dy++)
          for (let dx = -2; dx <= 2; dx++) set(ax + dx, ay + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
      }
  }
  const drawFormat = (m: number): void => {
    // Level M is 00.
    let rem = m;
    for (let i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
    const f = ((m << 10) | rem) ^ 0x5412;
    for (let i = 0; i <= 5; i++) set(8, i, bit(f, i));
    set(8, 7, bit(f, 6));
    set(8, 8, bit(f, 7));
    set(7, 8, bit(f, 8));
    for (let i = 9; i < 15; i++) set(14 - i, 8, bit(f, i));
    for (let i = 0; i < 8; i++) set(size - 1 - i, 8, bit(f, i));
    for (let i = 8; i < 15; i++) set(8, size - 15 + i, bit(f, i));
    set(8, size - 8, true);
  };
  drawFormat(0);
  if (ver >= 7) {
    let rem = ver;
    for (let i = 0; i < 12; i++) rem = (rem << 1) ^ ((rem >>> 11) * 0x1f25);
    const v = (ver << 12) | rem;
    for (let i = 0; i < 18; i++) {
      const a = size - 11 + (i % 3);
      const b = Math.floor(i / 3);
      set(a, b, bit(v, i));
      set(b, a, bit(v, i));
    }
  }

  // The codewords, two columns at a time, zigzag from the bottom right.
  let i = 0;
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let vert = 0; vert < size; vert++)
      for (let j = 0; j < 2; j++) {
        const x = right - j;
        const y = ((right + 1) & 2) === 0 ? size - 1 - vert : vert;
        if (!reserved[y * size + x] && i < codewords.length * 8) {
          modules[y * size + x] = bit(codewords[i >>> 3]!, 7 - (i & 7));
          i++;
        }
      }
  }

  const masked = (m: number): boolean[] =>
    modules.map((dark, k) => {
      if (reserved[k]) return dark;
      const x = k % size;
      const y = (k - x) / size;
      const flip = [
        (x + y) % 2,
        y % 2,
        x % 3,
        (x + y) % 3,
        (Math.floor(x / 3) + Math.floor(y / 2)) % 2,
        ((x * y) % 2) + ((x * y) % 3),
        (((x * y) % 2) + ((x * y) % 3)) % 2,
        (((x + y) % 2) + ((x * y) % 3)) % 2,
      ][m];
      return dark !== (flip === 0);
    });
  let best = mask ?? 0;
  if (mask === undefined) {
    let bestScore = Infinity;
    for (let m = 0; m < 8; m++) {
      drawFormat(m);
      const score = penalty(masked(m), size);
      if (score < bestScore) [best, bestScore] = [m, score];
    }
  }
  drawFormat(best);
  return { size, modules: masked(best) };
}

/**
 * The spec's penalty without its finder-like rule (N3): runs of five or more, 2×2 blocks, and the
 * dark/light balance. Enough to avoid the worst masks; every mask decodes.
 */
function penalty(modules: boolean[], size: number): number {
  let score = 0;
  for (let a = 0; a < size; a++) {
    let rowRun = 0;
    let colRun = 0;
    for (let b = 0; b < size; b++) {
      rowRun = b > 0 && modules[a * size + b] === modules[a * size + b - 1] ? rowRun + 1 : 1;
      colRun = b > 0 && modules[b * size + a] === modules[(b - 1) * size + a] ? colRun + 1 : 1;
      score += (rowRun === 5 ? 3 : rowRun > 5 ? 1 : 0) + (colRun === 5 ? 3 : colRun > 5 ? 1 : 0);
      const k = a * size + b;
      if (a > 0 && b > 0) {
        const c = modules[k];
        if (c === modules[k - 1] && c === modules[k - size] && c === modules[k - size - 1]) score += 3;
      }
    }
  }
  const dark = modules.filter(Boolean).length;
  return score + Math.floor(Math.abs(dark * 20 - modules.length * 10) / modules.length) * 10;
}

/** The code as an SVG drawing (dark modules on a light square with the quiet zone of 4), or null as encodeQr. */
export function qrSvg(text: string, label: string): string | null {
  const code = encodeQr(text);
  if (!code) return null;
  const { size, modules } = code;
  let path = '';
  modules.forEach((dark, k) => {
    if (dark) path += `M${(k % size) + 4} ${Math.floor(k / size) + 4}h1v1h-1z`;
  });
  const escaped = label.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return (
    `<svg role="img" aria-label="${escaped}" viewBox="0 0 ${size + 8} ${size + 8}" shape-rendering="crispEdges">` +
    `<rect width="100%" height="100%" fill="#fff"/><path d="${path}" fill="#000"/></svg>`
  );
}
