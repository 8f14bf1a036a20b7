import sharp from 'sharp';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
const [dir, n] = [process.argv[2], Number(process.argv[3])];
const base = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 120, g: 90, b: 60 } } })
  .composite([{ input: Buffer.from('<svg width="64" height="48"><circle cx="20" cy="20" r="14" fill="#3a7"/></svg>'), top: 0, left: 0 }])
  .jpeg({ quality: 85 }).toBuffer();
// Distinct bytes per original: a COM segment after SOI with its number.
for (let i = 0; i < n; i++) {
  const folder = path.join(dir, `f${String(Math.floor(i / 1000)).padStart(3, '0')}`);
  if (i % 1000 === 0) mkdirSync(folder, { recursive: true });
  const text = Buffer.from(`original ${i}`);
  const com = Buffer.alloc(4); com[0] = 0xff; com[1] = 0xfe; com.writeUInt16BE(text.length + 2, 2);
  writeFileSync(path.join(folder, `art-${i}.jpg`), Buffer.concat([base.subarray(0, 2), com, text, base.subarray(2)]));
}
