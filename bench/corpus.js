/**
 * The benchmark corpus: real photographs from Debian's lomiri-wallpapers and
 * mate-backgrounds packages, fetched with `apt-get download` at bench time (never committed)
 * and cached in `.bench/corpus/`.
 *
 * Pixels are never resampled: an original is a native-resolution crop of one photograph, or,
 * where no photograph is large enough, a 2x2 mosaic of native-resolution crops of four. So
 * the corpus has real photographic detail per pixel, as camera files do; upscaling smaller
 * wallpapers would make them unrealistically smooth (and cheap to decode). JPEGs are encoded
 * at quality 92 with 4:2:0 chroma, about what cameras write; WebP at 90.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

const PACKAGES = ['lomiri-wallpapers-16.04', 'lomiri-wallpapers-20.04', 'mate-backgrounds'];

/** Photographs used, with their authors and licences as the packages' copyright files give them. */
const PHOTOS = {
  kleiber: ['usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg', 'Lukas Baubkus, CC-BY-SA-3.0'],
  seeding: ['usr/share/backgrounds/seeding_by_Clements_Engelhardt.jpg', 'Clemens Engelhardt, CC0-1.0'],
  elephants: ['usr/share/backgrounds/mate/abstract/Elephants_5640x3172.jpg', 'Wyng Stancikaite, GPL-2+'],
  sunset: ['usr/share/backgrounds/sunset_by_Aitzol_Berasategi.jpg', 'Aitzol Berasategi, CC-BY-4.0'],
  bridge: ['usr/share/backgrounds/Bridge_by_Sander_Klootwijk.jpg', 'Sander Klootwijk, CC-BY-SA-4.0'],
  dragonfly: ['usr/share/backgrounds/Dragonfly_by_Bolly.jpg', '"Bolly", CC-BY-SA-4.0'],
  picos: ['usr/share/backgrounds/picosdeeuropa_by_Aitzol_Berasategi.jpg', 'Aitzol Berasategi, CC-BY-4.0'],
  aitzgorri: ['usr/share/backgrounds/aitzgorri_by_Aitzol_Berasategi.jpg', 'Aitzol Berasategi, CC-BY-4.0'],
  life: ['usr/share/backgrounds/life_by_Aitzol_Berasategi.jpg', 'Aitzol Berasategi, CC-BY-4.0'],
  umang: ['usr/share/backgrounds/umang_by_Abhishek_Mudgal.jpg', 'Abhishek Mudgal, CC-BY-SA-4.0'],
};

/** [file name, photographs (one: a crop; four: a mosaic), width, height]. */
const PLAN = [
  ['kleiber.jpg', ['kleiber'], 5120, 2880],
  ['seeding.jpg', ['seeding'], 5120, 2880],
  ['elephants.jpg', ['elephants'], 5120, 2880],
  ['mosaic-a.jpg', ['sunset', 'bridge', 'dragonfly', 'picos'], 5120, 2880],
  ['mosaic-b.jpg', ['aitzgorri', 'life', 'umang', 'kleiber'], 5120, 2880],
  ['mosaic-c.jpg', ['picos', 'sunset', 'life', 'seeding'], 5120, 2880],
  ['kleiber.png', ['kleiber'], 5120, 2880],
  ['seeding.png', ['seeding'], 5120, 2880],
  ['mosaic-a.png', ['sunset', 'bridge', 'dragonfly', 'picos'], 5120, 2880],
  ['elephants.webp', ['elephants'], 5120, 2880],
  ['mosaic-b.webp', ['aitzgorri', 'life', 'umang', 'kleiber'], 5120, 2880],
  ['seeding.webp', ['seeding'], 5120, 2880],
  ['mosaic-24mp-a.jpg', ['kleiber', 'seeding', 'elephants', 'sunset'], 6000, 4000],
  ['mosaic-24mp-b.jpg', ['bridge', 'dragonfly', 'picos', 'aitzgorri'], 6000, 4000],
  ['mosaic-24mp-c.jpg', ['life', 'umang', 'elephants', 'seeding'], 6000, 4000],
  ['mosaic-24mp-d.jpg', ['sunset', 'kleiber', 'picos', 'dragonfly'], 6000, 4000],
  ['mosaic-24mp-e.jpg', ['elephants', 'aitzgorri', 'bridge', 'life'], 6000, 4000],
  ['mosaic-24mp-f.jpg', ['umang', 'seeding', 'kleiber', 'bridge'], 6000, 4000],
];

/** A native-resolution `width` x `height` crop from the centre of `file`. */
async function crop(file, width, height) {
  const { width: w, height: h } = await sharp(file).metadata();
  if (w < width || h < height) throw new Error(`${file} is ${w}x${h}, smaller than ${width}x${height}`);
  return sharp(file)
    .extract({ left: (w - width) >> 1, top: (h - height) >> 1, width, height })
    .raw()
    .toBuffer();
}

async function compose(files, width, height) {
  if (files.length === 1) return sharp(await crop(files[0], width, height), { raw: { width, height, channels: 3 } });
  const [tw, th] = [width / 2, height / 2];
  const tiles = await Promise.all(files.map((file) => crop(file, tw, th)));
  return sharp({ create: { width, height, channels: 3, background: '#000' } }).composite(
    tiles.map((tile, i) => ({
      input: tile,
      raw: { width: tw, height: th, channels: 3 },
      left: (i % 2) * tw,
      top: (i >> 1) * th,
    })),
  );
}

/**
 * Builds (or reuses) the corpus under `root`; returns { mixed, mp24, artwork }: a folder with
 * the mixed originals, one with only the 24-megapixel JPEGs, and one with an unmodified
 * high-entropy photograph of a painting.
 */
export async function buildCorpus(root) {
  const corpus = path.join(root, 'corpus-v4');
  const mixed = path.join(corpus, 'mixed');
  const mp24 = path.join(corpus, '24mp');
  const artwork = path.join(corpus, 'artwork');
  const done = path.join(corpus, 'SOURCES.txt');
  if (existsSync(done)) return { mixed, mp24, artwork };

  const debs = path.join(root, 'debs');
  mkdirSync(debs, { recursive: true });
  console.error(`corpus: apt-get download ${PACKAGES.join(' ')}`);
  execFileSync('apt-get', ['download', ...PACKAGES], { cwd: debs, stdio: ['ignore', 'ignore', 'inherit'] });
  const extracted = path.join(root, 'extracted');
  for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) {
    execFileSync('dpkg-deb', ['-x', path.join(debs, deb), extracted]);
  }
  rmSync(corpus, { recursive: true, force: true });
  mkdirSync(mixed, { recursive: true });
  mkdirSync(mp24, { recursive: true });
  mkdirSync(artwork, { recursive: true });
  const sources = [];
  for (const [name, photos, width, height] of PLAN) {
    const image = await compose(
      photos.map((photo) => path.join(extracted, PHOTOS[photo][0])),
      width,
      height,
    );
    const format = path.extname(name).slice(1);
    if (format === 'jpg') image.jpeg({ quality: 92 });
    if (format === 'webp') image.webp({ quality: 90 });
    if (format === 'png') image.png();
    const target = path.join(width === 6000 ? mp24 : mixed, name);
    await image.toFile(target);
    const credits = photos.map((photo) => `${photo} (${PHOTOS[photo][1]})`).join(', ');
    const crops = photos.length === 1 ? 'native crop of' : '2x2 mosaic of native crops of';
    sources.push(`${name}: ${width}x${height}, ${crops} ${credits}`);
    console.error(`corpus: ${sources.at(-1)}`);
  }
  // The unmodified 16 MB photograph of a painting, four times: a high-entropy JPEG as it came.
  for (let i = 1; i <= 4; i++)
    execFileSync('cp', [path.join(extracted, PHOTOS.elephants[0]), path.join(artwork, `elephants-${i}.jpg`)]);
  sources.push('artwork/elephants-N.jpg: the original Elephants_5640x3172.jpg (16 MB), unmodified, four copies');
  // Three of the 24 MP JPEGs belong to the mixed batch too.
  for (const file of readdirSync(mp24).sort().slice(0, 3)) execFileSync('cp', [path.join(mp24, file), mixed]);
  writeFileSync(done, `${sources.join('\n')}\n`);
  return { mixed, mp24, artwork };
}
